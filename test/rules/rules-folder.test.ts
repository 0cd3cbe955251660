import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { checkRules } from '../../src/rules/rule-checker.js';
import { loadRuleSet, RuleSet } from '../../src/rules/rule-set.js';
import { loadRulesFolder } from '../../src/rules/rules-folder.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { rulesFolder } from './support/reload-bed.js';

const entry = resolve('src/index.ts');

describe('the schedules of a rules folder', () => {
  it('loads the example schedules', async () => {
    const { schedules, errors } = await loadRulesFolder('rules/examples');
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
    const { schedules, errors } = await loadRulesFolder(dir);
    expect(schedules.map((s) => s.name).sort()).toEqual(['extra', 'nightly']);
    expect(schedules.find((s) => s.name === 'nightly')?.everyMs).toBe(3_600_000); // files load in name order: dup.ts first
    expect(errors.map((e) => [e.file.split('/').pop(), e.message.split('\n')[0]])).toEqual([
      ['broken.ts', expect.stringMatching(/invalid schedule "bad": tasks/)],
      ['mixed.ts', 'schedule name "nightly" is already used by ' + join(dir, 'dup.ts')],
    ]);
  });
});

/** A file that counts its imports (in this process, by file name) before it exports `body`. */
const counted = (
  name: string,
  body: string,
) => `import { defineAction, defineNotifications, defineProbe, defineRule, defineSchedule, z } from 'reflex-lxd';
const counts = ((globalThis as Record<string, unknown>).__ruleFileImports ??= {}) as Record<string, number>;
counts['${name}'] = (counts['${name}'] ?? 0) + 1;
${body}
`;

const importsOf = (dir: string) =>
  Object.fromEntries(
    Object.entries(((globalThis as Record<string, unknown>).__ruleFileImports ?? {}) as Record<string, number>)
      .filter(([name]) => name.startsWith(dir))
      .map(([name, n]) => [name.slice(dir.length + 1), n]),
  );

describe('one load of the rules folder', () => {
  let redis: RedisConnection | undefined;
  afterEach(() => redis?.disconnect());

  it('imports each file once and hands out its rules, actions, schedules, probes and receivers; a reload imports each once more', async () => {
    const folder = rulesFolder({});
    const dir = folder.dir;
    folder.write({
      'heal.ts': counted(
        `${dir}/heal.ts`,
        `export default defineRule({ name: 'heal', on: { kind: 'instance.status', to: [102], intent: ['unrequested'] }, actions: [{ action: 'note' }] });`,
      ),
      'note.ts': counted(
        `${dir}/note.ts`,
        `export const note = defineAction({ name: 'note', describe: 'does nothing', params: z.strictObject({}), touchesInstance: false, run: async () => ({ result: 'done', summary: 'noted' }) });`,
      ),
      'nightly.ts': counted(
        `${dir}/nightly.ts`,
        `export default defineSchedule({ name: 'nightly', cron: '0 3 * * *', tasks: [{ task: 'prune-expired' }] });`,
      ),
      'web.ts': counted(`${dir}/web.ts`, `export default defineProbe({ name: 'web', kind: 'tcp', port: 80 });`),
      'receivers.ts': counted(
        `${dir}/receivers.ts`,
        `export default defineNotifications({ receivers: [{ kind: 'webhook', name: 'ops', url: 'https://hooks.example/ops' }], route: { receiver: 'ops' } });`,
      ),
    });
    const files = { 'heal.ts': 1, 'note.ts': 1, 'nightly.ts': 1, 'web.ts': 1, 'receivers.ts': 1 };

    const set = await loadRuleSet({ dir });
    expect(set.errors).toEqual([]);
    expect(importsOf(dir)).toEqual(files);
    expect(set.loaded.rules.map((r) => r.name)).toEqual(['heal']);
    expect(set.loaded.actions.userDefined().map((a) => a.name)).toEqual(['note']);
    expect(set.loaded.schedules.map((s) => s.name)).toEqual(['nightly']);
    expect(set.loaded.probes.map((p) => p.name)).toEqual(['web']);
    expect(set.notify?.settings.receivers.map((r) => r.name)).toEqual(['ops']);

    redis = redisClient();
    const audit = new AuditLog(redis, keySpace(uniquePrefix('folder')).audit);
    const ruleSet = new RuleSet(set, { dir, audit, logger: pino({ level: 'silent' }), replica: 'test' });
    expect(await ruleSet.reload({ by: 'cli' })).toMatchObject({ result: 'reloaded', rules: 1, schedules: 1, receivers: 1 });
    expect(importsOf(dir)).toEqual(Object.fromEntries(Object.keys(files).map((f) => [f, 2])));
  }, 60_000);

  it('reflex rules check reports the problems reflex run refuses in schedules and probes too', async () => {
    const schedule = (name: string) =>
      `import { defineSchedule } from 'reflex-lxd';\nexport default defineSchedule({ name: '${name}', every: '1h', tasks: [{ task: 'prune-expired' }] });\n`;
    const folder = rulesFolder({
      'a.ts': schedule('nightly'),
      'b.ts': schedule('nightly'),
      'c.ts': `import { defineProbe } from 'reflex-lxd';\nexport default defineProbe({ name: 'config', kind: 'tcp', port: 22 });\n`,
    });
    const { problems } = await checkRules(folder.dir);
    expect(problems.map((p) => p.message)).toEqual([
      `schedule name "nightly" is already used by ${join(folder.dir, 'a.ts')}`,
      expect.stringMatching(/^probe name "config" is reserved/),
    ]);
  }, 60_000);
});
