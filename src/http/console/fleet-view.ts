import type { Queue } from 'bullmq';
import type { InstanceClient } from '../../client/client.js';
import type { Instance } from '../../client/instance.js';
import { isKnownStatusCode, statusText } from '../../client/status-code.js';
import type { StateTracker, TrackedStatus } from '../../events/state-tracker.js';
import { compileFilter } from '../../filter/evaluator.js';
import { parseFilter } from '../../filter/parser.js';
import type { RedisConnection } from '../../redis/connect.js';
import { instanceOfKey, type InstanceRef, type KeySpace } from '../../redis/key-space.js';
import { scanKeys } from '../../redis/scan-keys.js';
import { CrashLoopBudget, quarantineHolds } from '../../remediation/crash-loop-budget.js';
import { identityOf, identityToken, isAnotherInstance, type InstanceIdentity } from '../../remediation/instance-identity.js';
import { matchingSilence, type Silences } from '../../silences/silences.js';
import { readProbeStatus, type ProbeStatus } from '../../probes/probe-status.js';
import { joinProbeHealth, type FleetHealth, type RowProbe } from './fleet-health.js';

/** One target the console shows, with its client when this process has one (it lists the daemon's instances). */
export interface ConsoleTarget {
  id: string;
  name: string;
  client?: InstanceClient;
}

/** One instance as the fleet view shows it. */
export interface FleetRow {
  /** `target|project/name`: unique across targets. */
  key: string;
  target: string;
  project: string;
  name: string;
  /** Cluster member, from the daemon's list ("none" standalone); undefined until the list was read. */
  location?: string;
  statusCode: number;
  status: string;
  /** Since when it has been in this status (ms): a status confirmed again (a resync, a snapshot's brief pause) keeps its start. */
  since?: number;
  /** The tracker's entry before this one (read by the view to keep "since"; not sent). */
  prevStatus?: { status: number; at: number };
  /** Why it last changed (requested, unrequested, self, unknown), by the tracker. */
  intent?: string;
  /**
   * `list` when the status is the daemon's list's, read after the tracker's last change and
   * different from it: a change no event announced (the daemon emits none for Error) that Reflex
   * has not seen yet (the next resync will).
   */
  statusFrom?: 'list';
  /** `user.reflex.autorestart=true` in its (expanded) config; undefined until the daemon's list was read. */
  optIn?: boolean;
  /** Until when a delayed action job (crash-loop back-off, stand-back) waits, ISO. */
  backoffUntil?: string;
  quarantined?: { since: string; until?: string };
  silenced?: { id: string; reason: string; until: string };
  /** An action holds the instance lock right now. */
  acting: boolean;
  /** Restarts counted in the crash-loop budget's window. */
  restarts: number;
  /** What its health probes conclude (the worst of them); `none` when no probe state covers it, `unknown` while it is not Running. */
  health: FleetHealth;
  /** Its probes and what each concludes; absent when none covers it. */
  probes?: RowProbe[];
}

/** The whole fleet at one moment. */
export interface FleetSnapshot {
  at: number;
  rows: FleetRow[];
  /** Whether a daemon's list was read (members and opt-in are known). */
  listed: boolean;
  /** The probe states of each row (by row key) as read with the snapshot, for the instance's detail. */
  probeStates: Map<string, ProbeStatus[]>;
}

/** What the fleet view is asked for. */
export interface FleetQuery {
  target?: string;
  project?: string;
  member?: string;
  /** Status text (Running, Stopped, Error…) or `down` (anything but Running). */
  status?: string;
  /** `quarantined`, `backoff`, `silenced`, `acting`, `unhealthy`. */
  flag?: string;
  /** The filter language (`src/filter/`, extended: free text and gt/ge/lt/le), evaluated on the instance object with the console's fields. */
  filter?: string;
  offset?: number;
  /** Default 50, at most 500. */
  limit?: number;
}

/** A page of the fleet with the counts of the whole fleet and of the match. */
export interface FleetPage {
  at: number;
  total: number;
  matched: number;
  offset: number;
  rows: FleetRow[];
  counts: Record<string, number>;
  byStatus: Record<string, number>;
  targets: string[];
  projects: string[];
  members: string[];
  listed: boolean;
}

/** One assembly of the fleet: when and in which order it began, and whether it is done. */
interface Assembly {
  at: number;
  seq: number;
  value: Promise<FleetSnapshot>;
  ready: boolean;
}

/** Options of {@link FleetView}. */
export interface FleetViewOptions {
  redis: RedisConnection;
  keys: KeySpace;
  prefix: string;
  tracker: StateTracker;
  silences: Silences;
  actionsQueue?: Queue;
  targets: ConsoleTarget[];
  /** How long the daemon's instance list is reused, ms. Default 15 000. */
  listMaxAgeMs?: number;
  /** How long an assembled snapshot is reused, ms. Default 400. */
  snapshotMaxAgeMs?: number;
  /** Until what age a snapshot nothing invalidated is still served while a fresh one is assembled, ms. Default 3 000 (the change feed's longest gap). */
  staleMaxAgeMs?: number;
}

const optedIn = (i: Instance) => (i.expanded_config ?? i.config)?.['user.reflex.autorestart'] === 'true';
const textOf = (code: number) => (isKnownStatusCode(code) ? statusText(code) : `status ${code}`);
const numeric = new Intl.Collator('en', { numeric: true });
/** A name's sort key in plain string order that sorts digit runs by value (`web-2` before `web-10`), computed once per row: a collator over 10k rows costs more than the rest of the page. */
const naturalKey = (s: string) => s.replace(/\d+/g, (d) => d.replace(/^0+(?=\d)/, '').padStart(12, '0'));
/** A brief Frozen between two Running (a snapshot pauses the instance for its copy) is no change of status for "since". */
const briefPauseMs = 30_000;
const running = 103;
const frozen = 110;
/** Rows built between two yields to the event loop during an assembly. */
const yieldEvery = 2_000;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
interface InStatus {
  status: number;
  since: number;
  /** The status before this one, kept so the end of a brief pause resumes it. */
  before?: { status: number; since: number };
}
/** Problems first, then by name: what an operator looks for is at the top. */
const rank = (r: FleetRow) =>
  r.quarantined ? 0 : r.statusCode === 112 ? 1 : r.acting ? 2 : r.backoffUntil ? 3 : r.statusCode !== 103 || r.health === 'unhealthy' ? 4 : 5;

/**
 * The fleet: every instance the state tracker has seen (every replica writes it, so it is complete
 * in any role), joined with the daemon's own list where this process has the target's client (the
 * cluster member, the opt-in, and instances no event has announced yet) and with what Reflex holds
 * per instance in Redis (quarantine, back-off, instance lock, crash-loop budget, silences, probe states).
 */
export class FleetView {
  private listed = new Map<string, { at: number; instances: Instance[] }>();
  private listing = new Map<string, Promise<void>>();
  /** How long each target's last list took to read, ms. */
  private readonly listMs = new Map<string, number>();
  private snapshotCache?: Assembly;
  /** Assemblies begun so far: each one's `seq`, to tell which of two began later (two can begin in the same millisecond). */
  private assemblies = 0;
  private refreshing?: Promise<void>;
  /** When the assembly of {@link refreshing} started. */
  private refreshingAt = 0;
  private generation = 0;
  /** Since when each instance has been in its status, as this process has seen it (a status confirmed again keeps its start). */
  private inStatus = new Map<string, InStatus>();
  /** How long the last assembly took (ms). */
  private lastAssemblyMs = 0;
  /** Each name's natural sort key, from the assembly before (names rarely change; the key costs a regex per row). */
  private naturalKeys = new Map<string, string>();
  /** The identity of each listed instance object (a daemon list is reused for many assemblies). */
  private readonly identityOfObject = new WeakMap<Instance, InstanceIdentity>();

  constructor(private readonly opts: FleetViewOptions) {}

  /**
   * The fleet now: reused for a moment (`snapshotMaxAgeMs`), so several viewers cost one read.
   * Older than that but younger than `staleMaxAgeMs` and not invalidated, it is still served (it
   * carries its `at`) while a fresh one is assembled behind: at 10k instances an assembly takes far
   * longer than a page may, and nothing changed that the feed saw. After {@link invalidate} (a change
   * seen), the next read waits for the fresh one.
   */
  snapshot(): Promise<FleetSnapshot> {
    const now = Date.now();
    const cache = this.snapshotCache;
    if (cache && now - cache.at < (this.opts.snapshotMaxAgeMs ?? 400)) return cache.value;
    if (cache?.ready && now - cache.at < (this.opts.staleMaxAgeMs ?? 3_000)) {
      // At 10k instances an assembly costs more than every page served meanwhile: the one behind
      // starts as late as lets it end (twice its last duration) before the served one is too old.
      const due = Math.max(this.opts.snapshotMaxAgeMs ?? 400, (this.opts.staleMaxAgeMs ?? 3_000) - 2 * this.lastAssemblyMs);
      if (!this.refreshing && now - cache.at >= due) void this.refresh();
      return cache.value;
    }
    this.snapshotCache = this.fresh(now);
    return this.snapshotCache.value;
  }

  /**
   * Assembles a fresh snapshot behind the one served (which stays until it is ready), for a
   * periodic refresh when nothing was seen to change. It resolves once a snapshot assembled after
   * the call is the one served: an assembly under way that started before may miss what the
   * refresh is for (a lock taken, a back-off queued), so it is waited for and followed by another.
   */
  async refresh(): Promise<void> {
    const asked = Date.now();
    for (;;) {
      const cache = this.snapshotCache;
      if (!cache) return void (await this.snapshot());
      if (!cache.ready || this.refreshing) {
        const startedAt = cache.ready ? this.refreshingAt : cache.at;
        await (cache.ready
          ? this.refreshing
          : cache.value.then(
              () => undefined,
              () => undefined,
            ));
        if (startedAt >= asked) return;
        continue;
      }
      const next = this.fresh(Date.now());
      const generation = this.generation;
      this.refreshingAt = next.at;
      // A change seen while it was assembled: it may predate the change, the next read assembles again.
      // A snapshot begun after this one (a read that found the cache too old) is newer: it stays.
      const refreshing = next.value.then(
        () => void (generation === this.generation && (this.snapshotCache?.seq ?? 0) < next.seq && (this.snapshotCache = next)),
        () => undefined,
      );
      this.refreshing = refreshing;
      void refreshing.finally(() => this.refreshing === refreshing && (this.refreshing = undefined));
      return refreshing;
    }
  }

  private fresh(now: number): Assembly {
    const entry: Assembly = { at: now, seq: ++this.assemblies, value: this.assemble(), ready: false };
    entry.value.then(
      () => {
        entry.ready = true;
        this.lastAssemblyMs = Date.now() - now;
      },
      () => {
        if (this.snapshotCache === entry) this.snapshotCache = undefined;
      },
    );
    return entry;
  }

  /** Forgets the reused snapshot: the next read assembles a fresh one (something changed). */
  invalidate(): void {
    this.snapshotCache = undefined;
    this.generation++;
  }

  /** One page of the fleet matching the query, with counts. */
  async page(q: FleetQuery): Promise<FleetPage> {
    const snap = await this.snapshot();
    return pageOf(snap, q);
  }

  private async daemonList(t: ConsoleTarget): Promise<{ at: number; instances: Instance[] } | undefined> {
    if (!t.client) return undefined;
    const cached = this.listed.get(t.id);
    // A list that takes long to read (10k instances: megabytes of JSON to parse) is read less often: 30 times its duration apart at least.
    const maxAge = Math.max(this.opts.listMaxAgeMs ?? 15_000, 30 * (this.listMs.get(t.id) ?? 0));
    const stale = !cached || Date.now() - cached.at > maxAge;
    if (stale && !this.listing.has(t.id)) {
      // Stamped when asked, not when answered: a change during the read may be missing from it.
      const askedAt = Date.now();
      const p = t.client
        .listInstances({ recursion: 1, allProjects: true, signal: AbortSignal.timeout(30_000) })
        .then((instances) => {
          this.listed.set(t.id, { at: askedAt, instances });
          this.listMs.set(t.id, Date.now() - askedAt);
        })
        .catch(() => undefined) // an unreachable daemon: the tracker's view stands alone
        .finally(() => this.listing.delete(t.id));
      this.listing.set(t.id, p);
    }
    // The first list is waited for (members and opt-in from the first render); later ones refresh behind.
    if (!cached) await this.listing.get(t.id);
    return this.listed.get(t.id);
  }

  private async assemble(): Promise<FleetSnapshot> {
    const at = Date.now();
    const { redis, keys } = this.opts;
    const any: InstanceRef = { target: '*', project: '*', instance: '*' };
    const [perTarget, { quarantines, locks, restarts }, delayed, silences, probeStates] = await Promise.all([
      Promise.all(
        this.opts.targets.map(async (t) => {
          const [tracked, listed] = await Promise.all([this.opts.tracker.all(t.id), this.daemonList(t)]);
          return { t, tracked, listed };
        }),
      ),
      this.perInstanceKeys(any),
      this.opts.actionsQueue?.getDelayed(0, 9_999) ?? [],
      this.opts.silences.list(at),
      // The whole hash in one read, once per snapshot (not per page or row): the health filters and counts need every row's.
      readProbeStatus(redis, keys),
    ]);
    const byKey = new Map<string, FleetRow>();
    // Which instance bears each name now: a predecessor's quarantine or back-off is not this one's.
    const identities = new Map<string, InstanceIdentity>();
    const refKey = (r: InstanceRef) => `${r.target}|${r.project}/${r.instance}`;
    let listedAny = false;
    let built = 0;
    for (const { t, tracked, listed } of perTarget) {
      const objects = new Map<string, Instance>();
      if (listed) {
        listedAny = true;
        for (const i of listed.instances) objects.set(`${i.project ?? 'default'}/${i.name}`, i);
      }
      const fields = new Set([...tracked.keys(), ...objects.keys()]);
      for (const field of fields) {
        const slash = field.indexOf('/');
        const ref = { target: t.id, project: field.slice(0, slash), instance: field.slice(slash + 1) };
        byKey.set(refKey(ref), rowOf(ref, tracked.get(field), objects.get(field), listed?.at ?? 0));
        const object = objects.get(field);
        if (object) identities.set(refKey(ref), this.identityOfListed(object));
        // Long synchronous stretches are cut: the pages asked meanwhile are answered between them.
        if (++built % yieldEvery === 0) await yieldToEventLoop();
      }
    }
    const uuids = new Map([...identities].map(([k, id]) => [k, id.uuid]));
    const probesOf = joinProbeHealth(byKey, uuids, probeStates);
    const budget = new CrashLoopBudget(redis);
    const held = await Promise.all(
      quarantines.map(async (k) => {
        const ref = instanceOfKey(this.opts.prefix, k);
        return ref ? { ref, q: await budget.quarantine({ restarts: keys.restarts(ref), quarantine: k }), ttl: await redis.pttl(k) } : undefined;
      }),
    );
    for (const h of held) {
      const row = h && byKey.get(refKey(h.ref));
      if (!row || !h.q || !quarantineHolds(h.q, identityToken(identities.get(row.key)))) continue;
      row.quarantined = { since: new Date(h.q.since).toISOString(), ...(h.ttl > 0 ? { until: new Date(at + h.ttl).toISOString() } : {}) };
    }
    for (const k of locks) {
      const row = this.rowOfKey(byKey, k);
      if (row) row.acting = true;
    }
    const counts = await Promise.all(restarts.map((k) => redis.zcard(k)));
    restarts.forEach((k, i) => {
      const row = this.rowOfKey(byKey, k);
      if (row) row.restarts = counts[i]!;
    });
    for (const job of delayed) {
      const d = job.data as Partial<InstanceRef> & { identity?: InstanceIdentity };
      const row = d.target && d.project && d.instance ? byKey.get(refKey(d as InstanceRef)) : undefined;
      if (!row || isAnotherInstance(d.identity, identities.get(row.key) ?? {})) continue;
      const until = new Date(job.timestamp + (job.opts.delay ?? 0)).toISOString();
      if (!row.backoffUntil || until > row.backoffUntil) row.backoffUntil = until;
    }
    if (silences.length) {
      for (const row of byKey.values()) {
        const s = matchingSilence(silences, { target: row.target, project: row.project, location: row.location ?? 'none', instance: row.name });
        if (s) row.silenced = { id: s.id, reason: s.reason, until: s.until };
      }
    }
    await yieldToEventLoop();
    const naturalKeys = new Map<string, string>();
    const keyed: [string, FleetRow][] = [];
    for (const r of byKey.values()) {
      const natural = naturalKeys.get(r.name) ?? this.naturalKeys.get(r.name) ?? naturalKey(r.name);
      naturalKeys.set(r.name, natural);
      keyed.push([`${rank(r)}\u0000${natural}\u0000${r.project}\u0000${r.target}`, r]);
    }
    this.naturalKeys = naturalKeys;
    keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const rows = keyed.map((k) => k[1]);
    await yieldToEventLoop();
    this.keepSince(rows);
    return { at, rows, listed: listedAny, probeStates: probesOf };
  }

  /**
   * "since" is the time in the current status: a status the tracker confirms again (a resync's
   * read, a snapshot's pause and resume) keeps the start this view saw, or the one before the
   * confirmation; only a change of status moves it.
   */
  private keepSince(rows: FleetRow[]): void {
    const seen = new Map<string, InStatus>();
    for (const r of rows) {
      let known = this.inStatus.get(r.key);
      if (r.since === undefined) {
        // The daemon's list is shown for now (a change Reflex has not processed yet): what this view saw stays known.
        if (known) seen.set(r.key, known);
        continue;
      }
      const prev = r.prevStatus;
      // Not sent (JSON leaves undefined out); not deleted either: a delete turns each row into a slow dictionary object.
      r.prevStatus = undefined;
      const pause = prev !== undefined && prev.status === frozen && r.statusCode === running && r.since - prev.at <= briefPauseMs;
      // Seen during the pause itself: the Running before it is what continues.
      if (pause && known?.status === frozen && known.before?.status === running) known = known.before;
      const continued = prev !== undefined && (prev.status === r.statusCode || pause);
      if (known && known.status === r.statusCode && (continued || known.since >= r.since)) r.since = known.since;
      else if (prev && prev.status === r.statusCode) r.since = Math.min(r.since, prev.at);
      if (known && known.status === r.statusCode && known.since === r.since) {
        // Unchanged (nearly every row of every assembly): kept as it is.
        seen.set(r.key, known);
        continue;
      }
      const entry: InStatus = { status: r.statusCode, since: r.since };
      if (known && known.status !== r.statusCode) entry.before = { status: known.status, since: known.since };
      else if (known?.before && known.status === r.statusCode) entry.before = known.before;
      seen.set(r.key, entry);
    }
    this.inStatus = seen;
  }

  private identityOfListed(object: Instance): InstanceIdentity {
    let id = this.identityOfObject.get(object);
    if (!id) this.identityOfObject.set(object, (id = identityOf(object)));
    return id;
  }

  private rowOfKey(rows: Map<string, FleetRow>, key: string): FleetRow | undefined {
    const ref = instanceOfKey(this.opts.prefix, key);
    return ref && rows.get(`${ref.target}|${ref.project}/${ref.instance}`);
  }

  /**
   * The quarantine, lock and restart keys of every instance, in one SCAN of the instance keys (a
   * walk of the whole key space each: three patterns walked it three times).
   */
  private async perInstanceKeys(any: InstanceRef): Promise<{ quarantines: string[]; locks: string[]; restarts: string[] }> {
    const { keys } = this.opts;
    const kinds = [keys.quarantine(any), keys.instanceLock(any), keys.restarts(any)];
    const base = keys.instanceLock(any).slice(0, -':lock'.length);
    // From the end of the instance's tag (`…}:lock`): a cooldown of a rule named "lock" is `…}:cooldown:lock`.
    const suffixes = kinds.map((k) => k.slice(base.lastIndexOf('}')));
    const found: string[][] = [[], [], []];
    for await (const k of scanKeys(this.opts.redis, `${base}:*`, 5_000)) {
      const i = suffixes.findIndex((s) => k.endsWith(s));
      if (i >= 0) found[i]!.push(k);
    }
    return { quarantines: found[0]!, locks: found[1]!, restarts: found[2]! };
  }
}

function rowOf(ref: InstanceRef, tracked: TrackedStatus | undefined, object: Instance | undefined, listedAt: number): FleetRow {
  // The tracker is live, the list up to a few seconds old: the list wins only when read after the tracker's last change.
  const fromList = object !== undefined && tracked !== undefined && listedAt > tracked.at && object.status_code !== tracked.status;
  const statusCode = fromList ? object.status_code : (tracked?.status ?? object?.status_code ?? 0);
  return {
    key: `${ref.target}|${ref.project}/${ref.instance}`,
    target: ref.target,
    project: ref.project,
    name: ref.instance,
    ...(object ? { location: object.location || 'none', optIn: optedIn(object) } : {}),
    statusCode,
    status: textOf(statusCode),
    ...(tracked && !fromList
      ? {
          since: tracked.at,
          ...(tracked.prev ? { prevStatus: { status: tracked.prev.status, at: tracked.prev.at } } : {}),
          ...(tracked.intent ? { intent: tracked.intent } : {}),
        }
      : {}),
    ...(fromList ? { statusFrom: 'list' as const } : {}),
    acting: false,
    restarts: 0,
    health: 'none',
  };
}

const flags: Record<string, (r: FleetRow) => boolean> = {
  down: (r) => r.statusCode !== 103,
  error: (r) => r.statusCode === 112,
  quarantined: (r) => !!r.quarantined,
  backoff: (r) => !!r.backoffUntil,
  silenced: (r) => !!r.silenced,
  acting: (r) => r.acting,
  unhealthy: (r) => r.health === 'unhealthy',
};

/** What the filter language sees of a row: its fields as strings, plus `status`, `location` and `config` as the daemon names them. */
function filterObject(r: FleetRow): Record<string, unknown> {
  return {
    name: r.name,
    project: r.project,
    target: r.target,
    location: r.location ?? '',
    status: r.status,
    status_code: String(r.statusCode),
    opt_in: String(!!r.optIn),
    quarantined: String(!!r.quarantined),
    backoff: String(!!r.backoffUntil),
    silenced: String(!!r.silenced),
    acting: String(r.acting),
    restarts: String(r.restarts),
    health: r.health,
  };
}

/**
 * Applies a query to a snapshot. A filter that does not parse throws the parser's
 * FilterSyntaxError (the route answers 400 with its message).
 */
export function pageOf(snap: FleetSnapshot, q: FleetQuery): FleetPage {
  const index = indexOf(snap);
  const rows = matching(snap, index, q);
  const limit = Math.min(500, Math.max(1, q.limit ?? 50));
  const offset = Math.max(0, Math.min(q.offset ?? 0, Math.max(0, rows.length - 1)));
  return {
    at: snap.at,
    total: snap.rows.length,
    matched: rows.length,
    offset,
    rows: rows.slice(offset, offset + limit),
    counts: index.counts,
    byStatus: index.byStatus,
    targets: index.targets,
    projects: index.projects,
    members: index.members,
    listed: snap.listed,
  };
}

/** What every page of one snapshot shares: its counts, its choices, and the matches of the queries asked of it. */
interface FleetIndex {
  counts: Record<string, number>;
  byStatus: Record<string, number>;
  targets: string[];
  projects: string[];
  members: string[];
  /** Matching rows per query (filters only, not the page), for the queries asked of this snapshot: paging through it filters once. */
  matches: Map<string, FleetRow[]>;
}
const indexes = new WeakMap<FleetSnapshot, FleetIndex>();
/** Queries remembered per snapshot (a snapshot lives for a moment: a few viewers, a few pages each). */
const maxMatches = 32;

function indexOf(snap: FleetSnapshot): FleetIndex {
  let index = indexes.get(snap);
  if (index) return index;
  const counts: Record<string, number> = { total: snap.rows.length };
  for (const name of Object.keys(flags)) counts[name] = 0;
  const byStatus: Record<string, number> = {};
  const targets = new Set<string>();
  const projects = new Set<string>();
  const members = new Set<string>();
  for (const r of snap.rows) {
    for (const [name, f] of Object.entries(flags)) if (f(r)) counts[name]!++;
    byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    targets.add(r.target);
    projects.add(r.project);
    if (r.location) members.add(r.location);
  }
  const sorted = (s: Set<string>) => [...s].sort(numeric.compare);
  index = { counts, byStatus, targets: sorted(targets), projects: sorted(projects), members: sorted(members), matches: new Map() };
  indexes.set(snap, index);
  return index;
}

function matching(snap: FleetSnapshot, index: FleetIndex, q: FleetQuery): FleetRow[] {
  const key = JSON.stringify([q.target, q.project, q.member, q.status, q.flag, q.filter?.trim()]);
  const known = index.matches.get(key);
  if (known) return known;
  const match = q.filter?.trim() ? compileFilter(parseFilter(q.filter, { extended: true })) : undefined;
  const flag = q.flag ? flags[q.flag] : undefined;
  const status = q.status === 'down' ? flags.down : q.status ? (r: FleetRow) => r.status === q.status : undefined;
  const plain = !q.target && !q.project && !q.member && !status && !flag && !match;
  const rows = plain
    ? snap.rows
    : snap.rows.filter(
        (r) =>
          (!q.target || r.target === q.target) &&
          (!q.project || r.project === q.project) &&
          (!q.member || r.location === q.member) &&
          (!status || status(r)) &&
          (!flag || flag(r)) &&
          (!match || match(filterObject(r))),
      );
  if (index.matches.size >= maxMatches) index.matches.delete(index.matches.keys().next().value!);
  index.matches.set(key, rows);
  return rows;
}
