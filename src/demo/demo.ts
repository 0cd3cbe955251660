import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { startReflex } from '../app/start-reflex.js';
import { InstanceClient } from '../client/client.js';
import { parseTarget } from '../client/target.js';
import { parseConfig } from '../config/config.js';
import { keySpace } from '../redis/key-space.js';
import { connectRedis } from '../redis/connect.js';
import { scanKeys } from '../redis/scan-keys.js';
import { freePort } from '../redis/free-port.js';
import { startPrivateRedis, type PrivateRedis } from '../redis/private-redis.js';
import { startSimulator } from '../simulator/simulator.js';
import type { AuditRecord } from '../audit/audit-log.js';
import { AuditFeed, formatAuditLine } from './audit-feed.js';
import { TerminalReceiver } from './terminal-receiver.js';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** How long to run, in ms. Default 40 000. */
  durationMs?: number;
  /** Use this Redis instead of starting a private redis-server. */
  redisUrl?: string;
  /** Where the feed goes. Default process.stdout. */
  out?: NodeJS.WritableStream;
  colour?: boolean;
  logger: Logger;
  /** Resolves early when aborted (Ctrl-C). */
  signal?: AbortSignal;
}

/** What the demo saw, for its summary and for tests. */
export interface DemoSummary {
  remediations: string[];
  leftAlone: string[];
  quarantined: string[];
  alerts: string[];
  records: number;
}

/** The bundled rules folder, wherever the package is installed. */
export const bundledRulesDir = fileURLToPath(new URL('../../rules', import.meta.url));

const optIn = { 'user.reflex.autorestart': 'true' };

/**
 * The main job on the embedded default: a private Redis, the simulator with a handful of instances,
 * the worker with the bundled rules, and a scripted series of faults (a crash, an Error 112, a user
 * stop, a crash of an instance that did not opt in, a crash loop), shown as they happen.
 */
export async function runDemo(opts: DemoOptions): Promise<DemoSummary> {
  const out = opts.out ?? process.stdout;
  const say = (line: string) => out.write(`${line}\n`);
  const durationMs = opts.durationMs ?? 40_000;
  // The bundled rule reads its crash-loop back-off from here, so a loop reaches quarantine within the demo.
  process.env.REFLEX_CRASHLOOP_BACKOFF_MS ??= '1000';
  // Whatever started is stopped, newest first, also when a later part fails to start (no Redis).
  const stops: (() => Promise<void> | void)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    let privateRedis: PrivateRedis | undefined;
    if (!opts.redisUrl) stops.push(() => privateRedis?.stop());
    const redisUrl = opts.redisUrl ?? (privateRedis = await startPrivateRedis()).url;
    const sim = await startSimulator({
      instances: 0,
      timings: { startMs: 150, stopMs: 400, stopHookMs: 300, crashLoopUptimeMs: 1500 },
    });
    stops.push(() => sim.stop());
    const c = sim.controls;
    for (const name of ['web-1', 'web-2', 'web-3', 'db-1']) c.addInstance({ name, config: optIn });
    c.addInstance({ name: 'batch-1', config: {} });

    const prefix = `demo-${randomUUID().slice(0, 8)}`;
    // Someone else's Redis is left as it was found: every key the demo wrote under its prefix goes
    // once Reflex and the feed are stopped (pushed before they start, so it runs after they stop).
    if (opts.redisUrl)
      stops.push(() =>
        forgetPrefix(redisUrl, prefix).catch(
          (err: unknown) => void say(`!!! the demo's keys (${prefix}:…) stay in that Redis: ${(err as Error).message}`),
        ),
      );
    const target = `unix://${sim.socketPath}`;
    // A port of its own: a `reflex run` (or another demo) on this host may hold the default 9464.
    const httpPort = await freePort();
    // The bundled rules are type-checked by Reflex's own CI: checking them again only delays the demo.
    const config = parseConfig({
      target,
      redisUrl,
      rulesDir: bundledRulesDir,
      prefix,
      resyncIntervalMs: 2_000,
      logLevel: 'warn',
      httpPort,
      typecheckRules: false,
      // The demo's Redis was just started or named by the user: one that does not answer is a mistake to say at once.
      redisStartupWaitMs: 0,
      // The demo's trail is shown as it happens and gone with it: nothing written to disk.
      history: { store: 'none' },
    });
    const summary: DemoSummary = { remediations: [], leftAlone: [], quarantined: [], alerts: [], records: 0 };
    // The example receiver: a signed webhook on 127.0.0.1 that prints what a chat channel would get.
    const receiver = new TerminalReceiver(say);
    const notify = await receiver.start();
    stops.push(() => receiver.stop());
    const reflex = await withEnv({ ...notify.env, REFLEX_NOTIFY: JSON.stringify(notify.config) }, () => startReflex(config, opts.logger));
    stops.push(() => reflex.stop());
    const feedRedis = await connectRedis(redisUrl);
    stops.push(() => feedRedis.disconnect());
    const feed = new AuditFeed(feedRedis, keySpace(prefix).audit, (r) => {
      summary.records++;
      collect(summary, r);
      say(formatAuditLine(r, opts.colour ?? false));
    });
    const feeding = feed.run();
    stops.push(async () => {
      feed.stop();
      await feeding;
    });
    const client = new InstanceClient(parseTarget(target));
    stops.push(() => client.close());

    say(
      `Reflex demo: simulator at ${sim.socketPath}, Redis ${privateRedis ? `private at ${redisUrl}` : redisUrl}, rules ${bundledRulesDir}, metrics at ${reflex.http?.url ?? ''}/metrics`,
    );
    say('Instances web-1, web-2, web-3, db-1 opted in (user.reflex.autorestart=true); batch-1 did not.\n');
    const steps: [number, string, () => Promise<void> | void][] = [
      [1_500, 'crash web-1 (kill -9 of its init)', () => c.crash('web-1')],
      [3_000, 'web-2 starts crash-looping (its init dies 1.5 s after each start)', () => (c.crashLoop('web-2', 1_500), c.crash('web-2'))],
      [6_000, 'db-1 goes into Error (112); no event announces it, the periodic resync finds it', () => c.setError('db-1')],
      [
        10_000,
        'a user stops web-3 through the API (lxc stop)',
        async () => void (await (await client.changeState('web-3', { action: 'stop' })).wait()),
      ],
      [13_000, 'crash batch-1, which did not opt in', () => c.crash('batch-1')],
    ];
    const started = Date.now();
    const timers = steps.map(([at, what, act]) =>
      setTimeout(() => {
        say(`\n>>> ${what}`);
        Promise.resolve(act()).catch((err) => say(`!!! ${(err as Error).message}`));
      }, at),
    );
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, durationMs);
      opts.signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
    timers.forEach(clearTimeout);
    await stopAll();

    say(`\nSummary after ${Math.round((Date.now() - started) / 1000)} s (${summary.records} audit records, prefix ${prefix}):`);
    say(`  remediated:  ${countedList(summary.remediations) || 'none'}`);
    say(`  left alone:  ${[...new Set(summary.leftAlone)].join(', ') || 'none'}`);
    say(`  quarantined: ${summary.quarantined.join(', ') || 'none'}`);
    for (const a of summary.alerts) say(`  alert:       ${a}`);
    return summary;
  } finally {
    await stopAll();
  }
}

/** Deletes every key of `prefix` (`<prefix>:…` and the hash-tagged `{<prefix>:…}…`). */
async function forgetPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = await connectRedis(redisUrl);
  try {
    for (const pattern of [`${prefix}:*`, `{${prefix}:*`]) for await (const key of scanKeys(redis, pattern)) await redis.unlink(key);
  } finally {
    redis.disconnect();
  }
}

/** Runs `fn` with these environment variables set, then puts the environment back as it was. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** "web-1, web-2 ×5" */
function countedList(names: string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => (c > 1 ? `${n} ×${c}` : n)).join(', ');
}

function collect(s: DemoSummary, r: AuditRecord): void {
  const inst = r.instance ?? '?';
  const result = (r as { result?: string }).result;
  if (r.type === 'outcome' && result === 'done') s.remediations.push(inst);
  const deliberate = r.summary.includes('intent is requested') || r.summary.includes('not opted in');
  if (r.type === 'decision' && r.summary.startsWith('skipped:') && deliberate)
    s.leftAlone.push(`${inst} (${r.summary.includes('requested') ? 'stopped by a user' : 'not opted in'})`);
  if ((r.type as string) === 'alert') {
    s.alerts.push(r.summary);
    if (r.summary.includes('quarantine')) s.quarantined.push(inst);
  }
}
