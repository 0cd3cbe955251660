import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSchedules } from '../../src/schedules/schedule-loader.js';

const entry = resolve('src/index.ts');

describe('schedule loader', () => {
  it('loads the example schedules', async () => {
    const { schedules, errors } = await loadSchedules('rules/examples');
    expect(errors).toEqual([]);
    expect(schedules.map((s) => s.name)).toEqual(['hourly-backup', 'web-quarter-hourly', 'prune-expired-snapshots', 'ci-cleanup']);
  });

  it('picks schedules from files that mix them with rules, and reports broken files and duplicate names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-schedules-'));
    writeFileSync(
      join(dir, 'mixed.ts'),
      `import { defineRule, defineSchedule } from '${entry}';
export default [
  defineRule({ name: 'r', on: { kind: 'lifecycle' }, actions: [{ action: 'start' }] }),
  defineSchedule({ name: 'nightly', cron: '0 3 * * *', tasks: [{ task: 'prune-expired' }] }),
];
export const extra = defineSchedule({ name: 'extra', every: '1h', tasks: [{ task: 'prune-expired' }] });`,
    );
    writeFileSync(
      join(dir, 'rule-only.ts'),
      `import { defineRule } from '${entry}';\nexport default defineRule({ name: 'r2', on: { kind: 'lifecycle' }, actions: [{ action: 'start' }] });`,
    );
    writeFileSync(
      join(dir, 'dup.ts'),
      `import { defineSchedule } from '${entry}';\nexport default defineSchedule({ name: 'nightly', every: '1h', tasks: [{ task: 'prune-expired' }] });`,
    );
    writeFileSync(
      join(dir, 'broken.ts'),
      `import { defineSchedule } from '${entry}';\nexport default defineSchedule({ name: 'bad', every: '1h', tasks: [] });`,
    );
    const { schedules, errors } = await loadSchedules(dir);
    expect(schedules.map((s) => s.name).sort()).toEqual(['extra', 'nightly']);
    expect(schedules.find((s) => s.name === 'nightly')?.everyMs).toBe(3_600_000); // files load in name order: dup.ts first
    expect(errors.map((e) => [e.file.split('/').pop(), e.message.split('\n')[0]])).toEqual([
      ['broken.ts', expect.stringMatching(/invalid schedule "bad": tasks/)],
      ['mixed.ts', 'schedule name "nightly" is already used by ' + join(dir, 'dup.ts')],
    ]);
  });
});
