import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Alert } from '../alerts/alert.js';
import { groupOf } from './alert-grouper.js';
import type { Notification } from './notification.js';
import type { Receiver } from './receiver.js';
import type { MatchedRoute } from './router.js';

/** Attempts per receiver on the direct path; each waits this much longer than the one before. */
const attempts = 3;
const backoffMs = 500;

/** What one receiver made of a direct message. */
export interface DirectOutcome {
  receiver: string;
  /** The status the receiver answered, when it took the message. */
  status?: number;
  /** Why it did not, after every attempt. */
  error?: string;
}

/**
 * Sends one alert at once to each receiver its routes name, without Redis: no grouping, no queue,
 * no rate limit, no audit (the fallback path while Redis refuses writes, when the durable path
 * cannot store anything). A few attempts with a short backoff, then it gives up; the caller says
 * what reached whom. Nothing is shared between replicas while Redis refuses writes: each replica
 * that sends notifications sends its own copy. The message id is derived from the alert (its
 * fingerprint, status and start), so copies of an alert with the same start carry the same id
 * (`webhook-id`, `Idempotency-Key`) and a receiver that de-duplicates shows one.
 */
export async function deliverDirect(
  alert: Alert,
  routes: readonly MatchedRoute[],
  receivers: ReadonlyMap<string, Receiver>,
  logger?: Logger,
): Promise<DirectOutcome[]> {
  const created = new Date();
  return Promise.all(
    routes.map(async (route): Promise<DirectOutcome> => {
      const receiver = receivers.get(route.receiver);
      if (!receiver) return { receiver: route.receiver, error: 'not configured' };
      const { groupKey, groupLabels } = groupOf(alert, route);
      const n: Notification = {
        id: directId(groupKey, alert),
        receiver: receiver.name,
        groupKey,
        groupLabels,
        status: alert.status,
        alerts: [alert],
        repeat: false,
      };
      let error = '';
      for (let attempt = 1; attempt <= attempts; attempt++) {
        try {
          const status = await receiver.send(n, created);
          logger?.warn({ receiver: receiver.name, kind: alert.kind, status: alert.status }, 'alert sent directly to its receiver, not through Redis');
          return { receiver: receiver.name, status };
        } catch (err) {
          error = receiver.scrub(err instanceof Error ? err.message : String(err));
          const retryable = (err as { retryable?: unknown }).retryable !== false;
          if (!retryable || attempt === attempts) break;
          await new Promise((r) => setTimeout(r, backoffMs * attempt));
        }
      }
      logger?.error({ receiver: receiver.name, kind: alert.kind, err: error }, 'alert could not be sent directly to its receiver');
      return { receiver: receiver.name, error };
    }),
  );
}

function directId(groupKey: string, alert: Alert): string {
  return createHash('sha256')
    .update(JSON.stringify(['direct', groupKey, alert.fingerprint, alert.status, alert.startsAt]))
    .digest('hex')
    .slice(0, 32);
}
