import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quantile } from '../bench/support.js';
import { drained, eventQueueCounts, FrameWitness, hostEnv, rulesDir } from '../chaos/support.js';
import { sleep, until } from '../test/support/wait.js';
import { InstanceClient } from '../src/client/client.js';
import { parseTarget } from '../src/client/target.js';
import type { Instance } from '../src/client/instance.js';
import { redisFromUrl } from '../src/redis/connect.js';
import { freePort } from '../src/redis/free-port.js';
import { keySpace } from '../src/redis/key-space.js';
import { startPrivateRedis } from '../src/redis/private-redis.js';
import { startSimulator } from '../src/simulator/simulator.js';
import { startReflexProcess } from '../test/support/reflex-process.js';
import { AuditFollower } from './audit-follower.js';
import { ApiLoad } from './load.js';
import { soakMarkdown, trend, withSoakSection } from './report.js';
import { heapUsedMb, redisReading, rssMb, type Sample } from './sampler.js';

/** What `npm run soak` was asked for (soak/run.ts reads it from the command line; docs/soak.md). */
export interface SoakOptions {
  minutes: number;
  /** API calls a second. */
  rate: number;
  /** The retention windows Reflex is given; the steady state is the part of the run after it. */
  retentionMs: number;
  /** Write the series and verdicts as JSON there. */
  out: string | undefined;
  /** Replace the soak section of BENCHMARKS.md. */
  writeBenchmarks: boolean;
  /** Fail when memory is not flat in the steady state. */
  assertFlat: boolean;
  /** Run Reflex with --no-typecheck. */
  noTypecheck: boolean;
}

const INSTANCES = 200;
const SAMPLE_EVERY_MS = 10_000;
const CRASH_EVERY_MS = 60_000;
const HEAL_TIMEOUT_MS = 60_000;
const root = fileURLToPath(new URL('..', import.meta.url));
const log = (line: string) => process.stdout.write(`soak: ${line}\n`);

/**
 * Runs the soak and prints what it saw; true when it passed (every crash healed once, nothing
 * lost, no error, and memory flat when asserted).
 */
export async function runSoak(o: SoakOptions): Promise<boolean> {
  const { minutes, rate, retentionMs } = o;
  // Bounded: whatever happens, the run ends.
  setTimeout(
    () => {
      log('FAIL — the run exceeded its time limit');
      process.exit(1);
    },
    minutes * 60_000 + 10 * 60_000,
  ).unref();

  /** The retention Reflex is given, as config keys (docs/operations.md). */
  const retentionConfig: Record<string, number> = {
    auditMaxAgeMs: retentionMs,
    archiveMaxAgeMs: retentionMs,
    rejectedMaxAgeMs: retentionMs,
    jobsKeepCompletedMs: retentionMs,
    jobsKeepFailedMs: retentionMs,
  };

  const startedAt = new Date();
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'reflex-soak-'));
  const configFile = join(dir, 'config.json');
  writeFileSync(configFile, `${JSON.stringify(retentionConfig, null, 2)}\n`);
  const prefix = 'soak';
  const keys = keySpace(prefix);
  const redis = await startPrivateRedis({ appendonly: true });
  const sim = await startSimulator({ instances: INSTANCES });
  const target = `unix://${sim.socketPath}`;
  const client = new InstanceClient(parseTarget(target));
  const all = (await client.listInstances({ recursion: 1 })) as Instance[];
  const optedIn = all.filter((i) => i.config['user.reflex.autorestart'] === 'true').map((i) => i.name);
  const others = all.filter((i) => i.config['user.reflex.autorestart'] !== 'true').map((i) => i.name);
  const httpPort = await freePort();
  const reflex = startReflexProcess(
    [
      'run',
      '--config',
      configFile,
      '--target',
      target,
      '--redis',
      redis.url,
      '--prefix',
      prefix,
      '--rules',
      rulesDir,
      '--http-port',
      String(httpPort),
      ...(o.noTypecheck ? ['--no-typecheck'] : []),
    ],
    { ...hostEnv(), REFLEX_LOG_LEVEL: 'info' },
    { cleanEnv: true },
  );
  const probe = redisFromUrl(redis.url);
  const witness = new FrameWitness(sim);
  const follower = new AuditFollower(redisFromUrl(redis.url), keys.audit);
  const load = new ApiLoad(client, sim, others, rate);
  const samples: Sample[] = [];
  const crashes: { instance: string; atS: number; healedMs?: number }[] = [];
  const problems = { errors: [] as string[], errorCount: 0, warnings: 0, warningSamples: [] as string[] };
  let verdicts: string[] = [];
  let ok = false;

  /** Counts and empties Reflex's log lines so far (the process keeps them until read). */
  function readLogs(): void {
    for (const l of reflex.logs.splice(0)) {
      const level = Number(l.level ?? 0);
      const line = `${String(l.msg)}${l.err ? `: ${JSON.stringify(l.err).slice(0, 300)}` : ''}`;
      if (level >= 50) {
        problems.errorCount++;
        if (problems.errors.length < 10) problems.errors.push(line);
      } else if (level >= 40) {
        problems.warnings++;
        if (problems.warningSamples.length < 10 && !problems.warningSamples.includes(String(l.msg))) problems.warningSamples.push(String(l.msg));
      }
    }
  }

  async function crashOne(instance: string, loadStart: number): Promise<void> {
    const entry: (typeof crashes)[number] = { instance, atS: (Date.now() - loadStart) / 1000 };
    crashes.push(entry);
    const startsBefore = sim.controls.calls(instance, 'start');
    const t0 = performance.now();
    sim.controls.crash(instance);
    try {
      await until(
        `${instance} Running again`,
        () => sim.controls.statusCode(instance) === 103 && sim.controls.calls(instance, 'start') > startsBefore,
        HEAL_TIMEOUT_MS,
        10,
      );
      entry.healedMs = Math.round(performance.now() - t0);
      log(`crash of ${instance} at ${entry.atS.toFixed(0)} s healed in ${entry.healedMs} ms`);
    } catch {
      log(`crash of ${instance} at ${entry.atS.toFixed(0)} s NOT healed within ${HEAL_TIMEOUT_MS / 1000} s`);
    }
  }

  try {
    log(
      `${INSTANCES} instances (${optedIn.length} opted in), ${rate} API calls/s for ${minutes} min, retention ${retentionMs / 1000} s (${Object.keys(retentionConfig).join(', ')}), Redis ${redis.url}, Reflex pid ${reflex.child.pid} metrics on port ${httpPort}`,
    );
    await witness.start();
    follower.start();
    await reflex.waitForLog('reflex running', 120_000);
    await reflex.waitForLog('event stream connected', 30_000);
    const metricsUrl = `http://127.0.0.1:${httpPort}/metrics`;
    const loadStart = Date.now();
    load.start();
    const heals: Promise<void>[] = [];
    let nextCrash = loadStart + CRASH_EVERY_MS / 2;
    let nextSample = loadStart;
    const end = loadStart + minutes * 60_000;
    // The last sample falls at the end of the load.
    while (Date.now() < end || nextSample <= end) {
      if (reflex.child.exitCode !== null)
        throw new Error(`reflex run exited (${reflex.child.exitCode}) at ${((Date.now() - loadStart) / 1000).toFixed(0)} s`);
      follower.check();
      if (Date.now() >= nextCrash) {
        heals.push(crashOne(optedIn[crashes.length % optedIn.length]!, loadStart));
        nextCrash += CRASH_EVERY_MS;
      }
      if (Date.now() >= nextSample) {
        nextSample += SAMPLE_EVERY_MS;
        readLogs();
        const lags = follower.takeLags();
        const s: Sample = {
          t: Math.round((Date.now() - loadStart) / 1000),
          rssMb: rssMb(reflex.child.pid!),
          heapUsedMb: await heapUsedMb(metricsUrl),
          ...(await redisReading(probe, prefix)),
          lag: {
            n: lags.length,
            p50: Math.round(quantile(lags, 0.5) || 0),
            p99: Math.round(quantile(lags, 0.99) || 0),
            max: Math.round(lags.length ? Math.max(...lags) : 0),
          },
          eventsWaiting: (await eventQueueCounts(redis.url, keys)).waiting ?? 0,
          apiCalls: load.counts.calls,
          events: witness.ids.size,
        };
        samples.push(s);
        log(
          `${(s.t / 60).toFixed(1)} min: RSS ${s.rssMb.toFixed(1)} MB, heap ${s.heapUsedMb.toFixed(1)} MB, Redis ${s.redisUsedMb.toFixed(1)} MB / ${s.keys} keys (archive:seen ${s.families['archive:seen'] ?? 0}, audit:once ${s.families['audit:once'] ?? 0}), lag p50 ${s.lag.p50} ms p99 ${s.lag.p99} ms, ${s.eventsWaiting} waiting, ${s.apiCalls} calls, ${s.events} events`,
        );
      }
      await sleep(Math.max(10, Math.min(nextCrash, nextSample, end) - Date.now()));
    }
    await load.stop();
    await Promise.all(heals);
    await drained(redis.url, keys, 120_000);
    // What the witness saw last reaches the audit trail through the queue: wait for it, bounded.
    await until(
      'the audit trail to hold every event the witness saw',
      () => [...witness.ids].every((id) => follower.eventIds.has(id)),
      30_000,
      500,
    ).catch(() => {});
    readLogs();

    const missing = [...witness.ids].filter((id) => !follower.eventIds.has(id));
    const crashed = [...new Set(crashes.map((c) => c.instance))];
    const unhealed = crashes.filter((c) => c.healedMs === undefined);
    const doubleStarts = crashed.filter((n) => sim.controls.calls(n, 'start') !== crashes.filter((c) => c.instance === n).length);
    const notRunning = crashed.filter((n) => sim.controls.statusCode(n) !== 103);
    const noOutcome = crashed.filter((n) => (follower.outcomes.get(n) ?? 0) < crashes.filter((c) => c.instance === n).length);
    const [events, actions] = await Promise.all([eventQueueCounts(redis.url, keys), eventQueueCounts(redis.url, keys, 'actions')]);
    const failedJobs = (events.failed ?? 0) + (actions.failed ?? 0);
    const healMs = crashes.flatMap((c) => (c.healedMs === undefined ? [] : [c.healedMs]));
    const trends = {
      'Reflex RSS': trend(samples, 'rssMb', retentionMs / 1000),
      'Redis used_memory': trend(samples, 'redisUsedMb', retentionMs / 1000),
      'Reflex heap used': trend(samples, 'heapUsedMb', retentionMs / 1000),
    };
    const flat = trends['Reflex RSS']?.flat === true && trends['Redis used_memory']?.flat === true;
    verdicts = [
      `crashes: ${crashes.length}, healed ${crashes.length - unhealed.length}${healMs.length ? ` in ${Math.min(...healMs)}–${Math.max(...healMs)} ms (median ${quantile(healMs, 0.5)} ms)` : ''}; ${notRunning.length} not Running at the end, ${doubleStarts.length} instance(s) with a start count other than their crash count${doubleStarts.length ? ` (${doubleStarts.join(', ')})` : ''}, ${noOutcome.length} without an outcome record per crash`,
      `lost: ${missing.length} of ${witness.ids.size} lifecycle events the simulator emitted have no audit record (${follower.records} audit records read as they were written)`,
      `errors: ${problems.errorCount} error lines logged by Reflex${problems.errors.length ? ` (${problems.errors.join(' | ')})` : ''}, ${failedJobs} failed jobs; ${problems.warnings} warnings${problems.warningSamples.length ? ` (${problems.warningSamples.join(' | ')})` : ''}`,
      `load: ${load.counts.calls} API calls (${(load.counts.calls / (minutes * 60)).toFixed(1)}/s), ${load.counts.errors} refused or failed${load.counts.errorSamples.length ? ` (${load.counts.errorSamples.join(' | ')})` : ''}, ${load.counts.unseen} whose outcome the load read too late (its own process slowed down); ${witness.ids.size} lifecycle events (${(witness.ids.size / (minutes * 60)).toFixed(1)}/s)`,
      `memory ${flat ? 'flat' : 'NOT flat'} (±10 %) in the steady state${o.assertFlat ? ' (asserted)' : ' (reported, not asserted)'}`,
    ];
    ok =
      unhealed.length === 0 &&
      notRunning.length === 0 &&
      doubleStarts.length === 0 &&
      noOutcome.length === 0 &&
      missing.length === 0 &&
      problems.errorCount === 0 &&
      failedJobs === 0 &&
      (!o.assertFlat || flat);
    for (const v of verdicts) log(v);
    for (const [name, t] of Object.entries(trends))
      if (t)
        log(
          `${name}: ${t.slopeMbPerMin >= 0 ? '+' : ''}${t.slopeMbPerMin.toFixed(3)} MB/min, mean ${t.mean.toFixed(1)} MB, min ${t.min.toFixed(1)}, max ${t.max.toFixed(1)} (±${(t.spread * 100).toFixed(1)} %)`,
        );

    const header = [
      `date: ${startedAt.toISOString()}; ${minutes} min of load; verdict: ${ok ? 'PASS' : 'FAIL'}`,
      `machine: ${cpus().length} CPU(s), ${cpus()[0]?.model ?? 'unknown'}; ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory; Node ${process.version}; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' / ')}, after ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' / ')}`,
      `set-up: simulator with ${INSTANCES} instances (${optedIn.length} opted in), ${rate} API calls/s on the others (config PATCH, snapshot create/delete, forced stop/start), a crash of an opted-in instance every ${CRASH_EVERY_MS / 1000} s; one \`reflex run\` process (all roles, bundled rules${o.noTypecheck ? ', --no-typecheck' : ''}, default settings otherwise) on a private Redis (AOF on)`,
      `config: ${Object.entries(retentionConfig)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}`,
    ];
    if (o.out)
      writeFileSync(
        o.out,
        `${JSON.stringify({ startedAt, minutes, rate, retentionMs, retentionConfig, instances: INSTANCES, optedIn: optedIn.length, ok, verdicts, trends, crashes, samples }, null, 2)}\n`,
      );
    if (o.writeBenchmarks) {
      const file = join(root, 'BENCHMARKS.md');
      writeFileSync(
        file,
        withSoakSection(readFileSync(file, 'utf8'), soakMarkdown({ header, verdicts, trends, steadyFromS: retentionMs / 1000, samples })),
      );
      log('wrote the soak section of BENCHMARKS.md');
    }
  } catch (err) {
    readLogs();
    log(`FAIL — the run broke: ${(err as Error).message}${problems.errors.length ? `; Reflex errors: ${problems.errors.join(' | ')}` : ''}`);
    ok = false;
  } finally {
    await load.stop();
    await reflex.stop();
    await follower.stop();
    await witness.stop();
    probe.disconnect();
    await client.close();
    await sim.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  log(ok ? 'PASS' : 'FAIL');
  return ok;
}
