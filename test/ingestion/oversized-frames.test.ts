import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog, type StoredAuditRecord } from '../../src/audit/audit-log.js';
import { StatusCode } from '../../src/client/status-code.js';
import { EventArchive } from '../../src/events/event-archive.js';
import { readRefusedNote } from '../../src/events/refused-frame.js';
import { limitFrameSize } from '../../src/events/frame-size.js';
import { keepRejected } from '../../src/events/rejected-events.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import type { Stack } from '../support/stack.js';
import { until } from '../support/wait.js';
import { startWebOneStack } from './support/ingestion-bed.js';

const MB = 1024 * 1024;

/** A valid lifecycle frame of web-1 whose context carries `bytes` of data. */
const hugeFrame = (bytes: number) => ({
  type: 'lifecycle' as const,
  project: 'default',
  metadata: {
    action: 'instance-updated',
    source: '/1.0/instances/web-1',
    name: 'web-1',
    project: 'default',
    context: { blob: 'x'.repeat(bytes), note: 'kept' },
  },
});

describe('a frame too large to keep whole', () => {
  it('keeps what says what happened and replaces the large fields by a marker with their size', () => {
    const raw = JSON.stringify({ timestamp: new Date().toISOString(), ...hugeFrame(50 * MB) });
    const { raw: kept, truncatedBytes } = limitFrameSize(raw, 64 * 1024);
    expect(truncatedBytes).toBe(Buffer.byteLength(raw));
    expect(Buffer.byteLength(kept)).toBeLessThan(64 * 1024);
    const frame = JSON.parse(kept) as { type: string; metadata: Record<string, unknown> };
    expect(frame).toMatchObject({
      type: 'lifecycle',
      metadata: {
        action: 'instance-updated',
        source: '/1.0/instances/web-1',
        name: 'web-1',
        project: 'default',
        context: { blob: { truncated: true, bytes: 50 * MB + 2 }, note: 'kept' },
      },
    });
  });

  it('leaves a frame within the limit as it is, byte for byte', () => {
    const raw = JSON.stringify({ timestamp: new Date().toISOString(), ...hugeFrame(1000) });
    expect(limitFrameSize(raw, 64 * 1024)).toEqual({ raw });
  });

  it('refuses text that is not JSON: its note keeps the reason, the true size and a bounded sample', () => {
    const text = `{"type":"lifecycle",${'y'.repeat(MB)}`;
    const { raw } = limitFrameSize(text, 64 * 1024);
    expect(raw.length).toBeLessThan(8 * 1024);
    expect(readRefusedNote(raw)).toMatchObject({ reason: expect.stringMatching(/^not JSON: /), bytes: Buffer.byteLength(text), encoding: 'utf8' });
    expect(text.startsWith(readRefusedNote(raw)!.sample)).toBe(true);
  });
});

describe('the rejected stream', () => {
  const redis = redisClient();

  it('keeps the true size of a 3 MB frame that was truncated and then rejected, not the size of its truncated copy', async () => {
    const prefix = uniquePrefix('rejected-size');
    const keys = keySpace(prefix);
    const text = JSON.stringify({ type: 'nonsense', timestamp: new Date().toISOString(), blob: 'q'.repeat(3 * MB) });
    const { raw } = limitFrameSize(text, 64 * 1024);
    expect(Buffer.byteLength(raw)).toBeLessThan(64 * 1024);
    await keepRejected(redis, keys.rejected, new AuditLog(redis, keys.audit), {
      target: 't',
      reason: 'invalid frame',
      raw,
      hash: 'h3',
      receivedAt: Date.now(),
    });
    const fields = ((await redis.xrange(keys.rejected, '-', '+')) as [string, string[]][])[0]![1];
    expect(fields[fields.indexOf('bytes') + 1]).toBe(String(Buffer.byteLength(text)));
    const left = await redis.keys(`*${prefix}*`);
    await Promise.all(left.map((k) => redis.del(k)));
  });

  it('keeps each rejected input once, cut to maxEventBytes, with its true size and how often it came, and audits it once', async () => {
    const prefix = uniquePrefix('rejected');
    const keys = keySpace(prefix);
    const audit = new AuditLog(redis, keys.audit);
    const input = { target: 't', reason: 'not JSON', raw: `{${'z'.repeat(5 * MB)}`, hash: 'h1', receivedAt: Date.now() };
    expect(await keepRejected(redis, keys.rejected, audit, input, { maxRawBytes: 64 * 1024 })).toBe(true);
    expect(
      await keepRejected(redis, keys.rejected, audit, input, { maxRawBytes: 64 * 1024 }),
      'the same input again: counted, not audited again',
    ).toBe(false);
    const rows = (await redis.xrange(keys.rejected, '-', '+')) as [string, string[]][];
    expect(rows, 'one entry for the same bytes').toHaveLength(1);
    const field = (name: string) => rows[0]![1][rows[0]![1].indexOf(name) + 1]!;
    expect(field('raw').length).toBeLessThan(64 * 1024 + 100);
    expect(field('raw')).toMatch(new RegExp(`…\\[truncated: ${5 * MB + 1} bytes\\]$`));
    expect(field('bytes')).toBe(String(5 * MB + 1));
    expect(field('repeats')).toBe('2');
    expect(field('firstSeen')).toBe(String(input.receivedAt));
    const left = await redis.keys(`*${prefix}*`);
    // One key a call: on a Redis Cluster the keys lie in different slots.
    await Promise.all(left.map((k) => redis.del(k)));
  });
});

/**
 * The simulator sends the frames as they are; Reflex runs whole (subscriber, ingestor, processor,
 * audit, archive) against the test run's Redis.
 */
describe('size limits on the event stream (simulator, bundled rules)', () => {
  let stack: Stack | undefined;
  const redis = redisClient();
  const trail = (instance?: string): Promise<StoredAuditRecord[]> => new AuditLog(redis, stack!.keys.audit).read(instance ? { instance } : {});
  const alerts = () => stack!.webhook!.requests.flatMap((r) => (r.json as { alerts: { kind: string; severity: string; summary: string }[] }).alerts);
  // What is stored: used_memory less the overhead, which counts clients' and replicas' output
  // buffers (a replica's is the writes not yet sent to it, under Sentinel about 1 MB for a moment).
  const usedMemory = async () => Number(/used_memory_dataset:(\d+)/.exec(await redis.info('memory'))![1]);

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  /**
   * `writeDeadlineMs`: the daemon drops a listener that has not read a frame within 5 s (the slow
   * consumer, tested in gap-free-stream). Here the reader is Reflex in this same process, which a
   * loaded CI can starve for longer than 5 s while 50 MB are written, so the large-frame tests lift the deadline:
   * what they check is what Reflex does with a large frame that arrives.
   */
  async function startReflexOnSim(maxFrameBytes: number, writeDeadlineMs?: number): Promise<Stack> {
    stack = await startWebOneStack('size', { maxFrameBytes }, writeDeadlineMs ? { events: { writeDeadlineMs } } : {});
    return stack;
  }

  async function crashIsHealed(): Promise<void> {
    const { sim } = stack!;
    sim.controls.crash('web-1');
    await until('the crash healed', async () => (await trail('web-1')).some((r) => r.type === 'outcome'), 60_000);
    await until('web-1 Running again', () => sim.controls.statusCode('web-1') === StatusCode.Running);
  }

  // 50 MB go through the simulator's socket, Reflex's parse and the truncation: about 7 s on an idle
  // 2-core machine, minutes on a starved one; the bounds below only limit how long a failure takes to show.
  it(
    'a 50 MB frame within maxFrameBytes is stored once, truncated, Redis grows by less than 1 MB, and the crash after it is healed',
    { timeout: 420_000 },
    async () => {
      const { sim, keys } = await startReflexOnSim(64 * MB, 600_000);
      // Settled first: the start-up resync's writes are not the frame's.
      await until('the start-up resync archived', async () => (await new EventArchive({ redis, key: keys.archive }).read()).length > 0);
      const before = await usedMemory();
      sim.controls.injectFrame(hugeFrame(50 * MB));
      const updated = async () => (await trail('web-1')).find((r) => r.type === 'event' && r.summary.includes('instance-updated'));
      await until('the 50 MB frame audited', async () => Boolean(await updated()), 300_000);
      const grew = (await usedMemory()) - before;
      // Not on a Redis Cluster: the node read there is one of six and holds only its slots' keys; what
      // is stored is checked below on every set-up.
      if (process.env.REFLEX_TEST_REDIS !== 'cluster') expect(grew, `Redis grew by ${grew} bytes`).toBeLessThan(MB);

      const audited = (await updated()) as StoredAuditRecord & { event: { context: Record<string, unknown> } };
      expect(audited.event.context).toEqual({ blob: { truncated: true, bytes: 50 * MB + 2 }, note: 'kept' });
      const archived = (await new EventArchive({ redis, key: keys.archive }).read()).filter(
        (a) => a.event.kind === 'lifecycle' && a.event.action === 'instance-updated',
      );
      expect(archived, 'archived once').toHaveLength(1);
      expect(JSON.stringify(archived[0]!.event).length).toBeLessThan(64 * 1024);

      await crashIsHealed();
    },
  );

  it('a frame over maxFrameBytes is refused by the socket, kept as rejected and alerted once; the stream reconnects and the crash after it is healed', async () => {
    const { sim, reflex, keys } = await startReflexOnSim(256 * 1024);
    sim.controls.injectFrame(hugeFrame(MB));
    await until('the refused frame kept as rejected', async () => (await redis.xlen(keys.rejected)) === 1, 15_000);
    const fields = ((await redis.xrange(keys.rejected, '-', '+')) as [string, string[]][])[0]![1];
    // The simulator adds its timestamp and location to the frame.
    const injected = Buffer.byteLength(JSON.stringify(hugeFrame(MB)));
    expect(fields[fields.indexOf('reason') + 1]).toMatch(
      /^a frame of \d+ bytes, larger than maxFrameBytes \(262144 bytes\) was refused by the events socket \(closed with 1009\)/,
    );
    const bytes = Number(fields[fields.indexOf('bytes') + 1]);
    expect(bytes, 'its size as its header declared it').toBeGreaterThan(injected);
    expect(bytes).toBeLessThan(injected + 200);
    await until('the frame-too-large alert sent', () => alerts().some((a) => a.kind === 'event.frame-too-large'));
    expect(
      alerts().filter((a) => a.kind === 'event.frame-too-large'),
      'alerted once',
    ).toHaveLength(1);
    await until('the stream reconnected', () => reflex.subscriber?.connected === true, 15_000);
    expect(await redis.xlen(keys.rejected), 'the refused frame is not sent again: one entry').toBe(1);

    await crashIsHealed();
  });
});
