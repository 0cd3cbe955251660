import type { Queue } from 'bullmq';
import type { Alerts } from '../../alerts/alerts.js';
import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { AuditLog, StoredAuditRecord } from '../../audit/audit-log.js';
import { matchesQuery, parseTimeArg, withFormerNames } from '../../audit/audit-query.js';
import type { StateTracker } from '../../events/state-tracker.js';
import { FilterSyntaxError } from '../../filter/filter-syntax-error.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { AlertsView } from '../../notify/alert-board.js';
import { withDeadline, type RedisConnection } from '../../redis/connect.js';
import type { KeySpace } from '../../redis/key-space.js';
import { checkHealRequest, checkInstanceRequest } from '../../remediation/heal-request.js';
import { queueHeal, releaseQuarantine, retryDeadLetter, type OperatorOrigin } from '../../remediation/operator-actions.js';
import type { Silences } from '../../silences/silences.js';
import { authenticatedSession, authenticatedUser } from '../dashboard-auth.js';
import type { ReadinessChecks } from '../readiness.js';
import { jsonBody } from '../json-body.js';
import { addSilenceFromRequest, type SilenceRequest } from '../silence-request.js';
import { readDuration } from '../../config/duration.js';
import { consoleHealth } from './console-health.js';
import { ConsoleFeed } from './console-feed.js';
import { renderConsole } from './console-page.js';
import { FleetView, type ConsoleTarget } from './fleet-view.js';
import { executionsOf, filterExecutions } from './executions.js';
import { episodesOf, filterIncidents, incidentsOf, plotsOf } from './incident-story.js';
import { instanceTimeline } from './instance-timeline.js';
import { previewSilence, reasonProblem } from './silence-preview.js';
import { AlertUpdates } from '../../notify/alert-update.js';
import { registerTriage, type Assignees } from './triage-routes.js';
import { Approvals } from '../../remediation/approvals.js';
import { registerApprovals } from './approval-routes.js';

/** What the console reads and acts through, besides what the dashboard already has. */
export interface ConsoleSources {
  redis: RedisConnection;
  keys: KeySpace;
  /** The key prefix (per-instance keys are read back with it). */
  prefix: string;
  tracker: StateTracker;
  targets: ConsoleTarget[];
  /** The actions queue: back-offs (delayed jobs), dead letters (failed jobs), heals. */
  actionsQueue: Queue;
  /** Resolves the alerts an operator's action ends (a release ends the crash loop's alert); none: they resolve on recovery only. */
  resolver?: Pick<Alerts, 'resolveFiring'>;
}

/** Everything {@link registerConsole} needs. */
export interface ConsoleOptions extends ConsoleSources {
  audit: AuditLog;
  silences: Silences;
  alerts?: () => Promise<AlertsView>;
  metrics: Metrics;
  readiness: ReadinessChecks;
  /** Whether a write token or an operator is configured (the actions are offered), as the users file is now: asked at each page load. */
  writable: () => boolean;
  /** `users`: each operator acts with a token of their own (the name is theirs); `token`: the shared write token and a typed name. */
  identity: 'users' | 'token';
  /** Where bull-board lives (linked). */
  queuesPath: string;
  /** Where the audit table per instance lives (linked). */
  auditPath: string;
  /** Whom an incident may be assigned to, as the users file is now. Default: any name (the shared token). */
  assignees?: () => Assignees;
}

const instanceBody = z.strictObject({
  target: z.string().min(1).max(500),
  project: z.string().min(1).max(200),
  instance: z.string().min(1).max(200),
  actor: z.string().max(100).optional(),
});
const retryBody = z.strictObject({ id: z.string().min(1).max(300), actor: z.string().max(100).optional() });
const endSilenceBody = z.strictObject({ actor: z.string().max(100).optional() });
/**
 * How often a read still running checks that Redis answers, ms: Redis hanging (stopped, a full
 * network buffer) would otherwise hold every read open, and the page could not tell a slow answer
 * from none. A read is never cut short while Redis answers (a month of audit records at 10k
 * instances may take longer); when Redis does not answer a PING within a second the read answers
 * 503, and the work it started finishes or fails on its own.
 */
const readCheckMs = 2_000;
/** A read still running after this long answers 503 whatever holds it up, ms. */
const readGiveUpMs = 60_000;
/** The console's own records are read over this range at most. */
const maxRecords = 50_000;

/** The HTTP status of each reason a request is refused before anything is queued. */
const problemStatus = { invalid: 400, missing: 404, unreachable: 503 } as const;

/** Who acts: the authenticated user when there is one (a users-file token), else the name typed in with the shared token. */
const by = (c: Context, actor: string | undefined): OperatorOrigin => ({
  origin: 'console',
  actor: authenticatedUser(c)?.name ?? (actor?.trim() || 'console'),
});
/**
 * The time range of a read: `since` (a duration back from now, or an ISO time; default `fallback`)
 * and `until` (the same; default now). Answers an error text when either does not parse or the
 * range is empty.
 */
export function rangeOf(c: Context, fallback: string, now = Date.now()): { from: number; to: number } | { error: string } {
  const since = parseTimeArg(c.req.query('since') || fallback, now);
  const until = c.req.query('until') ? parseTimeArg(c.req.query('until')!, now) : new Date(now);
  if (!since) return { error: 'since: a duration back from now (24h, 7d) or an ISO time' };
  if (!until) return { error: 'until: a duration back from now (1h) or an ISO time' };
  if (until.getTime() <= since.getTime()) return { error: 'until must be after since' };
  return { from: since.getTime(), to: Math.min(until.getTime(), now) };
}
/** Records of [from, to], newest `maxRecords` at most. */
const recordsOf = (audit: AuditLog, r: { from: number; to: number }) =>
  audit.read({ since: new Date(r.from), until: new Date(r.to), count: maxRecords });
const issues = (e: z.ZodError) => e.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');

/**
 * The operator's console under `base` (the dashboard's path, behind its auth): the page, its data
 * (fleet, incidents and plots, health, dead letters), a server-sent event stream that says when to
 * read again, and the safe actions, each through the same functions as the CLI and audited with
 * origin `console`. The change feed polls only while a page listens.
 */
export function registerConsole(app: Hono, base: string, o: ConsoleOptions): void {
  const api = `${base}/console`;
  const fleet = new FleetView({
    redis: o.redis,
    keys: o.keys,
    prefix: o.prefix,
    tracker: o.tracker,
    silences: o.silences,
    actionsQueue: o.actionsQueue,
    targets: o.targets,
  });
  const feed = new ConsoleFeed({ redis: o.redis, auditKey: o.keys.audit, archiveKey: o.keys.archive });
  const ops = { queue: o.actionsQueue, audit: o.audit, redis: o.redis, keys: o.keys };
  // A reader of the fleet API without the event stream (a script polling it) is served snapshots
  // up to a few seconds old too: the feed runs for 30 s after each read, so a change seen invalidates them.
  let watch: NodeJS.Timeout | undefined;
  const watchFeed = () => {
    if (watch) return void watch.refresh();
    const stop = feed.subscribe((change) => change.fleet && !change.periodic && fleet.invalidate());
    watch = setTimeout(() => {
      stop();
      watch = undefined;
    }, 30_000);
    watch.unref();
  };

  // Every read but the event stream (which waits on purpose) answers within the deadline.
  app.use(`${api}/*`, async (c, next) => {
    if (c.req.method !== 'GET' || c.req.path === `${api}/events`) return next();
    const work = next().then(() => 'done' as const);
    for (const started = Date.now(); ;) {
      // The page gave up long before (20 s): a read held up elsewhere (a hung daemon) stops being watched.
      if (Date.now() - started > readGiveUpMs)
        return c.json({ error: `no answer within ${readGiveUpMs / 1000} s`, code: 'REDIS_UNAVAILABLE', retryable: true }, 503);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), readCheckMs)));
      if ((await Promise.race([work, late]).finally(() => clearTimeout(timer))) === 'done') return;
      const why = await withDeadline(o.redis.ping(), 1_000).then(
        () => undefined,
        (err: Error) => err.message,
      );
      if (why) return c.json({ error: `Redis is not answering (${why}): the read was given up`, code: 'REDIS_UNAVAILABLE', retryable: true }, 503);
    }
  });

  app.get(base, (c) => {
    c.header('Cache-Control', 'no-store');
    return c.html(
      renderConsole({
        api,
        writable: o.writable(),
        identity: o.identity,
        queuesPath: o.queuesPath,
        auditPath: o.auditPath,
        targets: o.targets.map((t) => (t.name === t.id ? t.id : `${t.name} (${t.id})`)),
        ...(authenticatedSession(c) ? { signedIn: authenticatedUser(c), logoutPath: `${base}/logout` } : {}),
      }),
    );
  });

  app.get(`${api}/fleet`, async (c) => {
    const q = c.req.query();
    watchFeed();
    try {
      return c.json(
        await fleet.page({
          target: q.target || undefined,
          project: q.project || undefined,
          member: q.member || undefined,
          status: q.status || undefined,
          flag: q.flag || undefined,
          filter: q.filter || undefined,
          offset: Number(q.offset) || 0,
          limit: Number(q.limit) || undefined,
        }),
      );
    } catch (err) {
      if (err instanceof FilterSyntaxError) return c.json({ error: `filter: ${err.message}` }, 400);
      throw err;
    }
  });

  app.get(`${api}/incidents`, async (c) => {
    const range = rangeOf(c, '24h');
    if ('error' in range) return c.json({ error: range.error }, 400);
    const instance = c.req.query('instance') || undefined;
    const records = await recordsOf(o.audit, range);
    const all = incidentsOf(records);
    // History follows the instance: its records under every name it had (a rename keeps its uuid).
    const query = instance
      ? await withFormerNames(
          async function* () {
            yield* records;
          },
          { instance },
        )
      : undefined;
    const ofName = query ? all.filter((i) => i.instance === instance || query.identities?.incidents.has(i.correlationId)) : all;
    const incidents = filterIncidents(episodesOf(ofName), { kind: c.req.query('kind'), outcome: c.req.query('outcome'), rule: c.req.query('rule') });
    const ofInstance = query ? records.filter((r) => matchesQuery(r, query)) : records;
    const [alerts, silences, snap] = await Promise.all([o.alerts?.().catch(() => undefined), o.silences.list(), fleet.snapshot()]);
    const restarts = snap.rows
      .filter((r) => r.restarts > 0 && (!instance || r.name === instance))
      .sort((a, b) => b.restarts - a.restarts)
      .slice(0, 20)
      .map((r) => ({ name: r.name, project: r.project, restarts: r.restarts }));
    return c.json({
      rules: [...new Set(all.map((i) => i.decided?.rule).filter((r): r is string => !!r))].sort(),
      incidents: incidents.slice(0, 200),
      total: incidents.length,
      plots: plotsOf(ofInstance, incidents, range.from, range.to),
      restarts,
      alerts,
      silences,
      truncated: records.length >= maxRecords,
    });
  });

  app.get(`${api}/executions`, async (c) => {
    const range = rangeOf(c, '24h');
    if ('error' in range) return c.json({ error: range.error }, 400);
    const q = c.req.query();
    const records = await recordsOf(o.audit, range);
    const all = executionsOf(records);
    // The audit's action records name the target and instance; the project (for a re-run) is the fleet's, when one instance bears the name.
    const projects = new Map<string, string | null>();
    for (const r of (await fleet.snapshot()).rows) {
      const k = `${r.target}|${r.name}`;
      projects.set(k, projects.has(k) && projects.get(k) !== r.project ? null : r.project);
    }
    for (const e of all) {
      const project = projects.get(`${e.target}|${e.instance}`);
      if (project) e.project = project;
      else e.rerun = false;
    }
    const matched = filterExecutions(all, { source: q.source, action: q.action, result: q.result, instance: q.instance, by: q.by });
    const limit = Math.min(200, Math.max(1, Number(q.limit) || 50));
    const offset = Math.max(0, Math.min(Number(q.offset) || 0, Math.max(0, matched.length - 1)));
    return c.json({
      from: new Date(range.from).toISOString(),
      to: new Date(range.to).toISOString(),
      total: all.length,
      matched: matched.length,
      offset,
      executions: matched.slice(offset, offset + limit),
      actions: [...new Set(all.map((e) => e.action))].sort(),
      truncated: records.length >= maxRecords,
    });
  });

  app.get(`${api}/timeline`, async (c) => {
    const instance = c.req.query('instance');
    if (!instance) return c.json({ error: 'give instance (a name)' }, 400);
    const range = rangeOf(c, '24h');
    if ('error' in range) return c.json({ error: range.error }, 400);
    // A day before the range too: the status the range opens in was set before it.
    const [records, snap] = await Promise.all([
      o.audit.read({ instance, since: new Date(range.from - 24 * 3_600_000), until: new Date(range.to), count: maxRecords }),
      fleet.snapshot(),
    ]);
    // Its probes' state now, as read with the fleet (every instance of that name, on any target or project).
    const probes = snap.rows.filter((r) => r.name === instance).flatMap((r) => snap.probeStates.get(r.key) ?? []);
    return c.json(instanceTimeline(records, executionsOf(records), incidentsOf(records), instance, range.from, range.to, probes));
  });

  app.get(`${api}/trail`, async (c) => {
    const id = c.req.query('id');
    const since = parseTimeArg(c.req.query('since') || '7d');
    if (!id || !since) return c.json({ error: 'give id (a correlation id) and since' }, 400);
    const records: StoredAuditRecord[] = [];
    for await (const r of o.audit.records({ since }))
      if (r.correlationId === id) records.push({ ...r, prev: undefined, hash: undefined } as StoredAuditRecord);
    return c.json({ id, records });
  });

  app.get(`${api}/health`, async (c) => c.json(await consoleHealth(o.readiness, o.metrics)));

  app.get(`${api}/dlq`, async (c) => {
    const jobs = await o.actionsQueue.getFailed(0, 99);
    return c.json({
      total: await o.actionsQueue.getFailedCount(),
      jobs: jobs.map((j) => ({
        id: j.id,
        action: j.data.action,
        target: j.data.target,
        project: j.data.project,
        instance: j.data.instance,
        rule: j.data.rule,
        attempts: j.attemptsMade,
        failedAt: j.finishedOn ? new Date(j.finishedOn).toISOString() : null,
        reason: j.failedReason,
      })),
    });
  });

  app.get(`${api}/events`, (c) =>
    streamSSE(c, async (stream) => {
      let wake: () => void = () => {};
      const pending = { audit: false, fleet: false, changed: false };
      const unsubscribe = feed.subscribe((change) => {
        pending.audit ||= change.audit;
        pending.fleet ||= change.fleet;
        // A change seen: what is cached may predate it. The periodic refresh (locks, back-offs and
        // CLI releases leave no record) assembles behind the snapshot served meanwhile.
        pending.changed ||= change.fleet && !change.periodic;
        if (change.fleet && !change.periodic) fleet.invalidate();
        wake();
      });
      stream.onAbort(() => {
        unsubscribe();
        wake();
      });
      await stream.writeSSE({ event: 'hello', data: '{}', retry: 2_000 });
      while (!stream.aborted) {
        if (!pending.audit && !pending.fleet) {
          // Wait for a change, or 15 s: a comment line keeps proxies from closing an idle stream.
          let timer: NodeJS.Timeout | undefined;
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, 15_000);
          });
          clearTimeout(timer);
          if (stream.aborted) break;
          if (!pending.audit && !pending.fleet) {
            await stream.write(': keep-alive\n\n');
            continue;
          }
        }
        // Taken before the write: a change arriving meanwhile is sent next round.
        const sending = { audit: pending.audit, fleet: pending.fleet, at: Date.now() };
        const changed = pending.changed;
        pending.audit = pending.fleet = pending.changed = false;
        // The fleet is assembled once, before the viewers are told: their reads then cost a page, not an assembly.
        if (sending.fleet) await (changed ? fleet.snapshot() : fleet.refresh()).catch(() => undefined);
        await stream.writeSSE({ event: 'change', data: JSON.stringify(sending) });
      }
      unsubscribe();
    }),
  );

  // Writes: dashboardAuth has already required the write token as Bearer, a same-origin Origin and a JSON body.
  // Every input is checked before anything is queued or audited: a heal of an instance that does
  // not exist would be retried, dead-lettered and alerted on as a failure of a healthy fleet.
  app.post(`${api}/heal`, async (c) => {
    const parsed = instanceBody.safeParse(await jsonBody(c));
    if (!parsed.success) return c.json({ error: issues(parsed.error) }, 400);
    const { actor, ...request } = parsed.data;
    const checked = await checkHealRequest(o.targets, request, { signal: AbortSignal.timeout(10_000) });
    if ('problem' in checked) return c.json({ error: checked.error }, problemStatus[checked.problem]);
    return c.json(await queueHeal(ops, checked.ref, by(c, actor), checked.identity), 202);
  });
  app.post(`${api}/quarantine/release`, async (c) => {
    const parsed = instanceBody.safeParse(await jsonBody(c));
    if (!parsed.success) return c.json({ error: issues(parsed.error) }, 400);
    const { actor, ...request } = parsed.data;
    // A quarantine may outlive its instance (deleted since): only the names are checked.
    const checked = checkInstanceRequest(o.targets, request);
    if ('problem' in checked) return c.json({ error: checked.error }, problemStatus[checked.problem]);
    const { ref } = checked;
    const released = await releaseQuarantine({ ...ops, ...(o.resolver ? { alerts: o.resolver } : {}) }, ref, by(c, actor));
    fleet.invalidate();
    return released ? c.json({ released: true }) : c.json({ error: `${ref.project}/${ref.instance} is not quarantined` }, 404);
  });
  app.post(`${api}/dlq/retry`, async (c) => {
    const parsed = retryBody.safeParse(await jsonBody(c));
    if (!parsed.success) return c.json({ error: issues(parsed.error) }, 400);
    return (await retryDeadLetter(ops, parsed.data.id, by(c, parsed.data.actor)))
      ? c.json({ retried: parsed.data.id })
      : c.json({ error: `no failed job ${parsed.data.id}` }, 404);
  });
  registerTriage(app, api, {
    audit: o.audit,
    // Read from Redis, not from this process's notifier: a replica without one (another role) updates them too.
    updates: new AlertUpdates(o.redis, o.keys.notify),
    assignees: o.assignees ?? (() => ({ names: [], open: true })),
    by,
  });
  // Decisions only: the workers' settle round queues the approved jobs and ends the alerts.
  registerApprovals(app, base, api, new Approvals({ redis: o.redis, keys: o.keys.approvals, audit: o.audit }));
  app.get(`${api}/silences/preview`, async (c) => {
    const q = c.req.query();
    const scope = Object.fromEntries(['instance', 'project', 'location', 'target'].filter((k) => q[k]?.trim()).map((k) => [k, q[k]!.trim()]));
    if (!Object.keys(scope).length && q.all !== 'true') return c.json({ matches: 0, names: [], reasonNeeded: false });
    const mutes = q.mutes ? (q.mutes.split(',').filter((m) => m === 'actions' || m === 'notifications') as ('actions' | 'notifications')[]) : [];
    const durationMs = q.duration ? readDuration(q.duration) : undefined;
    return c.json(previewSilence((await fleet.snapshot()).rows, scope, mutes, durationMs));
  });
  app.post(`${api}/silences`, async (c) => {
    // A long or broad silence turns automation off for many: its reason must say why (checked against the fleet now).
    const check = async (r: SilenceRequest) =>
      reasonProblem(r.reason, r.durationMs, previewSilence((await fleet.snapshot()).rows, r.scope, r.mutes ?? []).matches);
    const added = await addSilenceFromRequest(o.silences, await jsonBody(c), 'console', {
      check,
      createdBy: authenticatedUser(c)?.name,
    });
    fleet.invalidate();
    return 'silence' in added ? c.json(added.silence, 201) : c.json({ error: added.error }, 400);
  });
  app.post(`${api}/silences/:id/end`, async (c) => {
    const parsed = endSilenceBody.safeParse((await jsonBody(c)) ?? {});
    if (!parsed.success) return c.json({ error: issues(parsed.error) }, 400);
    const removed = await o.silences.remove(c.req.param('id'), { origin: 'console', createdBy: by(c, parsed.data.actor).actor });
    fleet.invalidate();
    return removed ? c.json({ ended: c.req.param('id') }) : c.json({ error: `no silence ${c.req.param('id')}` }, 404);
  });
}
