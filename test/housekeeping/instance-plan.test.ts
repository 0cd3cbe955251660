import { describe, expect, it } from 'vitest';
import type { Instance } from '../../src/client/instance.js';
import { planInstance, type Ownership } from '../../src/schedules/housekeeping/instance-plan.js';
import type { SnapshotInfo } from '../../src/schedules/housekeeping/retention-plan.js';
import { defineSchedule } from '../../src/schedules/schedule.js';

const now = Date.UTC(2024, 5, 15, 12, 0, 0);
const tickAt = now - 200;
const hour = 3_600_000;

function instance(over: Partial<Instance> & Record<string, unknown> = {}): Instance {
  return {
    name: 'web1',
    status: 'Running',
    status_code: 103,
    config: { 'user.backup': 'true' },
    created_at: '2024-01-01T00:00:00Z',
    last_used_at: '2024-06-15T11:00:00Z',
    ...over,
  } as Instance;
}

const snaps: SnapshotInfo[] = [
  { name: 'auto-20240615-090000', createdAt: now - 3 * hour },
  { name: 'auto-20240615-100000', createdAt: now - 2 * hour },
  { name: 'auto-20240615-110000', createdAt: now - hour },
  { name: 'before-upgrade', createdAt: now - 30 * hour },
];

/** The ledger proves the three auto-* snapshots are the schedule's; before-upgrade was made by hand. */
const ownership = (over: Partial<Ownership> = {}): Ownership => {
  const mine = new Set(snaps.filter((s) => s.name.startsWith('auto-')).map((s) => s.name));
  return { mine, reflex: mine, reserved: mine, tickClaimed: false, recorded: mine.size, ...over };
};

const backup = defineSchedule({
  name: 'backup',
  every: '1h',
  scope: { filter: 'config.user.backup eq true' },
  tasks: [{ task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M%S', expiry: '7d' }, { task: 'retention', keepLast: 2 }, { task: 'prune-expired' }],
});

/** The plan of the backup schedule's tick for web1 with {@link snaps} and {@link ownership}, `facts` over them. */
const backupPlan = (facts: Partial<Parameters<typeof planInstance>[0]> = {}) =>
  planInstance({ instance: instance(), project: 'default', snapshots: snaps, ownership: ownership(), ...facts }, backup.tasks, {
    now,
    tickAt,
    tz: 'UTC',
  });

describe('instance plan', () => {
  it('creates first, then deletes what retention drops, counting the new snapshot; manual snapshots stay', () => {
    const plan = backupPlan({ pool: { name: 'default', freeRatio: 0.5 } });
    expect(plan.order).toBe('create-first');
    expect(plan.steps.map((s) => [s.kind, 'name' in s ? s.name : ''])).toEqual([
      ['create-snapshot', 'auto-20240615-115959'],
      ['delete-snapshot', 'auto-20240615-090000'],
      ['delete-snapshot', 'auto-20240615-100000'],
    ]);
    expect(plan.steps[0]).toMatchObject({ expiresAt: new Date(now + 7 * 24 * hour).toISOString() });
    expect(plan.keep.map((k) => k.name)).toEqual(['auto-20240615-115959', 'auto-20240615-110000']);
  });

  it('prunes before creating when the pool is low on space', () => {
    const plan = backupPlan({ pool: { name: 'default', freeRatio: 0.05 } });
    expect(plan.order).toBe('prune-first');
    expect(plan.orderReason).toMatch(/5% free \(below 10%\)/);
    expect(plan.steps.map((s) => s.kind)).toEqual(['delete-snapshot', 'delete-snapshot', 'create-snapshot']);
  });

  it('skips stopped instances for snapshots unless asked, but still applies retention', () => {
    const plan = backupPlan({ instance: instance({ status: 'Stopped', status_code: 102 }) });
    expect(plan.notes).toContain('snapshot: instance is Stopped (includeStopped is false)');
    expect(plan.steps.map((s) => ('name' in s ? s.name : ''))).toEqual(['auto-20240615-090000']);
  });

  it('does not take the same tick twice: the ledger says this tick already claimed its snapshot', () => {
    const plan = backupPlan({ ownership: ownership({ tickClaimed: true }) });
    expect(plan.steps.find((s) => s.kind === 'create-snapshot')).toBeUndefined();
    expect(plan.notes.join()).toMatch(/already taken/);
  });

  it('a manual snapshot with the name of this tick: takes its own under another name, and never deletes the manual one', () => {
    const manual = { name: 'auto-20240615-115959', createdAt: now - 100 };
    const plan = backupPlan({ snapshots: [...snaps, manual] });
    expect(plan.steps[0]).toMatchObject({ kind: 'create-snapshot', name: 'auto-20240615-115959-2' });
    expect(plan.steps.map((s) => ('name' in s ? s.name : ''))).not.toContain('auto-20240615-115959');
    expect(plan.keep.map((k) => k.name)).toEqual(['auto-20240615-115959-2', 'auto-20240615-110000']);
    expect(plan.unproven).toEqual(['auto-20240615-115959']);
    expect(plan.notes.join()).toMatch(/auto-20240615-115959 is taken/);
  });

  it('a name reserved in the ledger (its job still running) is not given to another snapshot', () => {
    const plan = backupPlan({ ownership: ownership({ reserved: new Set(['auto-20240615-115959']) }) });
    expect(plan.steps[0]).toMatchObject({ kind: 'create-snapshot', name: 'auto-20240615-115959-2' });
  });

  it('without ledger records (lost, or never made by Reflex) retention deletes nothing and says why', () => {
    const plan = backupPlan({ ownership: ownership({ mine: new Set(), reflex: new Set(), reserved: new Set(), recorded: 0 }) });
    expect(plan.steps.map((s) => s.kind)).toEqual(['create-snapshot']);
    expect(plan.unproven).toEqual(['auto-20240615-090000', 'auto-20240615-100000', 'auto-20240615-110000']);
    expect(plan.notes.join()).toMatch(/does not prove Reflex made them; kept/);
  });

  it('keepWithin keeps every snapshot of the last period, with the reason', () => {
    const s = defineSchedule({
      name: 'backup',
      every: '1h',
      tasks: [
        { task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M%S' },
        { task: 'retention', keepWithin: '150m' },
      ],
    });
    const plan = planInstance({ instance: instance(), project: 'default', snapshots: snaps, ownership: ownership() }, s.tasks, {
      now,
      tickAt,
      tz: 'UTC',
    });
    expect(plan.steps.filter((x) => x.kind === 'delete-snapshot').map((x) => ('name' in x ? x.name : ''))).toEqual(['auto-20240615-090000']);
    expect(plan.keep.find((k) => k.name === 'auto-20240615-100000')!.reasons).toEqual(['within 150m']);
  });

  it('prune-expired deletes expired snapshots, manual ones included, but never one not yet expired', () => {
    const s = defineSchedule({ name: 'prune', every: '1h', tasks: [{ task: 'prune-expired' }] });
    const list: SnapshotInfo[] = [
      { name: 'old', createdAt: now - 10 * hour, expiresAt: now - hour },
      { name: 'fresh', createdAt: now - 10 * hour, expiresAt: now + hour },
      { name: 'forever', createdAt: now - 10 * hour },
    ];
    const plan = planInstance({ instance: instance(), project: 'default', snapshots: list }, s.tasks, { now, tickAt, tz: 'UTC' });
    expect(plan.steps).toEqual([
      { kind: 'delete-snapshot', task: 'prune-expired', name: 'old', reason: `expired at ${new Date(now - hour).toISOString()}`, dryRun: false },
    ]);
  });

  it('delete-stopped deletes only stopped instances idle for longer than olderThan', () => {
    const s = defineSchedule({
      name: 'ci-cleanup',
      every: '10m',
      scope: { filter: 'name eq ci-.*' },
      tasks: [{ task: 'delete-stopped', olderThan: '2d', confirm: true }],
      dryRun: true,
    });
    const facts = (over: Record<string, unknown>) => ({ instance: instance({ name: 'ci-1', ...over }), project: 'default', snapshots: [] });
    const old = { status: 'Stopped', status_code: 102, last_used_at: '2024-06-10T00:00:00Z' };
    expect(planInstance(facts(old), s.tasks, { now, tickAt, tz: 'UTC' }).steps).toMatchObject([{ kind: 'delete-instance', dryRun: true }]);
    expect(planInstance(facts({ ...old, status: 'Running', status_code: 103 }), s.tasks, { now, tickAt, tz: 'UTC' }).steps).toEqual([]);
    expect(planInstance(facts({ ...old, last_used_at: '2024-06-14T00:00:00Z' }), s.tasks, { now, tickAt, tz: 'UTC' }).notes.join()).toMatch(
      /not older than 2d/,
    );
    // Never started: its creation time counts.
    expect(
      planInstance(facts({ ...old, last_used_at: '0001-01-01T00:00:00Z', created_at: '2024-06-01T00:00:00Z' }), s.tasks, { now, tickAt, tz: 'UTC' })
        .steps,
    ).toHaveLength(1);
  });
});

describe('defineSchedule', () => {
  it('validates timing, tasks and the confirmation of deletions', () => {
    const base = { name: 's', tasks: [{ task: 'snapshot' as const }] };
    expect(() => defineSchedule({ ...base })).toThrow(/exactly one of every and cron/);
    expect(() => defineSchedule({ ...base, every: '10s', cron: '* * * * *' })).toThrow(/exactly one/);
    expect(() => defineSchedule({ ...base, every: '500ms' })).toThrow(/at least 1s/);
    expect(() => defineSchedule({ ...base, cron: '0 3 * *' })).toThrow(/4 fields/);
    expect(() => defineSchedule({ ...base, cron: '0 3 * * *', tz: 'Mars/Olympus' })).toThrow(/unknown time zone/);
    expect(() => defineSchedule({ name: 's', every: '1h', tasks: [{ task: 'retention', keepLast: 3 }] })).toThrow(/owned/);
    expect(() => defineSchedule({ name: 's', every: '1h', tasks: [{ task: 'snapshot' }, { task: 'retention' }] })).toThrow(/keepLast, keepWithin/);
    expect(() =>
      defineSchedule({
        name: 's',
        every: '1h',
        scope: { filter: 'name eq ci-.*' },
        tasks: [{ task: 'delete-stopped', olderThan: '1d', confirm: false as true }],
      }),
    ).toThrow(/confirm: true/);
    expect(() => defineSchedule({ name: 's', every: '1h', tasks: [{ task: 'delete-stopped', olderThan: '1d', confirm: true }] })).toThrow(
      /needs a filter/,
    );
    expect(() => defineSchedule({ ...base, every: '1h', scope: { filter: 'name eq' } })).toThrow(/scope.filter/);
    const s = defineSchedule({ ...base, cron: '0 3 * * *', tz: 'Europe/Paris', catchUp: 'skip' });
    expect(s).toMatchObject({ kind: 'schedule', cron: '0 3 * * *', tz: 'Europe/Paris', catchUp: 'skip', catchUpGraceMs: 300_000 });
    expect(s.tasks[0]).toMatchObject({ namePattern: 's-%Y%m%d-%H%M%S', includeStopped: false });
    expect(defineSchedule({ ...base, every: '4s' }).catchUpGraceMs).toBe(2000);
    expect(defineSchedule({ ...base, every: '1h' }).staleAfterMs).toBe(2 * hour);
    expect(defineSchedule({ ...base, every: '1h', staleAfter: '3h' }).staleAfterMs).toBe(3 * hour);
  });
});
