import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { generate } from 'selfsigned';
import { afterEach, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import type { ConfigInput } from '../../src/config/config.js';
import { EventSubscriber } from '../../src/events/event-subscriber.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';
import { redisUrl } from '../support/redis.js';
import { settled } from '../support/settled.js';
import { startStack, type StackParts } from '../support/stack.js';
import { until } from '../support/wait.js';
import { ingestionTimings, optIn, publishedStatus, resyncCount } from './support/ingestion-bed.js';

const pair = async (cn: string) => {
  const p = await generate([{ name: 'commonName', value: cn }], { keySize: 2048 } as Parameters<typeof generate>[1]);
  return { cert: p.cert, key: p.private };
};

/**
 * A target naming the three members of a cluster (each with its own address, one store): the
 * member in use loses its address while instances crash. Reflex moves its calls and its event
 * stream to another member, resyncs the gap (nothing lost), heals every crash its stream saw once,
 * and keeps every key under the target's identity (the first address) whichever member answers.
 */
describe('a cluster target whose member in use goes away', () => {
  let stack: StackParts | undefined;
  const stops: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
    await stack?.stop();
    stack = undefined;
  });

  /**
   * A simulated cluster of three members behind TLS, each member with its own address, and Reflex
   * (not started) trusting it with a client certificate; `target` picks the members it is given.
   */
  async function tlsCluster(opts: { simulator?: Partial<SimulatorOptions>; target: (urls: string[]) => string; config?: Partial<ConfigInput> }) {
    const [server, client] = await Promise.all([pair('reflex-cluster'), pair('reflex-client')]);
    const dir = mkdtempSync(join(tmpdir(), 'reflex-cluster-'));
    const file = (n: string, text: string) => (writeFileSync(join(dir, n), text), join(dir, n));
    const members = ['m1', 'm2', 'm3'];
    const memberUrls = (sim: StackParts['sim']) => members.map((m) => sim.memberListeners!.url(m));
    const s = (stack = await startStack({
      redisUrl: redisUrl(),
      label: 'cluster',
      simulator: { cluster: { members, memberListeners: true }, tls: server, trustedCertificates: [client.cert], ...opts.simulator },
      reflexTimings: 'product',
      config: (sim) => ({
        target: opts.target(memberUrls(sim)),
        clientCert: file('client.crt', client.cert),
        clientKey: file('client.key', client.key),
        serverCert: file('server.crt', server.cert),
        leaseTtlMs: 1_000,
        ...opts.config,
      }),
      reflex: false,
    }));
    return { stack: s, sim: s.sim, urls: memberUrls(s.sim), server, client };
  }

  it('moves calls and events to another member, heals every crash once, and keeps its keys', async () => {
    const { stack, sim, urls } = await tlsCluster({
      simulator: { timings: ingestionTimings },
      target: (urls) => urls.join(','),
      config: { resyncGraceMs: 300 },
    });
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    // Spread over the members (the simulator places them in turn).
    for (const name of names) sim.controls.addInstance({ name, config: optIn });
    const { keys, redis } = stack;
    const reflex = await stack.replica();
    expect(reflex.targets).toEqual([urls[0]]);
    const reader = reflex.readers[0]!;
    await until('stream connected through m1', () => reader.lease.isHeld && reader.subscriber.connected, 10_000);
    await reflex.resync();
    // The baseline is written by the events worker, after the resync queued it.
    await until('every instance tracked', async () => (await redis.hlen(keys.state(urls[0]!))) === names.length, 10_000);
    const stateBefore = await redis.hkeys(keys.state(urls[0]!));

    const healed = (name: string) => sim.controls.calls(name, 'start') >= 1 && sim.controls.statusCode(name) === 103;
    const stops = async (name: string) =>
      (await publishedStatus(stack, { instance: name, to: 102 })).map((e) => `${e.intent}${e.synthetic ? ' synthetic' : ''}`);
    sim.controls.crash('a');
    await until('a healed through m1', () => healed('a'), 15_000);

    // m1's address goes away just as f crashes: f's event may fall in the stream's gap.
    const resyncsBefore = await resyncCount(reflex);
    sim.controls.crash('f');
    await sim.memberListeners!.down('m1');
    await until('stream reconnected through another member', () => reader.subscriber.connected, 10_000);
    // The resync after the gap done: a crash during its grace would be its to report, as unknown.
    await until('resync after the gap', async () => (await resyncCount(reflex)) > resyncsBefore, 10_000);
    // Crashes after the move are seen through the new member and healed through it.
    for (const name of ['b', 'c', 'd', 'e']) sim.controls.crash(name);
    await until('every crash healed', () => ['a', 'b', 'c', 'd', 'e'].every(healed), 20_000);
    await until("f's stop recorded", async () => (await stops('f')).length > 0, 10_000);
    await settled(redisUrl(), stack.prefix); // a second start would be in the actions queue

    expect(
      ['a', 'b', 'c', 'd', 'e'].map((n) => sim.controls.calls(n, 'start')),
      'each crash healed once',
    ).toEqual([1, 1, 1, 1, 1]);
    // Nothing lost: f's crash was either seen by the stream (and healed once) or found by the
    // resync after the gap, where nothing tells a crash from a stop (intent unknown: alerted, not started).
    const f = await stops('f');
    expect(f).toHaveLength(1);
    expect(['unrequested', 'unknown synthetic']).toContain(f[0]);
    expect(sim.controls.calls('f', 'start')).toBe(f[0] === 'unrequested' ? 1 : 0);
    expect((await redis.hkeys(keys.state(urls[0]!))).sort(), 'state kept under the first address').toEqual(stateBefore.sort());
    expect(await redis.get(keys.lease(urls[0]!)), 'the lease too').not.toBeNull();
    for (const other of urls.slice(1)) {
      expect(await redis.hlen(keys.state(other)), `no state under ${other}`).toBe(0);
      expect(await redis.get(keys.lease(other)), `no lease under ${other}`).toBeNull();
    }
  }, 60_000);
  it("a subscriber given one member's address learns the others and moves to one when it goes away", async () => {
    const { stack, sim, urls, server, client } = await tlsCluster({
      simulator: { instances: 2 },
      target: (urls) => urls[1]!,
      config: { role: 'subscriber' },
    });
    // The daemon's request log (logging events, as \`lxc monitor --type=logging\`) tells when Reflex listed the members.
    const watcher = new InstanceClient({ kind: 'https', origin: urls[0]!, url: urls[0]!, ...client, serverCert: server.cert });
    const listed: string[] = [];
    const log = new EventSubscriber({
      endpoint: () => watcher.eventsEndpoint(['logging']),
      onFrame: (raw) => {
        const url = (JSON.parse(raw) as { metadata?: { context?: { url?: string } } }).metadata?.context?.url;
        if (url?.startsWith('/1.0/cluster/members')) listed.push(url);
      },
      logger: pino({ level: 'silent' }),
    });
    log.start();
    stops.push(async () => {
      await log.stop();
      await watcher.close();
    });
    await until('request log connected', () => log.connected, 5_000);
    const reflex = await stack.replica();
    const reader = reflex.readers[0]!;
    await until('stream connected through m2 and the members listed', () => reader.subscriber.connected && listed.length > 0, 10_000);
    await sim.memberListeners!.down('m2');
    await until('stream cut', () => !reader.subscriber.connected, 5_000);
    await until('stream reconnected through a learnt member', () => reader.subscriber.connected, 10_000);
    expect(reflex.targets, 'the identity is the configured address').toEqual([urls[1]]);
  }, 60_000);
});
