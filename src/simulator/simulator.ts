import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { generate } from 'selfsigned';
import { buildRouter, handleRequest, logRequest } from './app.js';
import { ClusterMembers } from './cluster.js';
import { CallCounter, type SimContext } from './context.js';
import { SimulatorControls } from './controls.js';
import { EventHub } from './event-hub.js';
import { EventsEndpoint } from './events-endpoint.js';
import { FaultBook } from './faults.js';
import { ConsoleSockets } from './exec/console-sockets.js';
import { ExecSockets } from './exec/exec-sockets.js';
import { ExecRecords } from './exec/exec-records.js';
import { GuestNetwork } from './guest/guest-network.js';
import { Guests } from './guest/guests.js';
import { assertShellPatched } from './guest/shell-patch.js';
import { IdSource } from './ids.js';
import { ImageAliases } from './image-aliases.js';
import { ImageStore } from './image-store.js';
import { NetworkStore } from './network-store.js';
import { StoragePools } from './storage-pools.js';
import { simImages } from './handlers/images.js';
import { InstanceActions } from './instance-actions.js';
import { InstanceStore } from './instance-store.js';
import { LifecycleEmitter } from './lifecycle.js';
import { MemberListeners } from './member-listeners.js';
import { OperationRegistry } from './operations.js';
import { resolveOptions, type SimulatorOptions } from './options.js';
import { seedPopulation } from './population.js';
import { isSftpUpgrade, upgradeSftp } from './sftp/sftp-endpoint.js';
import { certificateFingerprint, TrustStore } from './trust-store.js';
import { parseListen, Transport, type Identity } from './transport.js';

/** A running simulator. */
export interface RunningSimulator {
  /** Path of the unix socket, when listening on one. */
  socketPath: string | undefined;
  /** `https://host:port`, when listening on HTTPS. */
  httpsUrl: string | undefined;
  /** PEM of the HTTPS server certificate (pin it in clients), when listening on HTTPS. */
  serverCertificate: string | undefined;
  /** Fault injection and inspection. */
  controls: SimulatorControls;
  /** Cluster mode with `memberListeners`: each member's own address, to take away and give back. */
  memberListeners: MemberListeners | undefined;
  /** The first guest port: where each running instance's HTTP endpoint listens on its address (a probe's `port`). */
  guestPort: number;
  /** Every guest port (option `guestPorts`). */
  guestPorts: readonly number[];
  /** Stops listening, cuts event sockets and removes the temporary socket directory. */
  stop(): Promise<void>;
}

/**
 * Starts the embedded instance service: a simulator of the LXD/Incus REST API (seed + LXD 5.0.2
 * behaviour; docs/simulator.md lists every choice and every known difference).
 *
 * @example
 * const sim = await startSimulator({ instances: 3, timings: { startMs: 5 } });
 * // curl --unix-socket ${sim.socketPath} http://x/1.0/instances?recursion=1
 * await sim.stop();
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  await assertShellPatched();
  const tempDir = options.listen?.length ? undefined : mkdtempSync(join(tmpdir(), 'reflex-sim-'));
  const opts = resolveOptions(options, join(tempDir ?? tmpdir(), 'unix.socket'));
  const specs = opts.listen.map(parseListen);
  const wantsHttps = specs.some((s) => s.kind === 'https') || Boolean(opts.cluster?.memberListeners);
  const tls = wantsHttps ? (opts.tls ?? (await selfSignedPair())) : undefined;

  const ids = new IdSource(opts.seed);
  const cluster = opts.cluster ? new ClusterMembers(opts.cluster.members) : undefined;
  const hub = new EventHub(opts.events, opts.utcSuffix, cluster?.serverName);
  const trust = new TrustStore();
  for (const pem of opts.trustedCertificates) trust.add(pem);
  const guestNet = await GuestNetwork.open(opts.guestPorts);
  const ctx: SimContext = {
    opts,
    ids,
    hub,
    trust,
    aliases: new ImageAliases(simImages),
    images: new ImageStore(simImages),
    networks: new NetworkStore(),
    pools: new StoragePools(),
    execSockets: new ExecSockets(),
    consoleSockets: new ConsoleSockets(opts.revision),
    guests: new Guests(
      (inst, script) => guestNet.script({ ...script, instance: inst.name, project: inst.project }),
      (inst) => ctx.actions.crash(inst),
    ),
    guestNet,
    execRecords: new ExecRecords(),
    store: new InstanceStore(opts.projects, ids, cluster, opts.revision, guestNet),
    ops: new OperationRegistry(hub, ids, opts.revision, opts.utcSuffix, opts.timings.operationRetentionMs, cluster?.serverName),
    lifecycle: new LifecycleEmitter(hub, opts.revision),
    faults: new FaultBook(),
    calls: new CallCounter(),
    actions: undefined as unknown as InstanceActions,
    serverTls: undefined,
    cluster,
    restarting: false,
  };
  ctx.actions = new InstanceActions(ctx);
  seedPopulation(ctx, opts.instances);

  const events = new EventsEndpoint(ctx);
  let transport: Transport;
  const restart = async (downtimeMs: number): Promise<void> => {
    ctx.restarting = true;
    hub.dropAll();
    await transport.close();
    ctx.ops.clear();
    await new Promise((r) => setTimeout(r, downtimeMs));
    await transport.listen();
    ctx.restarting = false;
  };
  const controls = new SimulatorControls(ctx, restart);
  // Operation websockets (exec, console) are reached with their secret alone, trusted or not, as in LXD.
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer, id: Identity): void => {
    logRequest(ctx, req, id);
    const opSocket = /^\/1\.0\/operations\/([^/]+)\/websocket$/.exec(new URL(req.url ?? '/', 'http://sim').pathname);
    if (opSocket) (ctx.consoleSockets.has(opSocket[1]!) ? ctx.consoleSockets : ctx.execSockets).upgrade(req, socket, head, opSocket[1]!);
    else if (isSftpUpgrade(req)) void upgradeSftp(ctx, req, socket, head, id).catch(() => socket.destroy());
    else events.upgrade(req, socket, head, id);
  };
  const router = buildRouter(ctx, controls);
  transport = new Transport(
    specs,
    { request: (req, res, id) => handleRequest(ctx, router, req, res, id), upgrade: (req, socket, head, id) => upgrade(req, socket, head, id) },
    tls,
  );
  const memberListeners =
    cluster && opts.cluster?.memberListeners
      ? new MemberListeners(cluster, { request: (req, res, id) => handleRequest(ctx, router, req, res, id), upgrade }, tls!)
      : undefined;
  try {
    await transport.listen();
    await memberListeners?.listen();
  } catch (err) {
    // Nothing stays open behind a failed start: `reflex sim` exits instead of holding the first socket.
    hub.close();
    await memberListeners?.close();
    await transport.close();
    await guestNet.close();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    throw err;
  }
  if (tls)
    ctx.serverTls = {
      cert: tls.cert,
      fingerprint: certificateFingerprint(tls.cert),
      addresses: transport.httpsUrl ? [transport.httpsUrl.slice('https://'.length)] : [],
    };

  return {
    socketPath: transport.socketPath,
    httpsUrl: transport.httpsUrl,
    serverCertificate: tls?.cert,
    controls,
    memberListeners,
    guestPort: guestNet.ports[0]!,
    guestPorts: guestNet.ports,
    async stop() {
      hub.close();
      events.close();
      ctx.execSockets.close();
      ctx.consoleSockets.close();
      ctx.guests.close();
      await guestNet.close();
      await memberListeners?.close();
      await transport.close();
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    },
  };
}

async function selfSignedPair(): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: 'reflex-sim' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  } as Parameters<typeof generate>[1]);
  return { cert: pems.cert, key: pems.private };
}
