import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InstanceClient } from '../src/client/client.js';
import { parseTarget } from '../src/client/target.js';
import { addressOf } from '../src/probes/probe-check.js';
import { freePort } from '../test/support/free-port.js';
import { startReflexProcess, type ReflexProcess } from '../test/support/reflex-process.js';
import { sleep } from '../test/support/wait.js';
import { processCpuSeconds } from './cpu.js';
import { benchRedis, rulesDir as bundledRules } from './stack.js';
import { atMost, progress, runBench, type Figure } from './support.js';

/**
 * What an http probe costs in a deployment as a user runs it (issue #43 item 9), where
 * bench/probes.ts measures an in-process runner: `reflex sim --instances N` (1000) as one process,
 * `reflex run` (all roles, Reflex's own timings, its HTTP server on) as another, with a rules folder
 * holding the bundled rule and one http probe of /healthz on the simulator's guest port every `BENCH_PROBE_PERIOD_MS`
 * (10 s). After `BENCH_PROBE_DEPLOY_SETTLE_SECONDS` (40) past "reflex running", the CPU of the
 * `reflex run` process (/proc/PID/stat: every thread) over `BENCH_PROBE_DEPLOY_SECONDS` (60) and the
 * checks it made (its /metrics' reflex_probe_duration_seconds_count). Then the same deployment
 * without the probe over the same window (its idle cost: resync, BullMQ's polling, the lease), and
 * bare GETs at the same rate from a process of their own (bench/bare-get-client.mjs), then the
 * same with the state read the runner makes before each http check; the simulator's CPU beside
 * each window. Figures: (a) the whole process's CPU per check, (b) (with − without) per check,
 * against a bare GET; (b) against a state read + GET.
 */
const bench = 'probes-deployment';
const instances = Number(process.env.BENCH_PROBE_INSTANCES) || 1000;
const periodMs = Number(process.env.BENCH_PROBE_PERIOD_MS) || 10_000;
const windowSeconds = Number(process.env.BENCH_PROBE_DEPLOY_SECONDS) || 60;
const settleSeconds = Number(process.env.BENCH_PROBE_DEPLOY_SETTLE_SECONDS) || 40;
const rate = instances / (periodMs / 1000);

interface Window {
  seconds: number;
  /** CPU seconds of the `reflex run` process, and of the simulator's, over the window. */
  cpu: number;
  simCpu: number;
  checks: number;
  /** Checks by outcome (success, failure, unknown). */
  outcomes: Record<string, number>;
}

interface Bare {
  gets: number;
  failures: number;
  cpu: number;
  seconds: number;
  /** The simulator's CPU seconds over the window. */
  simCpu: number;
}

await runBench(
  bench,
  async () => {
    const load = [loadavg()[0]!];
    const redis = await benchRedis();
    const dir = mkdtempSync(join(resolve('.tmp'), 'bench-probes-deploy-'));
    const socket = join(dir, 'sim.sock');
    const sim = startReflexProcess(['sim', '--instances', String(instances), '--listen', `unix:${socket}`]);
    try {
      const guestPort = Number(/guest port: (\d+)/.exec(String((await sim.waitForLog('guest port:', 60_000)).msg))?.[1]);
      if (!guestPort) throw new Error('reflex sim printed no guest port');
      const target = `unix://${socket}`;
      // Listed with their state once: each instance's address is shown, so its guest endpoint listens from now on.
      const client = new InstanceClient(parseTarget(target));
      const listed = (await client.listInstances({ recursion: 2 })).map((i) => ({ name: i.name, address: addressOf(i.state) }));
      await client.close();
      if (listed.length !== instances || listed.some((i) => !i.address))
        throw new Error(`the simulator listed ${listed.length} instances, some without an address`);
      const instancesFile = join(dir, 'instances.json');
      writeFileSync(instancesFile, JSON.stringify(listed));
      const deploy = (label: string, probe: boolean) =>
        deployment({ dir, label, probe, target, redisUrl: redis.url, guestPort, simPid: sim.child.pid });
      const withProbe = await deploy('with', true);
      const without = await deploy('without', false);
      const bareArgs = [instancesFile, String(guestPort), String(rate), '5', String(windowSeconds)];
      progress(bench, `baseline: ${rate} bare GETs/s from a process of their own, 5 s warm-up, ${windowSeconds} s`);
      const bare = await bareClient([...bareArgs, 'get'], sim.child.pid);
      progress(bench, `baseline: ${rate} state reads + GETs/s, 5 s warm-up, ${windowSeconds} s`);
      const stateBare = await bareClient([...bareArgs, 'state+get', target], sim.child.pid);
      load.push(loadavg()[0]!);
      return { bench, figures: figures(withProbe, without, bare, stateBare), notes: notes(withProbe, without, bare, stateBare, load) };
    } finally {
      await sim.stop();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
  { timeoutMs: (2 * (settleSeconds + windowSeconds + 90) + 2 * (windowSeconds + 30)) * 1000 },
);

/** One `reflex run` on the simulator, with or without the probe, measured over the window after its settling. */
async function deployment(o: {
  dir: string;
  label: string;
  probe: boolean;
  target: string;
  redisUrl: string;
  guestPort: number;
  simPid: number | undefined;
}): Promise<Window> {
  const rules = join(o.dir, `rules-${o.label}`);
  mkdirSync(rules);
  // The bundled rule in both (a folder needs a rule); the probe's file beside it in one.
  copyFileSync(join(bundledRules, 'restart-on-crash.ts'), join(rules, 'restart-on-crash.ts'));
  if (o.probe)
    writeFileSync(
      join(rules, 'probe.ts'),
      `import { defineProbe } from 'reflex-lxd';\nexport const web = defineProbe({ name: 'bench-http', kind: 'http', url: '/healthz', port: ${o.guestPort}, periodMs: ${periodMs}, timeoutMs: 5_000 });\n`,
    );
  const configFile = join(o.dir, `reflex-${o.label}.json`);
  writeFileSync(configFile, JSON.stringify({ httpPort: await freePort() }));
  const args = ['run', '--target', o.target, '--redis', o.redisUrl, '--prefix', `bench-pd-${o.label}`, '--rules', rules, '--config', configFile];
  const proc = startReflexProcess(args, { REFLEX_LOG_LEVEL: 'info' });
  try {
    const url = String((await proc.waitForLog('http server listening', 120_000)).url);
    await proc.waitForLog('reflex running', 120_000);
    progress(bench, `${o.label} the probe: running; settling ${settleSeconds} s, then measuring ${windowSeconds} s`);
    await sleep(settleSeconds * 1000);
    const m0 = await probeChecks(url);
    const cpu0 = processCpuSeconds(proc.child.pid);
    const sim0 = processCpuSeconds(o.simPid);
    const t0 = performance.now();
    await sleep(windowSeconds * 1000);
    const cpu = processCpuSeconds(proc.child.pid) - cpu0;
    const simCpu = processCpuSeconds(o.simPid) - sim0;
    const seconds = (performance.now() - t0) / 1000;
    const m1 = await probeChecks(url);
    const outcomes = Object.fromEntries(Object.entries(m1).map(([k, v]) => [k, v - (m0[k] ?? 0)]));
    const checks = Object.values(outcomes).reduce((a, b) => a + b, 0);
    progress(bench, `${o.label} the probe: ${checks} checks, ${cpu.toFixed(2)} CPU s in ${seconds.toFixed(1)} s (simulator ${simCpu.toFixed(2)})`);
    return { seconds, cpu, simCpu, checks, outcomes };
  } finally {
    await stopped(proc);
  }
}

async function stopped(proc: ReflexProcess): Promise<void> {
  const code = await proc.stop();
  if (code !== 0) progress(bench, `reflex run exited ${code}`);
}

/** Probe checks made so far, by outcome, from a replica's /metrics. */
async function probeChecks(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url.replace(/\/$/, '')}/metrics`)).text();
  const by: Record<string, number> = {};
  for (const m of text.matchAll(/^reflex_probe_duration_seconds_count\{[^}]*outcome="([^"]+)"[^}]*\} (\d+)/gm))
    by[m[1]!] = (by[m[1]!] ?? 0) + Number(m[2]);
  return by;
}

/** A bare client's window, with the simulator's CPU over it (`simPid`): the serving side of its calls. */
function bareClient(args: string[], simPid: number | undefined): Promise<Bare> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('bare-get-client.mjs', import.meta.url)), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let sim0 = 0;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!sim0 && out.startsWith('window\n')) sim0 = processCpuSeconds(simPid);
    });
    child.on('exit', (code) => {
      if (code !== 0 || !sim0) return fail(new Error(`bare-get-client exited ${code}`));
      done({ ...(JSON.parse(out.slice('window\n'.length).trim()) as Omit<Bare, 'simCpu'>), simCpu: processCpuSeconds(simPid) - sim0 });
    });
  });
}

function ms(cpu: number, n: number): number {
  return (1000 * cpu) / Math.max(1, n);
}

function figures(w: Window, wo: Window, bare: Bare, stateBare: Bare): Figure[] {
  const perGet = ms(bare.cpu, bare.gets);
  // The idle process's CPU over the probe window's length: the windows differ by a few ms.
  const added = w.cpu - (wo.cpu * w.seconds) / wo.seconds;
  return [
    {
      ...atMost(
        'CPU per check, the whole `reflex run` process (deployment, http, 1 000 instances)',
        'ms',
        ms(w.cpu, w.checks),
        'a bare GET, own process',
        perGet,
        5,
      ),
      goal: 'reported',
      met: true,
    },
    atMost(
      'CPU per check, `reflex run` with the probe − without (deployment, http)',
      'ms',
      ms(added, w.checks),
      'a bare GET, own process',
      perGet,
      5,
    ),
    {
      ...atMost(
        'CPU per check, with − without (deployment, http), against a state read + GET',
        'ms',
        ms(added, w.checks),
        'a bare state read + GET',
        ms(stateBare.cpu, stateBare.gets),
        5,
      ),
      goal: 'reported',
      met: true,
    },
  ];
}

function notes(w: Window, wo: Window, bare: Bare, stateBare: Bare, load: number[]): string[] {
  const added = w.cpu - (wo.cpu * w.seconds) / wo.seconds;
  const outcomes = Object.entries(w.outcomes)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  return [
    `\`reflex sim --instances ${instances}\` and \`reflex run\` (all roles, HTTP server on) as two processes; one http probe every ${periodMs} ms (${rate}/s due); ${settleSeconds} s of settling, ${windowSeconds} s windows; CPU from /proc/PID/stat (every thread); the bare clients' from their own process.cpuUsage() over their window after 5 s of warm-up.`,
    `with the probe: ${w.checks} checks in ${w.seconds.toFixed(1)} s (${(w.checks / w.seconds).toFixed(1)}/s; ${outcomes}) using ${w.cpu.toFixed(2)} CPU s (${((100 * w.cpu) / w.seconds).toFixed(1)} % of a core); the simulator ${w.simCpu.toFixed(2)} CPU s`,
    `without: ${wo.cpu.toFixed(2)} CPU s in ${wo.seconds.toFixed(1)} s (${((100 * wo.cpu) / wo.seconds).toFixed(2)} % of a core); the simulator ${wo.simCpu.toFixed(2)} CPU s; with − without: ${added.toFixed(2)} CPU s`,
    `bare GETs: ${bare.gets} in ${bare.seconds.toFixed(1)} s (${bare.failures} failed) using ${bare.cpu.toFixed(2)} CPU s (the simulator ${bare.simCpu.toFixed(2)}); state read + GET: ${stateBare.gets} (${stateBare.failures} failed) using ${stateBare.cpu.toFixed(2)} CPU s (the simulator ${stateBare.simCpu.toFixed(2)})`,
    `the simulator's side counted too: ${ms(w.cpu + w.simCpu, w.checks).toFixed(2)} ms per check (whole process) against ${ms(bare.cpu + bare.simCpu, bare.gets).toFixed(2)} ms per bare GET (${((w.cpu + w.simCpu) / w.checks / ((bare.cpu + bare.simCpu) / bare.gets)).toFixed(2)} ×) and ${ms(stateBare.cpu + stateBare.simCpu, stateBare.gets).toFixed(2)} ms per state read + GET`,
    `probes per second per CPU core: ${(w.checks / w.cpu).toFixed(0)} whole process, ${(w.checks / added).toFixed(0)} with − without (bare GETs: ${(bare.gets / bare.cpu).toFixed(0)}; state read + GET: ${(stateBare.gets / stateBare.cpu).toFixed(0)})`,
    `load average (1 min) at the start ${load[0]!.toFixed(2)}, at the end ${load[1]!.toFixed(2)}; ${cpus().length} cores`,
  ];
}
