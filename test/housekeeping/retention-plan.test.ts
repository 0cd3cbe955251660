import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { periodKey, selectGfs } from '../../src/schedules/housekeeping/gfs.js';
import { isGood, planRetention, type SnapshotInfo } from '../../src/schedules/housekeeping/retention-plan.js';

const now = Date.UTC(2024, 5, 15, 12, 0, 0);
const hour = 3_600_000;

/** Snapshots with unique names; some owned (`auto-*`), some manual; some expired, some never expiring. */
const snapshotList = fc
  .uniqueArray(
    fc.record({
      id: fc.integer({ min: 0, max: 10_000 }),
      owned: fc.boolean(),
      ageH: fc.integer({ min: 0, max: 24 * 400 }),
      expiry: fc.option(fc.integer({ min: -48, max: 48 }), { nil: undefined }),
    }),
    { selector: (r) => r.id, maxLength: 40 },
  )
  .map((rows) =>
    rows.map<SnapshotInfo>((r) => ({
      name: `${r.owned ? 'auto' : 'manual'}-${r.id}`,
      createdAt: now - r.ageH * hour - (r.id % 7) * 1000,
      expiresAt: r.expiry === undefined ? undefined : now + r.expiry * hour,
    })),
  );

const owned = (name: string) => name.startsWith('auto-');
const policy = fc.record({
  keepLast: fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
  gfs: fc.option(
    fc.record({
      hourly: fc.integer({ min: 0, max: 24 }),
      daily: fc.integer({ min: 0, max: 7 }),
      weekly: fc.integer({ min: 0, max: 5 }),
      monthly: fc.integer({ min: 0, max: 12 }),
    }),
    { nil: undefined },
  ),
});

function newestGood(list: SnapshotInfo[]): SnapshotInfo | undefined {
  return list.filter((s) => owned(s.name) && isGood(s, now)).sort((a, b) => b.createdAt - a.createdAt || (a.name < b.name ? 1 : -1))[0];
}

describe('retention plan (properties)', () => {
  it('never deletes the newest good owned snapshot', () => {
    fc.assert(
      fc.property(snapshotList, policy, (list, p) => {
        const plan = planRetention(list, p, owned, now);
        const newest = newestGood(list);
        if (newest) {
          expect(plan.delete.map((d) => d.name)).not.toContain(newest.name);
          expect(plan.keep.map((k) => k.name)).toContain(newest.name);
        }
      }),
    );
  });

  it('never touches a snapshot it does not own', () => {
    fc.assert(
      fc.property(snapshotList, policy, (list, p) => {
        const plan = planRetention(list, p, owned, now);
        for (const d of plan.delete) expect(owned(d.name)).toBe(true);
        for (const k of plan.keep) expect(owned(k.name)).toBe(true);
        expect(plan.unowned.sort()).toEqual(
          list
            .filter((s) => !owned(s.name))
            .map((s) => s.name)
            .sort(),
        );
      }),
    );
  });

  it('decides every owned snapshot exactly once', () => {
    fc.assert(
      fc.property(snapshotList, policy, (list, p) => {
        const plan = planRetention(list, p, owned, now);
        const decided = [...plan.keep.map((k) => k.name), ...plan.delete.map((d) => d.name)].sort();
        expect(decided).toEqual(
          list
            .filter((s) => owned(s.name))
            .map((s) => s.name)
            .sort(),
        );
      }),
    );
  });

  it('with keepLast only, keeps exactly the newest N good owned snapshots and deletes the rest', () => {
    fc.assert(
      fc.property(snapshotList, fc.integer({ min: 1, max: 10 }), (list, n) => {
        const plan = planRetention(list, { keepLast: n }, owned, now);
        const good = list.filter((s) => owned(s.name) && isGood(s, now)).sort((a, b) => b.createdAt - a.createdAt || (a.name < b.name ? 1 : -1));
        expect(plan.keep.map((k) => k.name)).toEqual(good.slice(0, n).map((s) => s.name));
        expect(plan.delete.length).toBe(list.filter((s) => owned(s.name)).length - Math.min(n, good.length));
      }),
    );
  });

  it('keeps a planned snapshot and counts it among the last N', () => {
    fc.assert(
      fc.property(snapshotList, fc.integer({ min: 1, max: 10 }), (list, n) => {
        const planned: SnapshotInfo = { name: 'auto-new', createdAt: now, planned: true };
        const plan = planRetention([...list, planned], { keepLast: n }, owned, now);
        expect(plan.keep[0]!.name).toBe('auto-new');
        expect(plan.keep.length).toBe(Math.min(n, 1 + list.filter((s) => owned(s.name) && isGood(s, now)).length));
      }),
    );
  });

  it('with GFS only, keeps at most one snapshot per period bucket and at most the configured count of buckets', () => {
    fc.assert(
      fc.property(snapshotList, fc.integer({ min: 1, max: 10 }), (list, days) => {
        const plan = planRetention(list, { gfs: { daily: days } }, owned, now);
        const byDay = plan.keep.filter((k) => k.reasons.some((r) => r.startsWith('daily')));
        expect(byDay.length).toBeLessThanOrEqual(days);
        const keys = byDay.map((k) => periodKey('daily', list.find((s) => s.name === k.name)!.createdAt));
        expect(new Set(keys).size).toBe(keys.length);
      }),
    );
  });
});

describe('retention plan (examples)', () => {
  it('deletes expired owned snapshots, keeps the newest good one even with an expired newer one', () => {
    const list: SnapshotInfo[] = [
      { name: 'auto-1', createdAt: now - 3 * hour },
      { name: 'auto-2', createdAt: now - 2 * hour },
      { name: 'auto-3', createdAt: now - hour, expiresAt: now - 1 },
      { name: 'manual', createdAt: now - 5 * hour, expiresAt: now - 1 },
    ];
    const plan = planRetention(list, { keepLast: 1 }, owned, now);
    expect(plan.keep).toEqual([{ name: 'auto-2', reasons: ['newest', 'last 1'] }]);
    expect(plan.delete.map((d) => d.name)).toEqual(['auto-1', 'auto-3']);
    expect(plan.unowned).toEqual(['manual']);
  });

  it('GFS picks the newest of each day, week and month (restic semantics: empty periods do not count)', () => {
    const day = 24 * hour;
    const times = [0, 1, 2, 3, 10, 40, 70].map((d) => now - d * day); // days ago
    const picked = selectGfs(times, { daily: 3, weekly: 2, monthly: 3 });
    expect([...picked.keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 4, 5, 6]);
    expect(picked.get(0)).toEqual(['daily 2024-06-15', 'weekly 2024-W24', 'monthly 2024-06']);
    expect(picked.get(4)).toEqual(['weekly 2024-W23']);
  });

  it('buckets by the wall clock of the time zone', () => {
    const t = Date.UTC(2024, 0, 1, 23, 30); // 2024-01-02 00:30 in Paris
    expect(periodKey('daily', t)).toBe('2024-01-01');
    expect(periodKey('daily', t, 'Europe/Paris')).toBe('2024-01-02');
    expect(periodKey('weekly', Date.UTC(2021, 0, 3))).toBe('2020-W53');
  });
});
