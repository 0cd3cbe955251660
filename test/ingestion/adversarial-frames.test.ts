import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatusCode } from '../../src/client/status-code.js';
import { EventArchive } from '../../src/events/event-archive.js';
import { frameSchema } from '../../src/events/frame.js';
import { frameId } from '../../src/events/normalize.js';
import { adversarialMessages, deepFrame, refusalProblems, rejectedEntries, type AdversarialMessage } from '../support/frame-fuzz.js';
import { redisClient, redisUrl } from '../support/redis.js';
import { optIn, startStack, type Stack } from '../support/stack.js';
import { until } from '../support/wait.js';
import { startEventProxy, type EventProxy } from './support/event-proxy.js';

/**
 * Whatever a peer sends on the events socket must not end Reflex: frames nested thousands deep,
 * megabytes of non-JSON, bytes that are not UTF-8, empty and pretty-printed frames go through a
 * proxy in front of the simulator to the whole in-process stack (subscriber, ingestor, queue,
 * processor). Each refused frame is kept once in the rejected stream with its reason, its true
 * size and how often it came; the events around them are queued untouched, and a crash after
 * them is healed as fast as one before them.
 */
describe('adversarial event frames (simulator behind a frame-injecting proxy, bundled rules)', () => {
  let stack: Stack;
  let proxy: EventProxy;
  const sent: AdversarialMessage[] = [];
  const send = (m: AdversarialMessage) => {
    sent.push(m);
    proxy.injectBytes(m.data, m.binary);
  };
  const archived = async (id: string) =>
    (await new EventArchive({ redis: stack.redis, key: stack.keys.archive }).read()).some((a) => a.event.id === id);
  /** A valid frame of `name`, as the daemon would send it, with a marker making it unique. */
  const validFrame = (name: string, marker: string) => ({
    type: 'lifecycle' as const,
    timestamp: new Date().toISOString(),
    location: 'none',
    project: 'default',
    metadata: { action: 'instance-updated', source: `/1.0/instances/${name}`, name, project: 'default', context: { marker } },
  });
  const idOf = (f: ReturnType<typeof validFrame>) => frameId(stack.target, frameSchema.parse(f));

  /** Crashes `name` and answers how long it took to be Running again (healed by the bundled rule). */
  async function healTime(name: string): Promise<number> {
    const at = Date.now();
    stack.sim.controls.crash(name);
    await until(`${name} stopped`, () => stack.sim.controls.statusCode(name) !== StatusCode.Running, 5_000, 5);
    await until(`${name} healed`, () => stack.sim.controls.statusCode(name) === StatusCode.Running, 20_000, 10);
    return Date.now() - at;
  }

  beforeAll(async () => {
    stack = await startStack({
      redisUrl: redisUrl(),
      label: 'adversarial',
      simulator: { timings: { stopHookMs: 100 } },
      instances: ['web-1', 'web-2', 'web-3'].map((name) => ({ name, status: 'Running' as const, config: optIn })),
      relay: async (socket) => (proxy = await startEventProxy(socket)),
      reflexTimings: 'product',
      config: { typecheckRules: false },
    });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    const redis = redisClient();
    const keys = await redis.keys(`*${stack.prefix}*`);
    await Promise.all(keys.map((k) => redis.del(k)));
    redis.disconnect();
  });

  it('a 100 KB frame nested 5 000 deep, pretty-printed, empty and invalid-UTF-8 frames: alive, each kept once as described, a later crash healed at normal speed', async () => {
    const before = await healTime('web-1');

    const deep = Buffer.from(deepFrame(5000, 100 * 1024));
    expect(deep.length).toBeGreaterThanOrEqual(100 * 1024);
    const pretty = validFrame('web-3', 'pretty');
    const between = validFrame('web-3', 'between');
    const notUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xc3, 0x28, 0x7d]);
    send({ what: 'deep', data: deep, binary: false, refused: /^nested deeper than 64 levels$/ });
    send({ what: 'pretty-printed', data: Buffer.from(`${JSON.stringify(pretty, null, 2)}\n`), binary: false });
    send({ what: 'empty', data: Buffer.alloc(0), binary: false, refused: /^empty frame$/ });
    send({ what: 'between', data: Buffer.from(`${JSON.stringify(between)}\n`), binary: false });
    send({ what: 'invalid UTF-8 (text)', data: notUtf8, binary: false, refused: /^not valid UTF-8$/ });
    send({ what: 'invalid UTF-8 (binary)', data: notUtf8, binary: true, refused: /^not valid UTF-8$/ });
    send({ what: 'deep again', data: deep, binary: false, refused: /^nested deeper than 64 levels$/ });

    await until(
      'the pretty-printed frame and the one after the refusals archived',
      async () => (await archived(idOf(pretty))) && archived(idOf(between)),
      15_000,
    );
    await until(
      'each refusal kept',
      async () => refusalProblems(sent, await rejectedEntries(stack.redis, stack.keys.rejected)).length === 0,
      15_000,
    ).catch(async () => {
      expect(refusalProblems(sent, await rejectedEntries(stack.redis, stack.keys.rejected))).toEqual([]);
    });
    const entries = await rejectedEntries(stack.redis, stack.keys.rejected);
    expect(entries.map((e) => [e.reason, e.bytes, e.repeats]).sort()).toEqual(
      [
        ['empty frame', 0, 1],
        ['nested deeper than 64 levels', deep.length, 2],
        ['not valid UTF-8', notUtf8.length, 2],
      ].sort(),
    );
    expect(
      entries.every((e) => Buffer.byteLength(e.raw) <= 4096),
      'a bounded sample of each',
    ).toBe(true);
    const counted = (await stack.reflex.metrics.rejectedInputs.get()).values.map((v) => [v.labels.repeat, v.value]);
    expect(Object.fromEntries(counted), 'each receipt counted, the repeats apart').toEqual({ false: 3, true: 2 });
    expect(stack.reflex.subscriber?.connected, 'the socket was never given up').toBe(true);

    const after = await healTime('web-2');
    expect(after, `healed in ${after} ms after the frames, ${before} ms before`).toBeLessThan(Math.max(2 * before, before + 1_500));
  }, 90_000);

  it('frames drawn by fast-check (depth, width, size, encodings, newlines, empty, duplicates, forged fields): each refusal kept once with its reason, size and count; a valid event among them queued untouched', async () => {
    // A failure names its seed; FUZZ_SEED=<seed> draws the same messages again.
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1e9);
    const messages = fc.sample(adversarialMessages(24), { numRuns: 1, seed })[0]!;
    const marker = validFrame('web-3', `among-${Date.now()}`);
    messages.splice(messages.length >> 1, 0, { what: 'valid', data: Buffer.from(JSON.stringify(marker)), binary: false });
    for (const m of messages) send(m);
    const problems = async () => refusalProblems(sent, await rejectedEntries(stack.redis, stack.keys.rejected));
    await until('every refusal kept', async () => (await problems()).length === 0, 30_000).catch(async () =>
      expect(await problems(), `seed ${seed}`).toEqual([]),
    );
    await until(`the valid frame among them archived (seed ${seed})`, () => archived(idOf(marker)), 15_000);
    expect(stack.reflex.subscriber?.connected, `seed ${seed}`).toBe(true);
  }, 120_000);
});
