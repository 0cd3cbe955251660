import type { AlertInput } from '../../src/alerts/alert.js';
import { toAlert } from '../../src/alerts/alert.js';
import { Alerts, type AlertAudit } from '../../src/alerts/alerts.js';

/** An alert as a part raised or resolved it, with its status. */
export type RecordedAlert = AlertInput & { status: 'firing' | 'resolved'; direct?: true };

/**
 * Alerts audited in `audit` whose notifier records what it is given instead of sending it: for
 * tests of a part that raises alerts (the member watch, the Redis watch, a tick). Replicas may
 * share one `raised`. What goes by the fallback path (`raiseDirect`) is recorded with `direct: true`
 * and taken by a receiver named `hook`.
 */
export function recordingAlerts(audit: AlertAudit, raised: RecordedAlert[] = []): { alerts: Alerts; raised: RecordedAlert[] } {
  const notifier = {
    notify: async (input: AlertInput) => {
      raised.push({ status: 'firing', ...input });
      return toAlert(input);
    },
    amend: async () => undefined,
    sendDirect: async (input: AlertInput) => {
      raised.push({ status: 'firing', ...input, direct: true });
      return [{ receiver: 'hook', status: 200 }];
    },
  };
  return { alerts: new Alerts({ audit, notifier }), raised };
}
