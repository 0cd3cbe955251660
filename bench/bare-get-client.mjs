// @ts-check
import { readFileSync } from 'node:fs';

/**
 * The baseline process of bench/probes-deployment.ts: bare GETs of each instance's endpoint, sent
 * by a process of their own at a given rate, as an SRE's script would send them beside `reflex run`.
 * Plain JavaScript, so no TypeScript loader runs in the measured process.
 *
 * `node bench/bare-get-client.mjs FILE PORT RATE WARM_SECONDS WINDOW_SECONDS MODE [TARGET]`
 * - FILE: JSON `[{ name, address }]` of the instances;
 * - MODE `get`: a `fetch` of `http://ADDRESS:PORT/healthz` (the probe's own call: a timeout, no redirect), one at a time;
 * - MODE `state+get`: first the instance's state from the daemon at TARGET (`unix:///path`) through
 *   Reflex's own client (dist/), for the address, as the probe runner reads it before each http check.
 * Warms up WARM_SECONDS unmeasured, prints `window`, then after WINDOW_SECONDS one JSON line: the
 * GETs and the CPU seconds (`process.cpuUsage()`: user + system of every thread) of the window.
 */
const [file, portArg, rateArg, warmArg, windowArg, mode, target] = process.argv.slice(2);
/** @type {{ name: string; address: string }[]} */
const instances = JSON.parse(readFileSync(String(file), 'utf8'));
const port = Number(portArg);
const rate = Number(rateArg);
/** @type {((name: string) => Promise<string | undefined>) | undefined} */
let stateAddress;
if (mode === 'state+get') {
  const { InstanceClient } = await import('../dist/client/client.js');
  const { parseTarget } = await import('../dist/client/target.js');
  const { addressOf } = await import('../dist/probes/probe-check.js');
  const client = new InstanceClient(parseTarget(target));
  stateAddress = async (name) => addressOf(await client.getInstanceState(name));
} else if (mode !== 'get') throw new Error(`unknown mode ${mode}`);

let failures = 0;
/** @param {number} i */
async function check(i) {
  const inst = instances[i % instances.length];
  try {
    const address = stateAddress ? await stateAddress(inst.name) : inst.address;
    const res = await fetch(`http://${address}:${port}/healthz`, { signal: AbortSignal.timeout(5_000), redirect: 'manual' });
    await res.text();
    if (res.status >= 400) failures++;
  } catch {
    failures++;
  }
}

/**
 * One GET at a time, as many as the rate has made due since the start, then 50 ms of sleep.
 * @param {number} seconds
 */
async function paced(seconds) {
  const t0 = Date.now();
  let sent = 0;
  while (Date.now() - t0 < seconds * 1000) {
    const due = Math.floor(((Date.now() - t0) / 1000) * rate);
    for (; sent < due; sent++) await check(sent);
    await new Promise((r) => setTimeout(r, 50));
  }
  return sent;
}

await paced(Number(warmArg));
failures = 0;
// The parent reads the simulator's CPU at this line and at the exit: the daemon's side of the window's GETs.
process.stdout.write('window\n');
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const gets = await paced(Number(windowArg));
const u = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ gets, failures, cpu: (u.user + u.system) / 1e6, seconds: (performance.now() - t0) / 1000 })}\n`);
process.exit(0);
