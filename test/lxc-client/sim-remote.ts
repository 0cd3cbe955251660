import WebSocket from 'ws';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';
import { incusBed, lxdBed } from '../support/daemon-bed.js';
import { LxcCli, lxcInstalled } from '../support/lxc-cli.js';
import { fastTimings } from '../simulator/sim-client.js';

/** A simulator on a unix socket and HTTPS, and a private `lxc` client that can add it as a remote. */
export interface SimRemote {
  sim: RunningSimulator;
  lxc: LxcCli;
  /** Every request the simulator handled since the last `clearRequests()`, as "METHOD /path?query". */
  requests(): string[];
  clearRequests(): void;
  close(): Promise<void>;
}

/**
 * Starts the simulator (fast timings unless given) listening on a temporary unix socket and
 * https://127.0.0.1:0, with a private config directory for `client` (default `lxc`). Requests are recorded from the
 * simulator's own logging events ("Handling API request"), as a real daemon reports them.
 */
export async function startSimRemote(opts: SimulatorOptions = {}, client: 'lxc' | 'incus' = 'lxc'): Promise<SimRemote> {
  const lxc = new LxcCli({ client });
  const sim = await startSimulator({
    listen: [`unix:${lxc.confDir}/sim.socket`, 'https://127.0.0.1:0'],
    ...opts,
    timings: { ...fastTimings, operationRetentionMs: 5000, ...opts.timings },
  });
  const seen: string[] = [];
  const ws = new WebSocket(`ws+unix://${sim.socketPath}:/1.0/events?type=logging`);
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { metadata: { message: string; context: { method: string; url: string; protocol: string } } };
    // Only the lxc client's requests (HTTPS), not this tap's own.
    if (frame.metadata.message === 'Handling API request' && frame.metadata.context.protocol === 'tls')
      seen.push(`${frame.metadata.context.method} ${frame.metadata.context.url}`);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    sim,
    lxc,
    requests: () => [...seen],
    clearRequests: () => void seen.splice(0),
    async close() {
      ws.close();
      await sim.stop();
      lxc.close();
    },
  };
}

/**
 * An exec on a real daemon run again while its output is the expected one cut short (each stream a
 * start of what is expected, not all of it), five runs at most: LXD 5.0.2 and Incus 6.0 can close
 * an exec's output streams before the last of it under load (canonical/lxd#11890; Incus has lost a
 * stream's whole text). The race only loses output, so any other output is returned at once, to fail.
 */
export async function wholeOutput<T extends { stdout: string; stderr: string }>(
  run: () => Promise<T>,
  expected: { stdout: string; stderr: string },
): Promise<T> {
  const cutShort = (r: T) =>
    (r.stdout !== expected.stdout || r.stderr !== expected.stderr) && expected.stdout.startsWith(r.stdout) && expected.stderr.startsWith(r.stderr);
  let res = await run();
  for (let runs = 1; runs < 5 && cutShort(res); runs++) res = await run();
  return res;
}

/**
 * A describe that needs the `lxc` client binary: skipped without it, failing instead under
 * REFLEX_REQUIRE_LXD=1 (CI installs the Debian lxd package, which brings the client).
 */
export function describeLxcClient(name: string, body: () => void): void {
  if (lxcInstalled()) return void describe(name, body);
  if (lxdBed.required())
    return void describe(name, () =>
      it('needs the lxc client', () => {
        throw new Error('lxc client not on PATH (REFLEX_REQUIRE_LXD=1)');
      }),
    );
  describe.skip(name, body);
}

/**
 * The lxc client against LXD 5.0.2's test bed (`local:`), or the incus client against Incus 6.0's,
 * with an instance launched for the suite (inside a `describeBed` body) and removed after it: the
 * remote and the instance's `local:NAME`.
 */
export function lxcOnBed(client: 'lxc' | 'incus' = 'lxc'): { remote: () => SimRemote; target: () => string } {
  const bed = client === 'incus' ? incusBed : lxdBed;
  let real: SimRemote | undefined;
  let name = '';
  beforeAll(async () => {
    real = await startSimRemote({}, client);
    // The client's first run in a fresh config directory prints a welcome first: have it now.
    await real.lxc.run(['list', 'local:', '--format', 'csv', '-c', 'n']);
    name = await bed.launch();
  }, 120_000);
  afterAll(async () => {
    if (name) await bed.remove(name);
    await real?.close();
  });
  return { remote: () => real!, target: () => `local:${name}` };
}
