import { connect } from 'node:net';
import { ApiError } from '../client/api-error.js';
import type { InstanceClient } from '../client/client.js';
import type { ExecSession } from '../client/exec.js';
import type { Probe } from './probe.js';
import type { ProbeOutcome } from './probe-state.js';

/** What one check found, with the tail of what it said and how long it took. */
export interface CheckResult {
  outcome: ProbeOutcome;
  /** Exit code and output of an exec, the status of an http call, the error: its last 512 characters. */
  output: string;
  durationMs: number;
}

/** How long past the probe's timeout the daemon may take to set up and tear down an exec before the check is `unknown`. */
const DAEMON_GRACE_MS = 5_000;
const TAIL = 512;

const tail = (text: string) => (text.length > TAIL ? text.slice(-TAIL) : text);

/**
 * Runs one check of `probe` on an instance. `client` is scoped to the instance's project; `address`
 * is the instance's address from its state (http and tcp without `host`), undefined when it has none.
 * Never throws: a check that cannot run is `unknown`.
 */
export async function runCheck(probe: Probe, client: InstanceClient, instance: string, address: string | undefined): Promise<CheckResult> {
  const started = Date.now();
  const done = (outcome: ProbeOutcome, output: string): CheckResult => ({ outcome, output: tail(output), durationMs: Date.now() - started });
  try {
    if (probe.check === 'exec') return await execCheck(probe, client, instance, done);
    const host = probe.host ?? address;
    if (!host) return done('unknown', 'the instance has no address in its state (give the probe a host)');
    if (probe.check === 'tcp') return await tcpCheck(host, probe.port!, probe.timeoutMs, done);
    return await httpCheck(probe, host, done);
  } catch (err) {
    return done('unknown', `the check could not run: ${(err as Error).message}`);
  }
}

type Done = (outcome: ProbeOutcome, output: string) => CheckResult;

/**
 * An exec through the daemon: exit 0 is a success, another code a failure, and so is a command
 * that outlived the timeout (killed). Refused by the daemon, or no exit code, or a daemon that does
 * not answer within the timeout and a grace: `unknown`.
 */
async function execCheck(probe: Probe, client: InstanceClient, instance: string, done: Done): Promise<CheckResult> {
  const deadline = AbortSignal.timeout(probe.timeoutMs + DAEMON_GRACE_MS);
  let session: ExecSession | undefined;
  try {
    session = await client.exec(instance, { command: probe.command! }, { timeoutMs: probe.timeoutMs, maxOutputBytes: 4096, signal: deadline });
    const res = await session.wait({ signal: deadline });
    const said = [res.stdout.trim(), res.stderr.trim()].filter(Boolean).join('\n');
    if (res.timedOut) return done('failure', `timed out after ${probe.timeoutMs} ms (killed)${said ? `: ${said}` : ''}`);
    if (res.exitCode === undefined)
      return done('unknown', `no exit code (operation ${res.operation.status}${res.operation.err ? `: ${res.operation.err}` : ''})`);
    return done(res.exitCode === 0 ? 'success' : 'failure', `exit ${res.exitCode}${said ? `: ${said}` : ''}`);
  } catch (err) {
    session?.close();
    if (deadline.aborted) return done('unknown', `the daemon did not answer the exec within ${probe.timeoutMs + DAEMON_GRACE_MS} ms`);
    const what = err instanceof ApiError ? `${err.code}: ${err.message}` : (err as Error).message;
    return done('unknown', `exec refused: ${what}`);
  }
}

async function tcpCheck(host: string, port: number, timeoutMs: number, done: Done): Promise<CheckResult> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const finish = (outcome: ProbeOutcome, output: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(done(outcome, output));
    };
    const timer = setTimeout(() => finish('failure', `no connection to ${host}:${port} within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => finish('success', `connected to ${host}:${port}`));
    socket.once('error', (err) => finish('failure', `${host}:${port}: ${err.message}`));
  });
}

/** A GET: 200–399 is a success (redirects are not followed), anything else, no answer or a timeout a failure. */
async function httpCheck(probe: Probe, host: string, done: Done): Promise<CheckResult> {
  const url = httpUrl(probe, host);
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(probe.timeoutMs), redirect: 'manual' });
    const body = await res.text().catch(() => '');
    const ok = res.status >= 200 && res.status < 400;
    return done(ok ? 'success' : 'failure', `GET ${url}: ${res.status}${body ? ` ${body.slice(0, 200)}` : ''}`);
  } catch (err) {
    const e = err as Error & { cause?: Error };
    if (e.name === 'TimeoutError') return done('failure', `GET ${url}: no answer within ${probe.timeoutMs} ms`);
    return done('failure', `GET ${url}: ${e.cause?.message ?? e.message}`);
  }
}

/** The URL of an http probe on `host`: its url as given when absolute, else the path on the host and port. */
export function httpUrl(probe: Pick<Probe, 'url' | 'port'>, host: string): string {
  if (probe.url && /^https?:\/\//.test(probe.url)) return probe.url;
  const path = probe.url ? (probe.url.startsWith('/') ? probe.url : `/${probe.url}`) : '/';
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${h}:${probe.port ?? 80}${path}`;
}

/** The instance's first global IPv4 address (then IPv6) outside loopback, from its state's `network`. */
export function addressOf(state: unknown): string | undefined {
  const network = (state as { network?: Record<string, { addresses?: { family?: string; address?: string; scope?: string }[] }> } | undefined)
    ?.network;
  if (!network) return undefined;
  const all = Object.entries(network)
    .filter(([name]) => name !== 'lo')
    .flatMap(([, nic]) => nic.addresses ?? [])
    .filter((a) => a.address && a.scope !== 'link' && a.scope !== 'local');
  return (all.find((a) => a.family === 'inet') ?? all.find((a) => a.family === 'inet6'))?.address;
}
