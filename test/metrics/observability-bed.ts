import { pino } from 'pino';
import { parseConfig, type ConfigInput } from '../../src/config/config.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { freePort } from '../support/free-port.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';

export { freePort };

/** The simulator and Reflex on it, in-process, with the HTTP server on a free port. */
export interface ObservabilityBed {
  sim: RunningSimulator;
  reflex: ReflexHandle;
  /** `http://127.0.0.1:PORT` of Reflex's HTTP server. */
  url: string;
  prefix: string;
  /** Another Reflex on the same simulator, Redis and prefix (a replica). */
  replica(overrides?: Partial<ConfigInput>): Promise<ReflexHandle>;
  stop(): Promise<void>;
}

export const optIn = { 'user.reflex.autorestart': 'true' };

/** Starts the simulator (with `instances`, opted in unless said) and `startReflex` with the given rules. */
export async function startObservabilityBed(opts: { rulesDir: string; instances: { name: string; optIn?: boolean }[]; config?: Partial<ConfigInput> }): Promise<ObservabilityBed> {
  const sim = await startSimulator({ instances: 0, timings: { startMs: 100, stopMs: 200, stopHookMs: 200, crashLoopUptimeMs: 300 } });
  for (const i of opts.instances) sim.controls.addInstance({ name: i.name, config: i.optIn === false ? {} : optIn });
  const prefix = uniquePrefix('obs');
  const base: ConfigInput = {
    target: `unix://${sim.socketPath}`,
    redisUrl: redisUrl(),
    rulesDir: opts.rulesDir,
    prefix,
    resyncIntervalMs: 0,
    resyncGraceMs: 100,
    leaseTtlMs: 600,
    actionAttempts: 3,
    logLevel: 'silent',
  };
  const logger = pino({ level: 'silent' });
  const reflex = await startReflex(parseConfig({ ...base, httpPort: await freePort(), ...opts.config }), logger);
  if (!reflex.http) throw new Error('the HTTP server did not start');
  const replicas: ReflexHandle[] = [];
  return {
    sim,
    reflex,
    url: reflex.http.url,
    prefix,
    async replica(overrides = {}) {
      const r = await startReflex(parseConfig({ ...base, httpPort: await freePort(), ...overrides }), logger);
      replicas.push(r);
      return r;
    },
    async stop() {
      for (const r of [...replicas, reflex]) await r.stop();
      await sim.stop();
    },
  };
}

/** One sample of the exposition text: `name{labels} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus' text exposition format (enough of it for our own metrics). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Scrapes /metrics over HTTP. */
export async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return parseExposition(await res.text());
}

/** The value of the sample with this name whose labels include `labels`; 0 when there is none yet. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const matching = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.reduce((sum, s) => sum + s.value, 0);
}

/** Scrapes until `done` holds for the value of a metric, and returns that value. */
export async function waitForMetric(url: string, name: string, labels: Record<string, string>, done: (v: number) => boolean, timeoutMs = 15_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  let v = NaN;
  while (Date.now() < until) {
    v = valueOf(await scrape(url), name, labels);
    if (done(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name}${JSON.stringify(labels)} is ${v} after ${timeoutMs} ms`);
}
