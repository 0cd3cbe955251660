import type { Instance } from '../../client/instance.js';
import { StatusCode } from '../../client/status-code.js';
import type { Alerts } from '../../alerts/alerts.js';
import type { StateTracker } from '../../events/state-tracker.js';
import { instanceAlertKinds } from '../../notify/instance-incident.js';
import type { RedisConnection } from '../../redis/connect.js';
import type { InstanceRef, KeySpace } from '../../redis/key-space.js';

/** How long a rename is remembered for a stop of the old name judged after it (a stop hook, a slow event job). */
const RENAME_MEMORY_MS = 10 * 60_000;

const down = new Set<number>([StatusCode.Stopped, StatusCode.Error]);

/**
 * An instance that crashed and was renamed before Reflex healed it. The rename is an operator's
 * hand on the instance, so Reflex does not restart it (its pending restart is cancelled, and a stop
 * of the old name reads 404); but the crash is real and the instance is still down, under its new
 * name: that is alerted, never left silent. Either order of the two events leads here: the rename
 * seen after the crash was settled (the old name's last word is a stop nobody asked for), or the
 * old name's stop judged after the rename (the daemon answers 404 for it).
 */
export class RenamedAfterCrash {
  constructor(
    private readonly deps: {
      redis: RedisConnection;
      keys: KeySpace;
      tracker: StateTracker;
      alerts: Pick<Alerts, 'raise'>;
      readInstance(ref: InstanceRef): Promise<Instance | undefined>;
    },
  ) {}

  /** At the rename: remembers it, and alerts when the old name's last word was a crash not healed since. */
  async renamed(from: InstanceRef, to: InstanceRef, rename: { id: string; timestamp: string }): Promise<void> {
    const renameId = rename.id;
    const at = Date.parse(rename.timestamp);
    await this.deps.redis.set(this.deps.keys.renamedTo(from), JSON.stringify({ to: to.instance, renameId, at }), 'PX', RENAME_MEMORY_MS);
    const last = await this.deps.tracker.get(from);
    if (last && down.has(last.status) && (last.intent === 'unrequested' || last.intent === 'unknown'))
      await this.crashedBeforeRename(from, to, renameId);
  }

  /**
   * A stop of a name the daemon no longer knows: when that name was renamed after the stop (an
   * instance is renamed stopped), the stop was the renamed instance's. A stop dated after the
   * rename is no one's (a forged or stale frame) and alerts nothing here.
   */
  async stopOfGone(from: InstanceRef, stop: { timestamp: string }): Promise<void> {
    const raw = await this.deps.redis.get(this.deps.keys.renamedTo(from));
    if (!raw) return;
    const { to, renameId, at } = JSON.parse(raw) as { to: string; renameId: string; at: number };
    if (!(Date.parse(stop.timestamp) <= at)) return;
    await this.crashedBeforeRename(from, { ...from, instance: to }, renameId);
  }

  /**
   * An instance renamed stopped whose stop Reflex never saw (its event late or lost): cause unknown,
   * so alerted, not healed (a renamed instance is the operator's). Ends when it runs again.
   */
  async unseenStop(to: InstanceRef, renameId: string): Promise<void> {
    await this.alertIfDown(to, renameId, `renamed-unseen-stop:${renameId}`, (now) => ({
      summary: `${to.instance} was renamed ${now.status} and Reflex saw no stop of it before: cause unknown`,
      outcome: 'not remediated: renamed, its stop unseen (cause unknown)',
    }));
  }

  private async alertIfDown(
    to: InstanceRef,
    renameId: string,
    once: string,
    what: (now: Instance) => { summary: string; outcome: string },
  ): Promise<void> {
    const now = await this.deps.readInstance(to);
    if (!now || !down.has(now.status_code)) return;
    const project = to.project !== 'default' ? ` --project ${to.project}` : '';
    const { summary, outcome } = what(now);
    await this.deps.alerts.raise(
      {
        kind: now.status_code === StatusCode.Error ? instanceAlertKinds.error : instanceAlertKinds.crashed,
        severity: 'critical',
        target: to.target,
        project: to.project,
        instance: to.instance,
        ...(now.location && now.location !== 'none' ? { member: now.location } : {}),
        summary: `${summary}; Reflex does not start a renamed instance; to start it: reflex heal ${to.instance}${project}`,
        outcome,
        correlationId: renameId,
      },
      { once },
    );
  }

  /** The renamed instance's crash before the rename, while it is still down. */
  private async crashedBeforeRename(from: InstanceRef, to: InstanceRef, renameId: string): Promise<void> {
    await this.alertIfDown(to, renameId, `renamed-after-crash:${renameId}`, () => ({
      summary: `${to.instance} (renamed from ${from.instance}) stopped without a request and was renamed before Reflex healed it`,
      outcome: 'not remediated: renamed after the crash (an operator acted on it)',
    }));
  }
}
