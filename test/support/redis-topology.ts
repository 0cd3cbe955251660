import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../src/redis/private-redis.js';
import { freePort } from './free-port.js';
import { sleep, until } from './wait.js';

/**
 * Real multi-node Redis set-ups for the test run, the chaos scenario and the bench, on free
 * loopback ports with their data in a temp dir: a 6-node Redis Cluster (3 masters, 3 replicas)
 * and a Sentinel set-up (one master, one replica, three sentinels). Each gives the URL in the
 * form `reflex --redis` takes (`redis-cluster://…`, `redis-sentinel://…/NAME`).
 */
export type TopologyKind = 'single' | 'cluster' | 'sentinel';

export interface RedisTopology {
  kind: TopologyKind;
  url: string;
  stop(): Promise<void>;
}

export interface RedisClusterBed extends RedisTopology {
  kind: 'cluster';
  /** The ports of the six nodes, in creation order (the first three start as masters). */
  ports: number[];
  /** The port of the master serving `key`'s hash slot now. */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs the node on `port`, as a crash of its host would. */
  kill(port: number): void;
  /** Waits until another node serves the slots `deadPort` served and the cluster is ok again; returns that node's port. */
  waitForPromotion(deadPort: number, slotKey: string, timeoutMs?: number): Promise<number>;
}

export interface RedisSentinelBed extends RedisTopology {
  kind: 'sentinel';
  masterName: string;
  masterPort: number;
  replicaPort: number;
  sentinelPorts: number[];
  /** SIGKILLs the redis-server the sentinels name as master now; returns its port. */
  killMaster(): Promise<number>;
  /** Waits until the sentinels name another master than `deadPort` and it answers as master; returns its port. */
  waitForFailover(deadPort: number, timeoutMs?: number): Promise<number>;
}

/** Runs one command on one node with a throw-away connection that never retries. */
async function ask(port: number, ...args: (string | number)[]): Promise<unknown> {
  const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  c.on('error', () => {}); // refused while the node starts or after it was killed: the caller polls
  try {
    await c.connect();
    return await c.call(String(args[0]), ...args.slice(1).map(String));
  } finally {
    c.disconnect();
  }
}

function infoField(info: unknown, field: string): string | undefined {
  return String(info).match(new RegExp(`^${field}:(\\S+)`, 'm'))?.[1];
}

/** A redis-server we spawned ourselves (cluster nodes, sentinels): private-redis has no room for their options. */
class Node {
  private readonly child: ChildProcess;
  private killed = false;

  constructor(
    readonly port: number,
    args: string[],
  ) {
    this.child = spawn('redis-server', args, { stdio: 'ignore' });
  }

  get alive(): boolean {
    return !this.killed && this.child.exitCode === null && this.child.signalCode === null;
  }

  async ready(): Promise<void> {
    await until(
      `redis-server on port ${this.port} to answer`,
      async () => {
        if (!this.alive) throw new Error(`redis-server on port ${this.port} exited`);
        return (await ask(this.port, 'PING')) === 'PONG' ? true : undefined;
      },
      10_000,
      50,
    );
  }

  kill(): void {
    if (this.alive) this.child.kill('SIGKILL');
    this.killed = true;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await Promise.race([exited, sleep(5_000)]); // a bound on the wait for a clean exit, then SIGKILL
    this.kill();
  }
}

function requireRedisServer(): void {
  if (spawnSync('redis-server', ['--version']).error)
    throw new Error('redis-topology needs redis-server and redis-cli (Debian: apt-get install redis-server)');
}

/**
 * Starts six `redis-server --cluster-enabled yes --appendonly yes` nodes, joins them with
 * `redis-cli --cluster create … --cluster-replicas 1`, and waits until every node reports
 * `cluster_state:ok` and every replica is in sync. A short node timeout makes a killed master's
 * replica take over within seconds.
 */
export async function startRedisCluster(opts: { nodeTimeoutMs?: number } = {}): Promise<RedisClusterBed> {
  requireRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'reflex-redis-cluster-'));
  const nodes: Node[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const taken = new Set<number>();
    const unusedPort = async (): Promise<number> => {
      for (;;) {
        const p = await freePort(); // the OS may hand out a port it just handed out: skip those
        if (!taken.has(p)) return (taken.add(p), p);
      }
    };
    for (let i = 0; i < 6; i++) {
      const port = await unusedPort();
      // The bus port defaults to port + 10 000, which may be taken or above 65 535: pick a free one too.
      const busPort = await unusedPort();
      const nodeDir = join(dir, String(port));
      mkdirSync(nodeDir);
      nodes.push(
        new Node(port, [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          nodeDir,
          '--daemonize',
          'no',
          '--save',
          '',
          '--appendonly',
          'yes',
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          String(opts.nodeTimeoutMs ?? 2_000),
          // A replica may take over however long it was cut off: the bed has no operator to decide.
          '--cluster-replica-validity-factor',
          '0',
        ]),
      );
    }
    await Promise.all(nodes.map((n) => n.ready()));
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create exited ${create.status}: ${create.stdout.slice(-1500)}${create.stderr}`);
    await clusterSettled(nodes, 60_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const ports = nodes.map((n) => n.port);
  const live = () => nodes.filter((n) => n.alive);
  const slotOwner = async (slot: number): Promise<number | undefined> => {
    for (const n of live()) {
      try {
        const slots = (await ask(n.port, 'CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][];
        const hit = slots.find(([from, to]) => slot >= from && slot <= to);
        if (hit) return Number(hit[2][1]);
      } catch {
        // a node that is going down: ask the next
      }
    }
    return undefined;
  };
  return {
    kind: 'cluster',
    url: `redis-cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    ports,
    async masterOf(key) {
      const slot = Number(await ask(live()[0]!.port, 'CLUSTER', 'KEYSLOT', key));
      return until(`the master of slot ${slot}`, () => slotOwner(slot), 10_000);
    },
    kill(port) {
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`no cluster node on port ${port}`);
      node.kill();
    },
    async waitForPromotion(deadPort, slotKey, timeoutMs = 30_000) {
      const survivors = live();
      const slot = Number(await ask(survivors[0]!.port, 'CLUSTER', 'KEYSLOT', slotKey));
      return until(
        `a replica to take over from port ${deadPort}`,
        async () => {
          const owners = await Promise.all(
            survivors.map(async (n) => {
              const [owner, state] = [await slotOwnerSeenBy(n.port, slot), infoField(await ask(n.port, 'CLUSTER', 'INFO'), 'cluster_state')];
              return state === 'ok' ? owner : undefined;
            }),
          );
          const first = owners[0];
          return first !== undefined && first !== deadPort && owners.every((o) => o === first) ? first : undefined;
        },
        timeoutMs,
        100,
      );
    },
    stop,
  };
}

async function slotOwnerSeenBy(port: number, slot: number): Promise<number | undefined> {
  const slots = (await ask(port, 'CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][];
  const hit = slots.find(([from, to]) => slot >= from && slot <= to);
  return hit ? Number(hit[2][1]) : undefined;
}

/** Every node ok, knowing all six, every slot covered, every replica's link to its master up. */
async function clusterSettled(nodes: Node[], ms: number): Promise<void> {
  await until(
    'cluster_state:ok on every node',
    async () => {
      for (const n of nodes) {
        const info = await ask(n.port, 'CLUSTER', 'INFO');
        if (
          infoField(info, 'cluster_state') !== 'ok' ||
          infoField(info, 'cluster_known_nodes') !== String(nodes.length) ||
          infoField(info, 'cluster_slots_ok') !== '16384'
        )
          return undefined;
        const repl = await ask(n.port, 'INFO', 'replication');
        if (infoField(repl, 'role') === 'slave' && infoField(repl, 'master_link_status') !== 'up') return undefined;
      }
      return true;
    },
    ms,
    200,
  );
}

/**
 * Starts a Sentinel set-up: a master and a replica (private redis-servers, AOF on) and three
 * sentinels monitoring the master under `masterName` with a quorum of 2 and short timeouts.
 */
export async function startRedisSentinel(masterName = 'reflex'): Promise<RedisSentinelBed> {
  requireRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'reflex-redis-sentinel-'));
  const servers: PrivateRedis[] = [];
  const sentinels: Node[] = [];
  const stop = async () => {
    await Promise.all(sentinels.map((s) => s.stop()));
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  const portOf = (r: PrivateRedis) => Number(new URL(r.url).port);
  try {
    servers.push(await startPrivateRedis({ appendonly: true }), await startPrivateRedis({ appendonly: true }));
    const [masterPort, replicaPort] = servers.map(portOf) as [number, number];
    await ask(replicaPort, 'REPLICAOF', '127.0.0.1', masterPort);
    await until(
      'the replica to sync',
      async () => (infoField(await ask(replicaPort, 'INFO', 'replication'), 'master_link_status') === 'up' ? true : undefined),
      20_000,
    );
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${masterName} 1000`,
          `sentinel failover-timeout ${masterName} 5000`,
          `sentinel parallel-syncs ${masterName} 1`,
          '',
        ].join('\n'),
      );
      sentinels.push(new Node(port, [conf, '--sentinel']));
    }
    await Promise.all(sentinels.map((s) => s.ready()));
    await until(
      'every sentinel to know the master, its replica and the other sentinels',
      async () => {
        for (const s of sentinels) {
          const addr = (await ask(s.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as string[] | null;
          const replicas = (await ask(s.port, 'SENTINEL', 'REPLICAS', masterName)) as unknown[];
          const peers = (await ask(s.port, 'SENTINEL', 'SENTINELS', masterName)) as unknown[];
          if (Number(addr?.[1]) !== masterPort || replicas.length < 1 || peers.length < 2) return undefined;
        }
        return true;
      },
      30_000,
      200,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  const [masterPort, replicaPort] = servers.map(portOf) as [number, number];
  const sentinelPorts = sentinels.map((s) => s.port);
  const currentMaster = async (): Promise<number> =>
    Number(((await ask(sentinelPorts[0]!, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as string[])[1]);
  return {
    kind: 'sentinel',
    url: `redis-sentinel://${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${masterName}`,
    masterName,
    masterPort,
    replicaPort,
    sentinelPorts,
    stop,
    async killMaster() {
      const port = await currentMaster();
      const pid = Number(infoField(await ask(port, 'INFO', 'server'), 'process_id'));
      process.kill(pid, 'SIGKILL');
      return port;
    },
    async waitForFailover(deadPort, timeoutMs = 30_000) {
      return until(
        'the sentinels to promote the replica',
        async () => {
          const port = await currentMaster();
          if (port === deadPort) return undefined;
          return infoField(await ask(port, 'INFO', 'replication'), 'role') === 'master' ? port : undefined;
        },
        timeoutMs,
        100,
      );
    },
  };
}

/** The set-up `kind` names: a single private redis-server (AOF on), a 6-node cluster or a sentinel set-up. */
export async function startRedisTopology(kind: TopologyKind): Promise<RedisTopology> {
  if (kind === 'cluster') return startRedisCluster();
  if (kind === 'sentinel') return startRedisSentinel();
  const single = await startPrivateRedis({ appendonly: true });
  return { kind, url: single.url, stop: () => single.stop() };
}

/** Reads `REFLEX_TEST_REDIS` (single, the default; cluster; sentinel). */
export function topologyFromEnv(value = process.env.REFLEX_TEST_REDIS): TopologyKind {
  const kind = value || 'single';
  if (kind !== 'single' && kind !== 'cluster' && kind !== 'sentinel')
    throw new Error(`REFLEX_TEST_REDIS=${value}: expected single, cluster or sentinel`);
  return kind;
}
