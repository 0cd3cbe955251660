import { defineAction, defineRule, z } from 'reflex-lxd';

/**
 * 10 — Act on an alert from Prometheus. Alertmanager posts its webhook to Reflex
 * (`POST /hooks/alertmanager`, docs/events.md), each alert becomes an `alert` event, and this rule
 * answers `HighMemory` for an instance: a snapshot (evidence), then a restart, then a word to chat.
 *
 * The order matters, and a rule's actions do not keep it: each is a job of its own, run as soon as
 * a worker takes it (notify waits for no lock, and two jobs race for the instance's lock). So the
 * three steps are one action, run in turn under the instance's lock, after the re-check. Each step
 * survives a retry: the snapshot is named after the incident and taken once; a restart already
 * done since the incident is not done again.
 */
export const snapshotRestartTell = defineAction({
  name: 'example-snapshot-restart-tell',
  describe: 'snapshot the instance, then restart it, then tell the receivers (in this order)',
  params: z.strictObject({
    /** Where the word goes. Default: routed (docs/notifications.md). */
    receiver: z.string().optional(),
    /** How long the snapshot is kept, in days. Default 3. */
    keepDays: z.number().int().min(1).max(90).default(3),
  }),
  async run(ctx) {
    if (!ctx.notifier) throw new Error('no notification receivers configured: nobody to tell (docs/notifications.md)');
    const event = ctx.job?.event;
    const incident = ctx.job?.correlationId ?? `manual-${Date.now()}`;
    const snapshot = `high-memory-${incident.slice(0, 12)}`;
    const taken = (await ctx.client.listSnapshots(ctx.instance, { recursion: 0 })).some((s) => s.endsWith(`/${snapshot}`) || s === snapshot);
    if (!taken) {
      const expiresAt = new Date(Date.now() + ctx.params.keepDays * 86_400_000);
      await (await ctx.client.createSnapshot(ctx.instance, { name: snapshot, expiresAt })).wait();
    }
    const incidentAt = Date.parse(event?.timestamp ?? '');
    // LXD stamps last_used_at when the instance starts: started after the incident, a previous
    // attempt of this job restarted it already.
    const lastStart = Date.parse(String((await ctx.client.getInstance(ctx.instance)).value.last_used_at ?? ''));
    const restartedSince = !Number.isNaN(incidentAt) && !Number.isNaN(lastStart) && lastStart > incidentAt;
    if (!restartedSince) await (await ctx.client.changeState(ctx.instance, { action: 'restart', timeout: 30 })).wait();
    const why = event?.kind === 'alert' ? (event.annotations.summary ?? `${event.alertname} firing since ${event.startsAt}`) : 'high memory';
    const summary = `${ctx.instance} restarted after ${why}; memory evidence kept in snapshot ${snapshot} for ${ctx.params.keepDays} days`;
    await ctx.notifier.notify(
      {
        kind: 'high-memory.restarted',
        severity: 'warning',
        summary,
        target: ctx.client.target.url,
        project: ctx.client.project ?? 'default',
        instance: ctx.instance,
        correlationId: incident,
        labels: {},
      },
      { receiver: ctx.params.receiver },
    );
    return {
      result: 'done',
      summary: `snapshot ${snapshot}${taken ? ' (taken before)' : ''}, ${restartedSince ? 'restarted before' : 'restarted'}, told`,
    };
  },
});

export default [
  snapshotRestartTell,
  defineRule({
    name: 'example-alert-high-memory',
    description: 'HighMemory for an instance (Alertmanager) → snapshot, then restart, then tell chat',
    on: { kind: 'alert', alertname: ['HighMemory'], status: ['firing'] },
    // Only instances that opted in: a restart is not every service's answer to memory pressure.
    scope: { filter: 'config.user.reflex.on-high-memory eq restart' },
    actions: [{ action: 'example-snapshot-restart-tell' }],
    cooldownMs: 30 * 60_000,
  }),
];
