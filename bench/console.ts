import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { Queue } from 'bullmq';
import { Agent, request } from 'undici';
import { launchChromium } from '../test/dashboard/headless-chromium.js';
import type { ReflexHandle } from '../src/app/start-reflex.js';
import { duplicateConnection } from '../src/redis/connect.js';
import { optIn, startStack } from '../test/support/stack.js';
import { freePort } from '../test/support/free-port.js';
import { benchRedis, optedInName, rulesDir, settled } from './stack.js';
import { sleep } from '../test/support/wait.js';
import { absoluteAtMost, atMost, median, progress, quantile, runBench, silentLogger } from './support.js';

/**
 * The operator's console (/dashboard):
 * - page weight (HTML with its inline JS and CSS), against the audit-table page it replaced as the
 *   dashboard's home (/dashboard/audit), on the same Reflex;
 * - time to first render of the fleet view in headless Chromium (navigation start to the first
 *   page of rows drawn, data read from the console API) for a 10k-instance fleet on the simulator,
 *   against the same for 300 instances;
 * - the fleet API's page time at 10k instances (pages through the fleet, a filter and a flag, each
 *   request past the snapshot's 400 ms reuse), against the same at 300 instances;
 * - the same while an opted-in instance crashes every 2 s and Reflex heals it (each crash and heal
 *   changes the fleet the pages are cut from), with the longest event-loop stall of the process
 *   serving the console meanwhile (issue #42 item 9: p95 ≤ 200 ms, stalls ≤ 100 ms).
 */
const bench = 'console';
const instances = Number(process.env.BENCH_INSTANCES) || 10_000;
const loads = 5;
const smallCount = Number(process.env.BENCH_SMALL_INSTANCES) || 300;
/** Longer than the view's snapshot reuse (400 ms): every timed request finds its snapshot expired (served while the next is assembled). */
const freshGapMs = 450;
const pageQueries = [
  '',
  'offset=50',
  'offset=5000',
  'filter=inst-00042',
  'filter=restarts%20gt%200',
  'flag=down',
  'status=Running&offset=200',
  'limit=500',
];
const token = `bench-console-${randomUUID()}`;
/** Opted-in instances beside the seeded fleet, crashed in turn during the crash pass. */
const optedIn = 20;
const crashEveryMs = 2_000;

interface Fleet {
  sim: SimProcess;
  reflex: ReflexHandle;
  url: string;
  stop(): Promise<void>;
}

/**
 * `reflex sim` in a process of its own, as the daemon is in production: its own work (building and
 * serialising the 27 MB listing of 10 000 instances) does not stall the event loop measured here,
 * which is Reflex's and its console's. Crashes through its control API (/sim/…).
 */
interface SimProcess {
  target: string;
  crash(name: string): void;
  stop(): Promise<void>;
}

async function simProcess(seeded: number): Promise<SimProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'reflex-bench-sim-'));
  const socketPath = join(dir, 'sim.sock');
  const bin = fileURLToPath(new URL('../bin/reflex.js', import.meta.url));
  const child = spawn(process.execPath, [bin, 'sim', '--instances', String(seeded), '--listen', `unix:${socketPath}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`reflex sim exited ${code} before it listened: ${out}`)));
  });
  const dispatcher = new Agent({ connect: { socketPath } });
  const control = async (path: string, body?: unknown) => {
    const res = await request(`http://sim${path}`, {
      method: 'POST',
      dispatcher,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    await res.body.text();
    if (res.statusCode >= 300) throw new Error(`POST ${path}: ${res.statusCode}`);
  };
  for (let i = 1; i <= optedIn; i++) await control('/sim/instances', { name: optedInName(i), status: 'Running', config: optIn });
  return {
    target: `unix://${socketPath}`,
    crash: (name) => void control(`/sim/instances/${name}/crash`).catch((err: Error) => progress(bench, `crash of ${name}: ${err.message}`)),
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await dispatcher.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function fleetOf(redisUrl: string, count: number): Promise<Fleet> {
  const sim = await simProcess(count - optedIn);
  const stack = await startStack({
    redisUrl,
    label: 'bench',
    rules: rulesDir,
    daemon: sim.target,
    reflexTimings: 'product',
    logger: silentLogger,
    config: { stormThreshold: undefined /* Reflex's default: nothing crashes here */, httpPort: await freePort(), dashboardToken: token },
  });
  // BullMQ does not close a connection it was given.
  const connection = duplicateConnection(stack.redis);
  const eventsQueue = new Queue(stack.keys.eventsQueue, { connection, prefix: stack.keys.bullPrefix });
  await settled({ ...stack, eventsQueue }, count, 180_000);
  return {
    sim,
    reflex: stack.reflex,
    url: stack.reflex.http!.url,
    async stop() {
      await stack.stop();
      await eventsQueue.close();
      connection.disconnect();
      await sim.stop();
    },
  };
}

/** Median over `loads` fresh loads of the time from navigation start to the fleet's first rows; and the rows drawn. */
async function firstRender(browser: Browser, url: string): Promise<{ ms: number; rows: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const login = await context.newPage();
  await login.goto(`${url}/dashboard/audit?token=${token}`);
  await login.close();
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < loads; i++) {
    const page = await context.newPage();
    await page.goto(`${url}/dashboard`);
    await page.waitForSelector('body[data-rendered=fleet]', { timeout: 60_000 });
    times.push(await page.evaluate(() => (globalThis as unknown as { __firstRender: number }).__firstRender));
    rows = await page.locator('#fleet-table tbody tr').count();
    await page.close();
  }
  await context.close();
  return { ms: median(times), rows };
}

/** fetch, tried again (up to 3 times) when the connection fails: the machine the bench shares may be loaded enough for a connect to time out. */
async function fetchTried(url: string, init: RequestInit): Promise<Response> {
  for (let i = 1; ; i++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      if (i >= 3) throw err;
      progress(bench, `${url}: ${(err as Error).message}; trying again`);
    }
  }
}

/**
 * Times of the fleet API's pages (ms): the median and the 95th percentile over `rounds` rounds of
 * {@link pageQueries}; and the first read's. With `crashing`, an opted-in instance of the fleet
 * crashes every {@link crashEveryMs} (in turn) while the pages are read, and the longest stall of
 * this process's event loop (Reflex, its console and the simulator run in it) is measured meanwhile.
 */
async function pageTimes(
  url: string,
  rounds: number,
  crashing?: SimProcess,
): Promise<{ median: number; p95: number; n: number; firstMs: number; crashes: number; stallMs: number }> {
  const auth = { authorization: `Bearer ${token}` };
  const first = performance.now();
  await (await fetchTried(`${url}/dashboard/console/fleet?offset=100`, { headers: auth })).text();
  const firstMs = performance.now() - first;
  const times: number[] = [];
  let crashes = 0;
  const crasher = crashing ? setInterval(() => crashing.crash(optedInName((crashes++ % optedIn) + 1)), crashEveryMs) : undefined;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  try {
    for (let r = 0; r < rounds; r++) {
      for (const q of pageQueries) {
        await sleep(freshGapMs);
        const t = performance.now();
        const res = await fetchTried(`${url}/dashboard/console/fleet?${q}`, { headers: auth });
        await res.text();
        times.push(performance.now() - t);
        if (!res.ok) throw new Error(`fleet?${q} answered ${res.status}`);
      }
    }
  } finally {
    loop.disable();
    clearInterval(crasher);
  }
  // The histogram is in ns; a stall is the delay past the timer's 10 ms resolution.
  const stallMs = Math.max(0, loop.max / 1e6 - 10);
  return { median: median(times), p95: quantile(times, 0.95), n: times.length, firstMs, crashes, stallMs };
}

await runBench(
  bench,
  async () => {
    const redis = await benchRedis();
    const browser = await launchChromium();
    const fleets: Fleet[] = [];
    try {
      const small = await fleetOf(redis.url, smallCount);
      fleets.push(small);
      const auth = { authorization: `Bearer ${token}` };
      const consoleHtml = await (await fetch(`${small.url}/dashboard`, { headers: auth })).text();
      const auditHtml = await (await fetch(`${small.url}/dashboard/audit`, { headers: auth })).text();
      const kb = (s: string) => Buffer.byteLength(s) / 1024;
      progress(
        bench,
        `console page ${kb(consoleHtml).toFixed(1)} KB (${(gzipSync(consoleHtml).length / 1024).toFixed(1)} KB gzipped), audit-table page ${kb(auditHtml).toFixed(1)} KB`,
      );
      const smallRender = await firstRender(browser, small.url);
      progress(bench, `first render, ${smallCount} instances: ${smallRender.ms.toFixed(0)} ms (${smallRender.rows} rows drawn)`);
      const smallPages = await pageTimes(small.url, 3);
      progress(bench, `fleet API page, ${smallCount} instances: median ${smallPages.median.toFixed(1)} ms, p95 ${smallPages.p95.toFixed(1)} ms`);
      const smallCrashing = await pageTimes(small.url, 3, small.sim);
      progress(
        bench,
        `fleet API page, ${smallCount} instances, a crash every ${crashEveryMs} ms (${smallCrashing.crashes} crashes): p95 ${smallCrashing.p95.toFixed(1)} ms; longest event-loop stall ${smallCrashing.stallMs.toFixed(0)} ms`,
      );

      const t = performance.now();
      const big = await fleetOf(redis.url, instances);
      fleets.push(big);
      progress(bench, `${instances} instances tracked in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      const pageJson = await (await fetchTried(`${big.url}/dashboard/console/fleet`, { headers: auth })).text();
      const bigRender = await firstRender(browser, big.url);
      const bigPages = await pageTimes(big.url, 3);
      progress(
        bench,
        `fleet API page, ${instances} instances: median ${bigPages.median.toFixed(1)} ms, p95 ${bigPages.p95.toFixed(1)} ms; a read that waited for an assembly: ${bigPages.firstMs.toFixed(0)} ms`,
      );
      const bigCrashing = await pageTimes(big.url, 3, big.sim);
      progress(
        bench,
        `fleet API page, ${instances} instances, a crash every ${crashEveryMs} ms (${bigCrashing.crashes} crashes): median ${bigCrashing.median.toFixed(1)} ms, p95 ${bigCrashing.p95.toFixed(1)} ms; longest event-loop stall ${bigCrashing.stallMs.toFixed(0)} ms`,
      );
      progress(
        bench,
        `first render, ${instances} instances: ${bigRender.ms.toFixed(0)} ms (${bigRender.rows} rows drawn); first fleet page ${kb(pageJson).toFixed(1)} KB of JSON`,
      );

      return {
        bench,
        figures: [
          absoluteAtMost(
            'console page weight (HTML + inline JS + CSS)',
            'KB',
            kb(consoleHtml),
            96,
            `the audit-table page it replaced as the home (${smallCount} instances, no incident yet)`,
            kb(auditHtml),
          ),
          absoluteAtMost(
            `console first render of a ${instances}-instance fleet, median of ${loads} loads`,
            'ms',
            bigRender.ms,
            1_000,
            `the same for ${smallCount} instances`,
            smallRender.ms,
          ),
          absoluteAtMost(
            `console fleet API page of a ${instances}-instance fleet, p95 of ${bigPages.n} requests`,
            'ms',
            bigPages.p95,
            200,
            `the same for ${smallCount} instances`,
            smallPages.p95,
          ),
          absoluteAtMost(
            `console fleet API page of a ${instances}-instance fleet with a crash every ${crashEveryMs / 1000} s, p95 of ${bigCrashing.n} requests`,
            'ms',
            bigCrashing.p95,
            200,
            `the same for ${smallCount} instances`,
            smallCrashing.p95,
          ),
          absoluteAtMost(
            `longest event-loop stall serving the console of a ${instances}-instance fleet with a crash every ${crashEveryMs / 1000} s`,
            'ms',
            bigCrashing.stallMs,
            100,
            `the same for ${smallCount} instances`,
            Math.max(smallCrashing.stallMs, 0.1),
          ),
          atMost(
            `console fleet API page of a ${instances}-instance fleet, median of ${bigPages.n} requests`,
            'ms',
            bigPages.median,
            `the same for ${smallCount} instances`,
            smallPages.median,
            40,
          ),
        ],
        notes: [
          `Page weight is the one HTML response of /dashboard (the script and styles are inline, no other asset; ${(gzipSync(consoleHtml).length / 1024).toFixed(1)} KB gzipped, though the server sends it uncompressed). The data come after: the first fleet page of ${instances} instances is ${kb(pageJson).toFixed(1)} KB of JSON (50 rows and the counts); incidents, health and dead letters are read beside it.`,
          `Fleet API pages: ${pageQueries.map((q) => q || '(first page)').join(', ')}, ${bigPages.n} requests per fleet, each ${freshGapMs} ms after the one before: past the 400 ms for which a snapshot is reused as fresh. A snapshot nothing invalidated is served up to 3 s old (it carries its time) while the next is assembled behind (started late enough to be ready in time; an assembly yields to the event loop every 2 000 rows, so the pages asked meanwhile are answered between its steps); a change the feed sees invalidates it, and the change stream assembles the fresh one before it tells the viewers, so their reads cost a page, not an assembly. Counts, choices and each query's matches are computed once per snapshot; a page is a slice. What the assembly itself costs (state tracker, the per-instance keys by one SCAN, the probe states, joined with the daemon's list): a read that had to wait for one took ${bigPages.firstMs.toFixed(0)} ms at ${instances} instances, ${smallPages.firstMs.toFixed(0)} ms at ${smallCount}.`,
          `A crash every ${crashEveryMs} ms: the same ${bigCrashing.n} requests while one of ${optedIn} opted-in instances (in turn) crashes every ${crashEveryMs} ms and Reflex restarts it (${bigCrashing.crashes} crashes at ${instances} instances, ${smallCrashing.crashes} at ${smallCount}); each crash and restart changes the fleet, so pages are cut from fresh snapshots. The event-loop stall is the longest delay of a 10 ms timer past its due time (perf_hooks monitorEventLoopDelay) in the bench process meanwhile, which runs Reflex and its console (the simulator runs in a process of its own, as the daemon does); the pages' median was ${bigCrashing.median.toFixed(1)} ms at ${instances} instances.`,
          `First render: headless Chromium, navigation start to the first page of rows drawn (performance.now() when the fleet table is filled), a fresh page each load with the dashboard cookie; ${bigRender.rows} rows drawn for ${instances} instances (the console paginates: the DOM never holds the whole fleet). The server assembles the fleet from the state tracker, the simulator's instance list (recursion=1, all projects) and one SCAN of the per-instance keys, shared by every viewer and page; the daemon's list is reused for 15 s, so the first of the loads waits for it and the others do not.`,
        ],
      };
    } finally {
      await browser.close();
      for (const f of fleets.reverse()) await f.stop().catch(() => undefined);
      await redis.stop();
    }
  },
  // 10k instances are tracked, listed and rendered several times over: on a loaded machine that takes longer than the default 240 s.
  { timeoutMs: 1_200_000 },
);
