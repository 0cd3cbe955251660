import WebSocket from 'ws';
import { InstanceClient } from '../client/client.js';
import { targetsOf } from '../config/config-target.js';
import type { Target } from '../client/target.js';
import type { Config } from '../config/config.js';
import { checkRules, formatProblem } from '../rules/rule-checker.js';
import { daemonProfile, type ServerInfo } from './daemon-profile.js';
import type { DoctorCheck } from './doctor-check.js';
import { checkRedis } from './redis-checks.js';
import { checkRetention } from './retention-checks.js';
import { checkQueues, checkReadiness } from './health-checks.js';
import { checkHistory } from './history-check.js';
import { redactText } from '../log/redaction.js';

/** What the doctor reports beside the configuration itself. */
export interface DoctorOptions {
  /** The configuration file that was read, if any (shown as the first check). */
  configFile?: string;
}

/** Runs every check; never throws. */
export async function runDoctor(config: Config, opts: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [
    { name: 'config', ok: true, detail: opts.configFile ? `read ${opts.configFile}` : 'no config file (defaults, environment and flags only)' },
  ];
  checks.push(...(await checkRedis(config.redisUrl)));
  checks.push(...(await checkQueues(config)));
  checks.push(await checkHistory(config));
  checks.push(...(await checkRetention(config)));
  let targets: { name?: string; target: () => Target }[];
  try {
    const all = targetsOf(config);
    targets = all.map((t) => ({ name: all.length > 1 ? t.name : undefined, target: () => t.target }));
  } catch (err) {
    // An unusable target is one failed check, like the others, not a crash of the doctor.
    targets = [
      {
        target: () => {
          throw err;
        },
      },
    ];
  }
  for (const t of targets) checks.push(...(await checkTarget(t.target, t.name)));
  checks.push(...(await checkReadiness(config)));
  try {
    const { rules, problems } = await checkRules(config.rulesDir);
    checks.push({
      name: 'rules',
      ok: problems.length === 0,
      detail: problems.length ? problems.map(formatProblem).join('\n    ') : `${rules.length} rule(s) load and type-check: ${rules.join(', ')}`,
      ...(problems.length ? { fix: 'fix the files above (reflex rules check shows the same)' } : {}),
    });
  } catch (err) {
    checks.push({ name: 'rules', ok: false, detail: (err as Error).message, fix: `check --rules / REFLEX_RULES (now ${config.rulesDir})` });
  }
  // Error texts quote URLs and replies; whatever a check says, no credential leaves the doctor.
  return checks.map((c) => ({ ...c, detail: redactText(c.detail), ...(c.fix === undefined ? {} : { fix: redactText(c.fix) }) }));
}

/** Reachability, trust and TLS pin of one target, and its events WebSocket. */
async function checkTarget(configured: () => Target, label: string | undefined): Promise<DoctorCheck[]> {
  const out: DoctorCheck[] = [];
  let client: InstanceClient | undefined;
  const named = (name: string) => (label ? `${name}:${label}` : name);
  try {
    const target = configured();
    client = new InstanceClient(target, { timeoutMs: 5_000 });
    const server = (await client.server()) as ServerInfo & { auth?: string };
    const trusted = server.auth === 'trusted';
    out.push({
      name: named('target'),
      ok: trusted,
      detail: `${target.url}: ${server.environment?.server ?? 'server'} ${server.environment?.server_version ?? ''}, ${server.api_extensions?.length ?? 0} API extensions, client ${server.auth ?? 'unknown'}`,
      ...(trusted ? {} : { fix: 'add this client certificate to the server trust store: lxc config trust add client.crt (or use a trust token)' }),
    });
    const daemon = daemonProfile(server);
    out.push({ name: named('daemon'), ok: true, detail: `${daemon.product} ${daemon.version}` });
    for (const w of daemon.warnings) out.push({ name: named('daemon'), ok: true, warning: true, detail: w });
    const ws = await new Promise<string | undefined>((resolve) => {
      const ep = client!.eventsEndpoint(['operation', 'lifecycle']);
      const socket = new WebSocket(ep.url, { ...ep.options, handshakeTimeout: 5_000 } as WebSocket.ClientOptions);
      socket.once('open', () => (socket.terminate(), resolve(undefined)));
      socket.once('error', (err) => resolve(err.message));
    });
    out.push({
      name: named('events'),
      ok: !ws,
      detail: ws ?? 'events WebSocket opens',
      ...(ws ? { fix: 'the events endpoint must be reachable with the same identity as the API' } : {}),
    });
  } catch (err) {
    const e = err as { code?: string; message: string };
    const fix =
      e.code === 'TLS_PIN_MISMATCH'
        ? 'the server certificate changed or the pin is wrong: fetch the right one (lxc remote add) or fix --server-cert'
        : e.code === 'TLS_CLIENT_UNTRUSTED' || e.code === 'TLS_CLIENT_CERT_MISSING'
          ? 'trust this client: lxc config trust add client.crt'
          : /\bEACCES\b/.test(e.message)
            ? "this user may not open the socket: give it the socket's group (stat -c %G SOCKET): usermod -aG GROUP USER, SupplementaryGroups= in deploy/reflex.service, or in a container group_add with the numeric gid (stat -c %g SOCKET)"
            : 'check --target / REFLEX_TARGET and that the daemon runs (lxc info)';
    out.push({ name: named('target'), ok: false, detail: `${e.code ?? 'ERROR'}: ${e.message}`, fix });
  } finally {
    await client?.close().catch(() => undefined);
  }
  return out;
}
