import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { EventSubscriber } from '../../src/events/event-subscriber.js';
import { decodeFrame, type LifecycleFrame } from '../../src/events/frame.js';
import { keySpace } from '../../src/redis/key-space.js';
import { makeIdentity, type TestIdentity } from '../conformance/lxd-https.js';
import { freePort } from '../support/free-port.js';
import { describeBed, STATUS_RUNNING, STATUS_STOPPED } from '../support/daemon-bed.js';
import { clusterBed, memberLxc } from '../support/lxd-cluster-bed.js';
import { redisClient, redisUrl, reflexRunArgs, uniquePrefix } from '../support/redis.js';
import { startReflexProcess } from '../support/reflex-process.js';
import { runningTracked } from '../remediation/trail.js';

/** The members' HTTPS addresses of scripts/lxd-cluster-testbed.sh. */
const M1 = 'https://10.77.0.1:8443';
const M2 = 'https://10.77.0.2:8443';

/**
 * A cluster target on the real two-member LXD cluster, named by a dead address first (nothing
 * listens there) and then the members: calls, operations and the event stream go to a live member,
 * the cluster certificate pins both, and the target's identity stays the first address.
 */
await describeBed(clusterBed, 'a cluster target over HTTPS on the real LXD cluster fails over from a dead address', () => {
  let identity: TestIdentity;
  let serverCertFile = '';
  let dead = '';
  const created: string[] = [];
  const clients: InstanceClient[] = [];
  const connect = (addresses: string[]) => {
    const c = new InstanceClient(parseTarget(addresses.join(','), { certFile: identity.certFile, keyFile: identity.keyFile, serverCertFile }), {
      timeoutMs: 15_000,
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    identity = await makeIdentity('rt-cluster-failover');
    await memberLxc('m1', ['config', 'trust', 'add', identity.certFile]);
    const cert = (JSON.parse(await memberLxc('m1', ['query', '/1.0'])) as { environment: { certificate: string } }).environment.certificate;
    serverCertFile = join(mkdtempSync(join(tmpdir(), 'rt-cluster-cert-')), 'cluster.crt');
    writeFileSync(serverCertFile, cert);
    dead = `https://127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    for (const name of created) await clusterBed.remove(name);
    await memberLxc('m1', ['config', 'trust', 'remove', identity.fingerprint]).catch(() => undefined);
  });

  it("calls, an operation and the event stream reach a member; the members' urls are learnt and pinned alike", async () => {
    const c = connect([dead, M1]);
    expect((await c.server()).environment?.server_clustered).toBe(true);
    expect(c.transport.activeOrigin).toBe(M1);
    expect(c.target.url).toBe(dead);

    // A fresh client for the stream: its first connect goes to the dead address.
    const s = connect([dead, M1]);
    const frames: LifecycleFrame[] = [];
    const sub = new EventSubscriber({
      endpoint: () => s.eventsEndpoint(['lifecycle'], { allProjects: true }),
      onFrame: (raw) => {
        const d = decodeFrame(raw);
        if (d.ok && d.frame.type === 'lifecycle') frames.push(d.frame);
      },
      logger: pino({ level: 'silent' }),
      initialBackoffMs: 20,
    });
    const connected = once(sub, 'connected');
    sub.start();
    try {
      await connected;
      expect(s.transport.activeOrigin).toBe(M1);
      const name = await clusterBed.launch({ member: 'm2' });
      created.push(name);
      await clusterBed.crash(name);
      await clusterBed.waitForStatus(name, STATUS_STOPPED, 10_000);
      await expect
        .poll(() => frames.find((f) => f.metadata.action === 'instance-shutdown' && f.metadata.source === `/1.0/instances/${name}`)?.location, {
          timeout: 10_000,
          interval: 50,
        })
        .toBe('m2');
      // The start is sent once, to member 1, which forwards it; its operation is awaited there too.
      await (await c.changeState(name, { action: 'start' })).wait({ timeoutMs: 30_000 });
      expect((await c.getInstanceState(name)).status_code).toBe(STATUS_RUNNING);
    } finally {
      await sub.stop();
    }

    // One configured member is enough: the other's url comes from /1.0/cluster/members.
    const one = connect([M2]);
    expect((await one.clusterMembers()).map((m) => m.url).sort()).toEqual([M1, M2]);
    one.transport.failover(M2);
    expect(one.transport.activeOrigin).toBe(M1);
    expect((await one.server()).environment?.server_name).toBe('m1');
  }, 90_000);

  it("reflex run --target with the addresses comma-separated heals a crash on member 2, under the first address's keys", async () => {
    const prefix = uniquePrefix('clreal');
    const reflex = startReflexProcess(
      [
        'run',
        '--target',
        [dead, M1, M2].join(','),
        '--client-cert',
        identity.certFile,
        '--client-key',
        identity.keyFile,
        '--server-cert',
        serverCertFile,
        ...reflexRunArgs(prefix),
      ],
      { REFLEX_LOG_LEVEL: 'info' },
    );
    const redis = redisClient();
    try {
      await reflex.waitForLog('reflex running', 30_000);
      const name = await clusterBed.launch({ member: 'm2', config: { 'user.reflex.autorestart': 'true' } });
      created.push(name);
      await runningTracked(redisUrl(), prefix, name);
      await clusterBed.crash(name);
      await clusterBed.waitForStatus(name, STATUS_STOPPED, 5_000);
      await clusterBed.waitForStatus(name, STATUS_RUNNING, 20_000);
      const keys = keySpace(prefix);
      expect(await redis.get(keys.lease(dead)), 'the lease is under the first address').not.toBeNull();
      expect(await redis.hexists(keys.state(dead), `default/${name}`)).toBe(1);
      for (const other of [M1, M2]) expect(await redis.get(keys.lease(other))).toBeNull();
    } finally {
      await reflex.stop();
      redis.disconnect();
    }
  }, 90_000);
});
