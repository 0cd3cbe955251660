import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { startReflexProcess } from '../test/support/reflex-process.js';
import { acquireDaemonLock, lxdBed, lxdSocketPath, STATUS_RUNNING, TEST_INSTANCE_PREFIX } from '../test/support/daemon-bed.js';
import { benchRedis, optIn, rulesDir } from './stack.js';
import { atMost, killGroup, LifecycleMonitor, median, progress, redisClient, runBench } from './support.js';
import { sleep } from '../test/support/wait.js';

/**
 * Mass failure on the real LXD test bed: 12 opted-in containers have their init SIGKILLed at once,
 * and we time until the daemon has announced `instance-started` for every one of them, as seen by
 * our own `lxc monitor`:
 * - the operator's shell loop: lxc monitor | jq | `lxc start "$n" &` (all in parallel);
 * - Reflex: `reflex run` with the bundled rules and storm control at its defaults.
 * Shell loop and Reflex alternate in two halves so drift in the machine's load hits both.
 */
const bench = 'mass-failure';
const count = Number(process.env.BENCH_MASS_INSTANCES) || 12;
const perHalf = Number(process.env.BENCH_LXD_ROUNDS_PER_HALF) || 3;

await runBench(bench, async () => {
  if (!(await lxdBed.reachable())) {
    return {
      bench,
      figures: [],
      skipped: `no LXD daemon reachable at ${lxdSocketPath() ?? '/var/lib/lxd/unix.socket'}; run scripts/lxd-testbed.sh as root to measure a mass failure`,
      notes: [],
    };
  }
  const release = await acquireDaemonLock('lxd');
  const socket = lxdSocketPath()!;
  const env = { ...process.env, LXD_SOCKET: socket };
  const group = `${TEST_INSTANCE_PREFIX}mass-${randomUUID().slice(0, 6)}-`;
  const names = Array.from({ length: count }, (_, i) => `${group}${String(i + 1).padStart(2, '0')}`);
  const redis = await benchRedis();
  const monitor = new LifecycleMonitor(env);
  try {
    for (let i = 0; i < names.length; i += 4) await Promise.all(names.slice(i, i + 4).map((name) => lxdBed.launch({ name, config: optIn })));
    await monitor.ready();
    const shell: number[] = [];
    const reflex: number[] = [];
    const held = { shell: 0, reflex: 0 };
    for (let half = 0; half < 2; half++) {
      const loop = startShellLoop(group, env);
      await sleep(1_000);
      await rounds(names, monitor, perHalf, shell, (n) => (held.shell += n));
      killGroup(loop);
      await sleep(500);
      progress(bench, `shell loop, half ${half + 1}: ${shell.map((v) => v.toFixed(0)).join(', ')} ms`);

      const prefix = `bench-${randomUUID().slice(0, 8)}`;
      const proc = startReflexProcess(
        [
          'run',
          '--target',
          `unix://${socket}`,
          '--redis',
          redis.url,
          '--prefix',
          prefix,
          '--rules',
          rulesDir,
          '--resync-interval',
          '0',
          '--http-port',
          '0',
        ],
        { REFLEX_LOG_LEVEL: process.env.BENCH_REFLEX_LOG_LEVEL ?? 'info' },
      );
      const r = redisClient(redis.url);
      try {
        await proc.waitForLog('event stream connected', 30_000);
        await sleep(2_000); // the start-up resync's grace period
        // Each round is a fresh mass failure, not a crash loop nor the same storm again: forget the
        // restart budgets and storm control's memory of the previous round's remediations.
        const forget = async () => {
          const keys = (await r.keys(`*${prefix}*`)).filter((k) => /restarts|storm|remediated/.test(k));
          if (keys.length) await Promise.all(keys.map((k) => r.del(k)));
        };
        await rounds(names, monitor, perHalf, reflex, (n) => (held.reflex += n), forget);
      } finally {
        r.disconnect();
        await proc.stop();
        // Where the time goes: BENCH_MASS_LOG=FILE keeps Reflex's log lines (with BENCH_REFLEX_LOG_LEVEL=debug).
        if (process.env.BENCH_MASS_LOG) appendFileSync(process.env.BENCH_MASS_LOG, proc.logs.map((l) => JSON.stringify(l)).join('\n') + '\n');
      }
      progress(bench, `reflex, half ${half + 1}: ${reflex.map((v) => v.toFixed(0)).join(', ')} ms`);
    }
    const sh = median(shell);
    const rx = median(reflex);
    return {
      bench,
      figures: [
        atMost(
          `${count} containers killed at once → all Running, Reflex (median of ${reflex.length})`,
          'ms',
          rx,
          `parallel shell loop lxc monitor | jq | lxc start & (median of ${shell.length})`,
          sh,
          1.0,
        ),
      ],
      notes: [
        `Real LXD at ${socket}; ${count} busybox containers ${group}01…; times from the SIGKILL of the last init to \`instance-started\` of the last container, seen by a separate \`lxc monitor\`. The first round after each process start is a warm-up and not counted. Reflex runs with storm control at its defaults.`,
        `Samples, shell loop: ${shell.map((v) => v.toFixed(0)).join(', ')} ms; Reflex: ${reflex.map((v) => v.toFixed(0)).join(', ')} ms; containers not Running within 20 s (started by the bench instead): shell ${held.shell}, Reflex ${held.reflex}.`,
      ],
    };
  } finally {
    monitor.stop();
    await Promise.all(names.map((n) => lxdBed.remove(n).catch(() => undefined)));
    await redis.stop();
    await release();
  }
});

/** SIGKILLs every container's init, as close together as the host allows; returns the moment of the last kill. */
async function killAll(names: string[]): Promise<number> {
  const pids = await Promise.all(names.map(async (n) => (await lxdBed.status(n)).pid));
  if (pids.some((p) => p <= 0)) throw new Error('a container has no init process to kill');
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  return performance.now();
}

/** `count` measured rounds after one warm-up: kill all, wait until each is started, settle. */
async function rounds(
  names: string[],
  monitor: LifecycleMonitor,
  n: number,
  out: number[],
  notStarted: (k: number) => void,
  before?: () => Promise<void>,
): Promise<void> {
  for (let i = -1; i < n; i++) {
    await before?.();
    const t0 = await killAll(names);
    const ends = await Promise.all(names.map((name) => monitor.next(name, 'instance-started', t0, 20_000).catch(() => undefined)));
    const missing = names.filter((_, j) => ends[j] === undefined);
    if (i >= 0) {
      notStarted(missing.length);
      if (!missing.length) out.push(Math.max(...(ends as number[])) - t0);
    }
    await Promise.all(missing.map((name) => lxdBed.start(name).catch(() => undefined)));
    await Promise.all(names.map((name) => lxdBed.waitForStatus(name, STATUS_RUNNING, 20_000)));
    await sleep(1_500);
  }
}

function startShellLoop(group: string, env: NodeJS.ProcessEnv): ChildProcess {
  // The operator's loop, starting every stopped instance in parallel, restricted to this bench's containers.
  const script = `lxc monitor --type=lifecycle --format=json | jq --unbuffered -r 'select(.metadata.action=="instance-shutdown" and (.metadata.source|contains("/${group}"))) | .metadata.source' | while read src; do lxc start "\${src##*/}" & done`;
  return spawn('bash', ['-c', script], { env, detached: true, stdio: 'ignore' });
}
