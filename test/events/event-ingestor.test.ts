import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EventIngestor } from '../../src/events/event-ingestor.js';
import { keySpace } from '../../src/redis/key-space.js';
import type { EventJob } from '../../src/events/event-job.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const frame = (ts: string, action: string) => JSON.stringify({ type: 'lifecycle', timestamp: ts, metadata: { action, source: '/1.0/instances/r1' } });

describe('the event ingestor', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setUp(reorderWindowMs: number, adaptiveReorder = false) {
    const keys = keySpace(uniquePrefix('ingest'));
    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const queue = new Queue(keys.eventsQueue, { connection, prefix: keys.bullPrefix });
    const ingestor = new EventIngestor({ queue, target: 'unix:///x', logger: pino({ level: 'silent' }), reorderWindowMs, adaptiveReorder });
    cleanups.push(async () => {
      await queue.obliterate({ force: true });
      await queue.close();
      connection.disconnect();
    });
    const jobs = async () => (await queue.getJobs(['waiting'], 0, -1, true)).map((j) => j.data as EventJob);
    return { ingestor, jobs };
  }

  it('writes what accumulated as one job, in daemon order', async () => {
    // A hold long enough that a stall of the test process between reading the clock and pushing
    // (a loaded machine) does not release the first frame alone.
    const { ingestor, jobs } = await setUp(500);
    const now = Date.now();
    ingestor.pushFrame(frame('2026-11-22T10:00:00.300000000Z', 'instance-resumed'), now);
    ingestor.pushFrame(frame('2026-11-22T10:00:00.100000000Z', 'instance-paused'), now);
    ingestor.pushFrame(frame('2026-11-22T10:00:00.200000000Z', 'instance-updated'), now);
    await ingestor.drain();
    const written = await jobs();
    expect(written).toHaveLength(1);
    expect(written[0]!.kind).toBe('batch');
    const actions = (written[0] as Extract<EventJob, { kind: 'batch' }>).items.map((i) =>
      i.kind === 'frame' ? JSON.parse(i.raw).metadata.action : i.kind,
    );
    expect(actions).toEqual(['instance-paused', 'instance-updated', 'instance-resumed']);
  });

  it("writes a resync's events as one job, so another replica cannot process a rename's status event before the rename", async () => {
    const { ingestor, jobs } = await setUp(500);
    const at = '2026-12-02T17:46:24.064Z';
    const common = { target: 'unix:///x', location: 'none', project: 'default', timestamp: at, synthetic: true } as const;
    ingestor.pushSynthetic([
      { ...common, kind: 'lifecycle', id: 'r', action: 'instance-renamed', source: '/1.0/instances/b', instance: 'b', context: { old_name: 'a' } },
      { ...common, kind: 'instance.status', id: 's', instance: 'b', from: 103, to: 102, intent: 'unknown' },
    ]);
    await ingestor.drain();
    const written = await jobs();
    expect(written, 'one job').toHaveLength(1);
    const items = (written[0] as Extract<EventJob, { kind: 'batch' }>).items;
    expect(items.map((i) => (i.kind === 'synthetic' ? i.event.id : i.kind))).toEqual(['r', 's']);
  });

  it('orders a frame dated far ahead of its receipt by its receipt time, so the frames after it are not put behind it', async () => {
    const { ingestor, jobs } = await setUp(20);
    const now = Date.now();
    ingestor.pushFrame(frame(new Date(now + 24 * 3600_000).toISOString(), 'instance-started'), now);
    ingestor.pushFrame(frame(new Date(now + 5).toISOString(), 'instance-shutdown'), now + 5);
    await ingestor.drain();
    const items = (await jobs()).flatMap((j) => (j.kind === 'batch' ? j.items : [j]));
    expect(items.map((i) => (i.kind === 'frame' ? JSON.parse(i.raw).metadata.action : i.kind))).toEqual(['instance-started', 'instance-shutdown']);
  });

  it('holds back a newer frame for an older one that arrives after its window has passed for the newer', async () => {
    const { ingestor, jobs } = await setUp(20);
    // When the newer frame's window ends, the older one (received 15 ms later) is still inside its own.
    const now = Date.now();
    ingestor.pushFrame(frame('2026-11-22T10:00:00.300000000Z', 'instance-resumed'), now);
    ingestor.pushFrame(frame('2026-11-22T10:00:00.100000000Z', 'instance-paused'), now + 15);
    await ingestor.drain();
    const items = (await jobs()).flatMap((j) => (j.kind === 'batch' ? j.items : [j]));
    expect(items.map((i) => (i.kind === 'frame' ? JSON.parse(i.raw).metadata.action : i.kind))).toEqual(['instance-paused', 'instance-resumed']);
  });

  it('writes a lone frame at once, and holds the frames of an instance in the middle of an action to put them in order', async () => {
    const { ingestor, jobs } = await setUp(20, true);
    const actions = async () =>
      (await jobs())
        .flatMap((j) => (j.kind === 'batch' ? j.items : [j]))
        .map((i) => (i.kind === 'frame' ? JSON.parse(i.raw).metadata.action : i.kind));
    ingestor.pushFrame(frame('2026-11-22T10:00:00.100000000Z', 'instance-shutdown'), Date.now());
    await ingestor.drain();
    expect(await jobs()).toHaveLength(1);
    // The same instance again within a second: an action in progress; its frames are held and sorted.
    const now = Date.now();
    ingestor.pushFrame(frame('2026-11-22T10:00:00.500000000Z', 'instance-started'), now);
    ingestor.pushFrame(frame('2026-11-22T10:00:00.400000000Z', 'instance-resumed'), now + 1);
    await ingestor.drain();
    expect(await actions()).toEqual(['instance-shutdown', 'instance-resumed', 'instance-started']);
  });

  it("writes a quiet instance's frames read together as one job in daemon order, though none is held", async () => {
    const { ingestor, jobs } = await setUp(20, true);
    // LXD emits an instance's frames from goroutines: the newer can arrive first, in the same read.
    const now = Date.now();
    ingestor.pushFrame(frame('2026-11-22T10:00:00.500000000Z', 'instance-started'), now);
    ingestor.pushFrame(frame('2026-11-22T10:00:00.400000000Z', 'instance-stopped'), now);
    await ingestor.drain();
    const written = await jobs();
    expect(written).toHaveLength(1);
    const items = (written[0] as Extract<EventJob, { kind: 'batch' }>).items;
    expect(items.map((i) => (i.kind === 'frame' ? JSON.parse(i.raw).metadata.action : i.kind))).toEqual(['instance-stopped', 'instance-started']);
  });

  it("writes another instance's lone frame at once while one instance's frames are held", async () => {
    const { ingestor, jobs } = await setUp(3_000, true);
    const other = (ts: string) =>
      JSON.stringify({ type: 'lifecycle', timestamp: ts, metadata: { action: 'instance-shutdown', source: '/1.0/instances/r2' } });
    const written = async () =>
      (await jobs())
        .flatMap((j) => (j.kind === 'batch' ? j.items : [j]))
        .map((i) => (i.kind === 'frame' ? JSON.parse(i.raw).metadata.source : i.kind));
    const writtenCount = (n: number) => until(`${n} written`, async () => (await written()).length >= n, 1_000, 20);
    ingestor.pushFrame(frame('2026-11-22T10:00:00.100000000Z', 'instance-started'), Date.now());
    await writtenCount(1);
    ingestor.pushFrame(frame('2026-11-22T10:00:00.200000000Z', 'instance-updated'), Date.now()); // r1 busy: held 3 s
    // The flush loop now waits for that hold; its wake-up hook is the only sign of it (private, read for this test).
    await until('the writer waiting for r1', () => (ingestor as unknown as { wake?: () => void }).wake !== undefined, 1_000, 1);
    ingestor.pushFrame(other('2026-11-22T10:00:00.300000000Z'), Date.now());
    await writtenCount(2);
    expect(await written()).toEqual(['/1.0/instances/r1', '/1.0/instances/r2']);
    await ingestor.drain();
    expect(await written()).toEqual(['/1.0/instances/r1', '/1.0/instances/r2', '/1.0/instances/r1']);
  });

  it('stores a batch written twice (a retried write) once', async () => {
    const { ingestor, jobs } = await setUp(0);
    const raw = frame('2026-11-22T10:00:00.100000000Z', 'instance-updated');
    ingestor.pushFrame(raw, 1);
    await ingestor.drain();
    ingestor.pushFrame(raw, 1);
    await ingestor.drain();
    expect(await jobs()).toHaveLength(1);
  });
});
