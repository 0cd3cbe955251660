import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { generate } from 'selfsigned';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget, type Target } from '../../src/client/target.js';
import { EventSubscriber } from '../../src/events/event-subscriber.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { until } from '../support/wait.js';

describe('a target naming several addresses of a cluster', () => {
  let client: { cert: string; key: string };
  /** The cluster certificate, shared by every member (and by the member that dies mid-request). */
  let server: { cert: string; key: string };
  let sim: RunningSimulator | undefined;
  const clients: InstanceClient[] = [];
  const servers: TlsServer[] = [];

  beforeAll(async () => {
    const p = await generate([{ name: 'commonName', value: 'reflex-failover' }], { keySize: 2048 } as Parameters<typeof generate>[1]);
    client = { cert: p.cert, key: p.private };
    const s = await generate([{ name: 'commonName', value: 'reflex-cluster' }], { keySize: 2048 } as Parameters<typeof generate>[1]);
    server = { cert: s.cert, key: s.private };
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
    await sim?.stop();
    sim = undefined;
  });

  async function cluster() {
    sim = await startSimulator({
      instances: 0,
      cluster: { members: ['m1', 'm2', 'm3'], memberListeners: true },
      trustedCertificates: [client.cert],
      tls: server,
      timings: { startMs: 5, stopMs: 5, stopHookMs: 5 },
    });
    const urls = ['m1', 'm2', 'm3'].map((m) => sim!.memberListeners!.url(m));
    return { sim, urls };
  }

  function connect(addresses: string[]): InstanceClient {
    const origin = addresses[0]!;
    const target: Target = {
      kind: 'https',
      origin,
      url: origin,
      ...client,
      serverCert: sim!.serverCertificate,
      ...(addresses.length > 1 ? { addresses } : {}),
    };
    const c = new InstanceClient(target, { timeoutMs: 5_000 });
    clients.push(c);
    return c;
  }

  it('parses comma-separated HTTPS addresses: the first is the identity, each once, in order', () => {
    const t = parseTarget('https://10.0.0.1:8443, https://10.0.0.2:8443/,https://10.0.0.1:8443,https://10.0.0.3:8443');
    expect(t).toMatchObject({
      kind: 'https',
      origin: 'https://10.0.0.1:8443',
      url: 'https://10.0.0.1:8443',
      addresses: ['https://10.0.0.1:8443', 'https://10.0.0.2:8443', 'https://10.0.0.3:8443'],
    });
    expect(parseTarget('https://10.0.0.1:8443')).not.toHaveProperty('addresses');
    expect(() => parseTarget('https://10.0.0.1:8443,unix:///run/lxd.sock')).toThrow(expect.objectContaining({ code: 'TARGET_INVALID' }));
  });

  it('moves to the next member when the one in use stops answering, for reads and for writes that never reached it', async () => {
    const { sim, urls } = await cluster();
    sim.controls.addInstance({ name: 'web', status: 'Stopped' });
    const c = connect(urls);
    expect(await c.listInstances({ recursion: 0 })).toHaveLength(1);
    expect(c.transport.activeOrigin).toBe(urls[0]);

    await sim.memberListeners!.down('m1');
    expect(await c.listInstances({ recursion: 0 })).toHaveLength(1);
    expect(c.transport.activeOrigin).toBe(urls[1]);

    // A refused connection carried nothing: the start goes to the next member, once.
    await sim.memberListeners!.down('m2');
    await (await c.changeState('web', { action: 'start' })).wait();
    expect(c.transport.activeOrigin).toBe(urls[2]);
    expect(sim.controls.calls('web', 'start')).toBe(1);
    expect(c.target.url, 'the identity stays the first address').toBe(urls[0]);

    // Every member gone: the failure is the connection's, retryable, as with one address.
    await sim.memberListeners!.down('m3');
    await expect(c.listInstances({ recursion: 0 })).rejects.toMatchObject({ code: 'NETWORK', retryable: true });
  });

  it('does not send a write again to another member when the connection broke after it was sent', async () => {
    const { sim, urls } = await cluster();
    sim.controls.addInstance({ name: 'web', status: 'Stopped' });
    // A member that takes the request and dies before answering.
    let received = 0;
    const dying = createTlsServer(server, (socket) => {
      socket.once('data', () => {
        received++;
        socket.destroy();
      });
    });
    servers.push(dying);
    await new Promise<void>((r) => dying.listen(0, '127.0.0.1', () => r()));
    const dyingUrl = `https://127.0.0.1:${(dying.address() as { port: number }).port}`;
    const c = connect([dyingUrl, urls[1]!]);

    await expect(c.changeState('web', { action: 'start' })).rejects.toMatchObject({ code: 'NETWORK', retryable: true });
    expect(received).toBe(1);
    expect(sim.controls.calls('web', 'start'), 'not re-sent to the other member').toBe(0);
    expect(c.transport.activeOrigin, 'the next call goes to the other member').toBe(urls[1]);

    // A read cut the same way is sent again at once.
    c.transport.failover(urls[1]!);
    expect(c.transport.activeOrigin).toBe(dyingUrl);
    expect(await c.listInstances({ recursion: 0 })).toHaveLength(1);
    expect(received).toBe(2);
  });

  it('skips a member whose certificate does not match the pin, before anything is sent to it', async () => {
    const { sim, urls } = await cluster();
    sim.controls.addInstance({ name: 'web', status: 'Stopped' });
    let received = 0;
    const impostor = createTlsServer(client, (socket) => socket.on('data', () => received++));
    servers.push(impostor);
    await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', () => r()));
    const c = connect([`https://127.0.0.1:${(impostor.address() as { port: number }).port}`, urls[1]!]);
    await (await c.changeState('web', { action: 'start' })).wait();
    expect(sim.controls.calls('web', 'start')).toBe(1);
    expect(c.transport.activeOrigin).toBe(urls[1]);
    expect(received, 'no request reached the impostor').toBe(0);
  });

  it('learns the other members from /1.0/cluster/members, so one configured address is enough', async () => {
    const { sim, urls } = await cluster();
    const c = connect([urls[1]!]);
    expect((await c.clusterMembers()).map((m) => m.url)).toEqual(urls);
    await sim.memberListeners!.down('m2');
    expect(await c.listInstances({ recursion: 0 })).toEqual([]);
    expect(c.transport.activeOrigin).toBe(urls[0]);
    expect(c.target.url).toBe(urls[1]);
  });

  it('the event subscriber reconnects to another member and resyncs after the gap', async () => {
    const { sim, urls } = await cluster();
    sim.controls.addInstance({ name: 'web' });
    const c = connect(urls);
    const frames: string[] = [];
    let connects = 0;
    const sub = new EventSubscriber({
      endpoint: () => c.eventsEndpoint(['lifecycle'], { allProjects: true }),
      onFrame: (raw) => frames.push(raw),
      onConnected: async () => {
        connects++;
      },
      logger: pino({ level: 'silent' }),
    });
    sub.start();
    try {
      await until('first connect', () => sub.connected && connects === 1, 5_000);
      expect(sim.controls.eventListeners).toBe(1);
      await sim.memberListeners!.down('m1');
      await until('reconnected to another member', () => connects === 2 && sub.connected, 5_000);
      expect(c.transport.activeOrigin).toBe(urls[1]);
      sim.controls.crash('web');
      await until('the crash seen through m2', () => frames.some((f) => f.includes('instance-shutdown')), 5_000);
    } finally {
      await sub.stop();
    }
  });
});
