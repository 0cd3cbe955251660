import type { Queue, Worker } from 'bullmq';
import { retentionPlan } from '../retention/structures.js';
import { startRedisWatch } from '../retention/redis-watch.js';
import { WriteProbe } from '../redis/write-probe.js';
import type { RoleRoot } from './role-root.js';
import type { SharedParts } from './shared-parts.js';

/**
 * Whether Redis takes writes, and what it holds: the write probe (its subscriber's, workers' and
 * queues' refused writes make it probe at once; a change of verdict is logged and gauged) and the
 * Redis watch (every role samples Redis and keeps the streams to their bounds; one replica alerts
 * on each change of level; while writes are refused, each replica with receivers alerts by the
 * fallback path). A change of the probe's verdict runs the watch's round at once: the alert of a
 * Redis that refuses writes must not wait for the retention interval.
 */
export function startWriteWatch(s: SharedParts, roots: RoleRoot[], roles: { workers: Worker[]; queues: Queue[] }) {
  const { config, keys, redis, logger, metrics } = s;
  let watchNow: (() => void) | undefined;
  const writes = new WriteProbe({
    redis,
    key: keys.writeProbe,
    onChange: (state, previous) => {
      metrics.setRedisWritable(state.writable === true, state.refusal ?? 'unreachable');
      if (state.writable === false) logger.error({ refusal: state.refusal, error: state.error }, 'Redis does not take writes');
      else if (previous.writable === false) logger.info('Redis takes writes again');
      watchNow?.();
    },
  });
  writes.start();
  for (const w of roles.workers) {
    w.on('error', (err) => writes.suspect(err));
    w.on('failed', (_job, err) => writes.suspect(err));
  }
  for (const q of new Set([...roles.queues, s.eventsQueue, s.actionsQueue])) q.on('error', (err) => writes.suspect(err));
  for (const root of roots) root.reportWriteErrors?.((err) => writes.suspect(err));
  const watch = startRedisWatch({
    redis,
    plan: retentionPlan(config, keys),
    levelKey: keys.redisMemoryLevel,
    alertRatio: config.redisMemoryAlertRatio,
    intervalMs: config.retentionCheckMs,
    metrics,
    logger,
    alerts: s.alerts,
    writes,
  });
  watchNow = () =>
    void watch.check().catch((err: unknown) => logger.warn({ err }, 'Redis watch round after a write probe change failed; the next round alerts'));
  return {
    writes,
    async stop() {
      writes.stop();
      await watch.stop();
    },
  };
}
