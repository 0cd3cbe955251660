import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { InstanceClient } from '../client/client.js';
import type { ConfiguredTarget } from '../config/config-target.js';
import type { Config } from '../config/config.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';
import { EventIngestor } from './event-ingestor.js';
import { EventSubscriber } from './event-subscriber.js';
import { oversizedFrameNote } from './frame-size.js';
import type { LeaseSpread } from './lease-spread.js';
import { resyncEvents } from './resync.js';
import type { StateTracker } from './state-tracker.js';
import { SubscriberLease } from './subscriber-lease.js';

/** What a target's reader needs. */
export interface TargetReaderOptions {
  target: ConfiguredTarget;
  /** The target's client (calls, the events endpoint, the resync's reads). */
  client: InstanceClient;
  redis: RedisConnection;
  keys: KeySpace;
  /** Where the ingestor writes: the events queue, shared by every target. */
  eventsQueue: Queue;
  /** What the resync compares the target's instances with. */
  tracker: StateTracker;
  metrics: Metrics;
  /** The process's logger; with several targets, the reader's lines carry its target's name. */
  logger: Logger;
  /** How many targets this process reads (default 1). */
  targets?: number;
  /** The replicas' share of the leases; none: this reader takes its lease whenever it is vacant. */
  spread?: LeaseSpread;
  /** Told of each write of events to Redis that failed (the write probe). */
  onWriteError?: (err: unknown) => void;
  settings: Pick<Config, 'leaseTtlMs' | 'maxEventBytes' | 'maxFrameBytes' | 'clockToleranceMs' | 'resyncGraceMs' | 'resyncIntervalMs'>;
}

/** One target's reader as it runs: its lease, its event stream, its resync. */
export interface RunningTargetReader {
  /** The target's name (its readiness check is `subscriber:<name>` when there are several). */
  name: string;
  /** The target's identity (keys, job payloads, metric labels): its URL. */
  id: string;
  lease: SubscriberLease;
  subscriber: EventSubscriber;
  /** Runs a resync of this target now (nothing unless this replica holds the lease). */
  resync(): Promise<void>;
  /**
   * When (epoch ms) this replica's last resync of the target was published; undefined before the
   * first. Until then, what the stream brings is held and nothing has a baseline.
   */
  readonly resyncedAt: number | undefined;
  /** Stops reading: the stream closes, what was read is written, then the lease is given up. */
  stop(): Promise<void>;
}

/**
 * Starts the reader of one target: its lease, its event stream, the ingestor that writes the
 * stream into the events queue, and the resync that fills a gap. Every replica reads the stream;
 * only the lease holder writes it, followers keep a window to replay on a takeover. The reader
 * also keeps the target's gauges (`reflex_lease_holder`, `reflex_stream_connected`,
 * `reflex_ingest_buffered`) and counts its resyncs.
 */
export function startTargetReader(o: TargetReaderOptions): RunningTargetReader {
  const { target: t, client, metrics, spread, settings } = o;
  const log = (o.targets ?? 1) > 1 ? o.logger.child({ target: t.name }) : o.logger;
  const held = new SubscriberLease({
    redis: o.redis,
    key: o.keys.lease(t.id),
    fenceKey: o.keys.leaseFence(t.id),
    vacantKey: o.keys.leaseVacant(t.id),
    logger: log,
    ttlMs: settings.leaseTtlMs,
    mayTake: spread && ((ms) => spread.mayTake(ms)),
  });
  const ingestor = new EventIngestor({
    queue: o.eventsQueue,
    target: t.id,
    logger: log,
    active: false,
    onOverflow: () => void resync('gap'),
    onWriteError: o.onWriteError,
    mayWrite: () => held.isCurrent(),
    maxEventBytes: settings.maxEventBytes,
    clockToleranceMs: settings.clockToleranceMs,
  });
  let resyncedAt: number | undefined;
  const resync = async (reason: 'gap' | 'periodic' | 'manual' = 'manual') => {
    if (!held.isHeld) return;
    const events = await resyncEvents(client, o.tracker, t.id, {
      graceMs: settings.resyncGraceMs,
      project: t.project,
      operations: reason !== 'periodic',
    });
    ingestor.pushSynthetic(events);
    resyncedAt = Date.now();
    metrics.resyncs.inc({ reason });
    if (reason === 'gap') metrics.gapsResynced.inc();
    // An instance seen for the first time is a baseline, not a change the stream missed.
    const changes = events.filter((e) => e.kind === 'instance.status');
    metrics.resyncChanges.inc(changes.filter((e) => e.from !== undefined).length);
    if (changes.length) log.info({ changes: changes.length }, 'resync found changes');
  };
  // A gap's resync that fails (Redis refuses writes, the daemon does not answer) is tried again, with
  // back-off, on the open stream: what the stream brings meanwhile is held by the ingestor, where a
  // reconnect to retry would open a gap of its own each time. One at a time; a gap found while one
  // runs is covered by one more round after it.
  let stopped = false;
  let gapResync: Promise<void> | undefined;
  let gapAgain = false;
  const resyncGap = (): Promise<void> => {
    if (gapResync) {
      gapAgain = true;
      return gapResync;
    }
    const run = async () => {
      do {
        gapAgain = false;
        for (let attempt = 1, delay = 100; !stopped && held.isHeld; attempt++, delay = Math.min(delay * 2, 5_000)) {
          try {
            await resync('gap');
            if (attempt > 1) log.info({ attempts: attempt }, 'resync after the gap done');
            break;
          } catch (err) {
            const line = `resync after the gap failed; retrying in ${delay} ms (the stream stays open; what it brings is held)`;
            if (attempt === 1) log.error({ err }, line);
            else log.warn({ err: (err as Error).message, attempt }, line);
            await sleep(delay, undefined, { ref: false });
          }
        }
      } while (gapAgain && !stopped);
    };
    gapResync = run().finally(() => {
      gapResync = undefined;
    });
    return gapResync;
  };
  const sub = new EventSubscriber({
    endpoint: () => client.eventsEndpoint(['operation', 'lifecycle'], { allProjects: !t.project }),
    onFrame: (raw, at) => ingestor.pushFrame(raw, at),
    onConnected: resyncGap,
    logger: log,
    metrics,
    maxFrameBytes: settings.maxFrameBytes,
    // Queued as a note the processor rejects: kept, audited and alerted on the one rejected-input path.
    onOversized: (at, bytes) => ingestor.pushFrame(oversizedFrameNote(settings.maxFrameBytes, at, bytes), at),
  });
  held.on('acquired', () => {
    ingestor.activate();
    if (sub.connected) void resyncGap();
  });
  held.on('lost', () => ingestor.standBy());
  metrics.leaseHolder.set({ target: t.id }, 0);
  held.on('acquired', () => metrics.leaseHolder.set({ target: t.id }, 1));
  held.on('lost', () => metrics.leaseHolder.set({ target: t.id }, 0));
  sub.on('connected', () => metrics.streamConnected.set({ target: t.id }, 1));
  // A cluster's other members join an HTTPS target's failover addresses (client/cluster.ts).
  if (t.target.kind === 'https')
    sub.once(
      'connected',
      () =>
        void client
          .server()
          .then((s) => (s.environment?.server_clustered ? client.clusterMembers() : undefined))
          .catch((err: unknown) => log.debug({ err }, 'could not list the cluster members')),
    );
  sub.on('disconnected', () => metrics.streamConnected.set({ target: t.id }, 0));
  const unwatch = metrics.watchIngest(t.id, () => ({ role: held.isHeld ? 'holder' : 'follower', buffered: ingestor.buffered }));
  sub.start();
  // A surplus lease is handed over once what was read is written (bounded: the successor's window covers the rest).
  spread?.register(held, async () => {
    await Promise.race([ingestor.drain(), sleep(settings.leaseTtlMs, undefined, { ref: false })]);
    await held.handOver();
  });
  held.start();
  const timer =
    settings.resyncIntervalMs > 0
      ? setInterval(() => {
          if (sub.connected && held.isHeld) resync('periodic').catch((err) => log.warn({ err }, 'periodic resync failed'));
        }, settings.resyncIntervalMs)
      : undefined;
  return {
    name: t.name,
    id: t.id,
    lease: held,
    subscriber: sub,
    resync: () => resync(),
    get resyncedAt() {
      return resyncedAt;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      unwatch();
      await sub.stop();
      await ingestor.drain();
      await held.stop();
    },
  };
}
