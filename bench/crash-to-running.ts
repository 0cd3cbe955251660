import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { startReflexProcess } from '../test/support/reflex-process.js';
import { acquireDaemonLock, lxdBed, lxdSocketPath, STATUS_RUNNING, TEST_INSTANCE_PREFIX } from '../test/support/daemon-bed.js';
import { benchRedis, optIn, rulesDir } from './stack.js';
import { atMost, kill, killGroup, LifecycleMonitor, median, progress, redisClient, runBench } from './support.js';
import { sleep } from '../test/support/wait.js';

/**
 * Crash → Running on the real LXD test bed. An opted-in container's init is killed with SIGKILL
 * and we time until the daemon announces `instance-started`, as seen by our own `lxc monitor`:
 * - the floor: kill → `instance-shutdown` (the daemon's stop hook) plus the time of one `lxc start`;
 * - the operator's shell loop: lxc monitor | jq | lxc start, restricted to this instance;
 * - Reflex: `reflex run` (a process) with the bundled rules against the real socket.
 * Shell loop and Reflex alternate in two halves so drift in the machine's load hits both.
 * Holds the cross-process LXD lock throughout.
 */
const bench = 'crash-to-running';
const perHalf = Number(process.env.BENCH_LXD_ROUNDS_PER_HALF) || 3;
const run = promisify(execFile);

await runBench(bench, async () => {
  if (!(await lxdBed.reachable())) {
    return {
      bench,
      figures: [],
      skipped: `no LXD daemon reachable at ${lxdSocketPath() ?? '/var/lib/lxd/unix.socket'}; run scripts/lxd-testbed.sh as root to measure crash → Running`,
      notes: [],
    };
  }
  const release = await acquireDaemonLock('lxd');
  const socket = lxdSocketPath()!;
  const env = { ...process.env, LXD_SOCKET: socket };
  const name = `${TEST_INSTANCE_PREFIX}bench-${randomUUID().slice(0, 6)}`;
  const redis = await benchRedis();
  const monitor = new LifecycleMonitor(env);
  try {
    await lxdBed.launch({ name, config: optIn });
    await monitor.ready();
    const floor: number[] = [];
    const shutdownMs: number[] = [];
    const startMs: number[] = [];
    for (let i = -1; i < perHalf * 2; i++) {
      const t0 = await kill(name);
      const t1 = await monitor.next(name, 'instance-shutdown', t0);
      const s = performance.now();
      await run('lxc', ['start', name], { env });
      const d = performance.now() - s;
      await monitor.next(name, 'instance-started', t0);
      await sleep(1_000);
      if (i < 0) continue; // warm-up
      shutdownMs.push(t1 - t0);
      startMs.push(d);
      floor.push(t1 - t0 + d);
    }
    progress(bench, `floor: kill → instance-shutdown ${median(shutdownMs).toFixed(0)} ms + lxc start ${median(startMs).toFixed(0)} ms`);

    const shell: number[] = [];
    const reflex: number[] = [];
    const failures = { shell: 0, reflex: 0 };
    for (let half = 0; half < 2; half++) {
      const loop = startShellLoop(name, env);
      await sleep(1_000);
      await rounds(name, monitor, perHalf, shell, () => failures.shell++, true);
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
        { REFLEX_LOG_LEVEL: 'info' },
      );
      try {
        await proc.waitForLog('event stream connected', 30_000);
        await sleep(2_000); // the start-up resync's grace period
        const r = redisClient(redis.url);
        const resetBudget = async () => {
          // Each round is a fresh crash, not a crash loop: forget the restart budget between rounds.
          const keys = await r.keys(`{${prefix}:*}:restarts`);
          if (keys.length) await r.del(...keys);
        };
        await rounds(name, monitor, perHalf, reflex, () => failures.reflex++, true, resetBudget);
        r.disconnect();
      } finally {
        await proc.stop();
      }
      progress(bench, `reflex, half ${half + 1}: ${reflex.map((v) => v.toFixed(0)).join(', ')} ms`);
    }
    const f = median(floor);
    const sh = median(shell);
    const rx = median(reflex);
    return {
      bench,
      figures: [
        atMost(
          `crash → Running, Reflex (median of ${reflex.length})`,
          'ms',
          rx,
          `shell loop lxc monitor | jq | lxc start (median of ${shell.length})`,
          sh,
          0.95,
        ),
        {
          ...atMost('crash → Running, daemon floor (kill → instance-shutdown + lxc start)', 'ms', f, 'shell loop', sh, 1),
          goal: 'reported',
          met: true,
        },
        { ...atMost('crash → Running, Reflex vs the floor', 'ms', rx, 'floor', f, 1), goal: 'reported', met: true },
      ],
      notes: [
        `Real LXD at ${socket}; busybox container ${name}; times from the SIGKILL of its init to \`instance-started\` seen by a separate \`lxc monitor\`. The first round after each process start is a warm-up and not counted.`,
        `Floor parts (medians of ${floor.length}): kill → instance-shutdown ${median(shutdownMs).toFixed(0)} ms; lxc start ${median(startMs).toFixed(0)} ms.`,
        `Samples, shell loop: ${shell.map((v) => v.toFixed(0)).join(', ')} ms; Reflex: ${reflex.map((v) => v.toFixed(0)).join(', ')} ms; rounds not remediated within 15 s: shell ${failures.shell}, Reflex ${failures.reflex}.`,
        "Where the time goes: almost all of it is the daemon's — its stop hook runs before it reports `instance-shutdown`, and a start sent earlier is refused as busy — so the shell loop already sits at the floor, and so does Reflex (its own share: two queue hops, the re-check and the start action's reads of the instance; a crash's lone frame is not held for ordering). Beating the shell loop by 5 % would mean beating the daemon's floor.",
      ],
    };
  } finally {
    monitor.stop();
    await lxdBed.remove(name).catch(() => undefined);
    await redis.stop();
    await release();
  }
});

/** `count` measured rounds after one warm-up: kill, wait for instance-started, settle. */
async function rounds(
  name: string,
  monitor: LifecycleMonitor,
  count: number,
  out: number[],
  failed: () => void,
  warmUp: boolean,
  before?: () => Promise<void>,
): Promise<void> {
  for (let i = warmUp ? -1 : 0; i < count; i++) {
    await before?.();
    const t0 = await kill(name);
    try {
      const t = await monitor.next(name, 'instance-started', t0, 15_000);
      if (i >= 0) out.push(t - t0);
    } catch {
      failed();
      await lxdBed.start(name).catch(() => undefined);
    }
    await lxdBed.waitForStatus(name, STATUS_RUNNING, 15_000);
    await sleep(1_000);
  }
}

function startShellLoop(name: string, env: NodeJS.ProcessEnv): ChildProcess {
  // The operator's loop, verbatim, with the jq filter restricted to this instance.
  const script = `lxc monitor --type=lifecycle --format=json | jq --unbuffered -r 'select(.metadata.action=="instance-shutdown" and (.metadata.source|endswith("/${name}"))) | .metadata.source' | while read src; do lxc start "\${src##*/}"; done`;
  return spawn('bash', ['-c', script], { env, detached: true, stdio: 'ignore' });
}
