import type { ConfigInput } from '../../src/config/config.js';
import { freePort } from '../support/free-port.js';
import { redisUrl } from '../support/redis.js';
import { optIn, startStack, type Stack } from '../support/stack.js';
import { until } from '../support/wait.js';

export { freePort, optIn };

/** The simulator and Reflex on it, in-process, with the HTTP server on a free port. */
export interface ObservabilityBed extends Stack {
  /** `http://127.0.0.1:PORT` of Reflex's HTTP server. */
  url: string;
}

/** Starts the simulator (with `instances`, opted in unless said) and `startReflex` with the given rules. */
export async function startObservabilityBed(opts: {
  rulesDir: string;
  instances: { name: string; optIn?: boolean }[];
  config?: Partial<ConfigInput>;
}): Promise<ObservabilityBed> {
  const stack = await startStack({
    redisUrl: redisUrl(),
    label: 'obs',
    rules: opts.rulesDir,
    simulator: { timings: { startMs: 100, stopMs: 200, stopHookMs: 200, crashLoopUptimeMs: 300 } },
    instances: opts.instances.map((i) => ({ name: i.name, config: i.optIn === false ? {} : optIn })),
    config: { httpPort: await freePort(), ...opts.config },
    connected: false,
  });
  if (!stack.reflex.http) {
    await stack.stop();
    throw new Error('the HTTP server did not start');
  }
  return {
    ...stack,
    url: stack.reflex.http.url,
    async replica(overrides = {}, logger) {
      return stack.replica({ httpPort: await freePort(), ...overrides }, logger);
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
export function waitForMetric(
  url: string,
  name: string,
  labels: Record<string, string>,
  done: (v: number) => boolean,
  timeoutMs = 15_000,
): Promise<number> {
  return until(
    `${name}${JSON.stringify(labels)}`,
    async () => {
      const v = valueOf(await scrape(url), name, labels);
      if (!done(v)) throw new Error(`it is ${v}`);
      return v;
    },
    timeoutMs,
    100,
  );
}
