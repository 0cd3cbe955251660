import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ActionContext } from '../../src/actions/action.js';
import { runAction } from '../../src/actions/define-action.js';
import { pino } from 'pino';
import { AuditLog, type StoredAuditRecord } from '../../src/audit/audit-log.js';
import { keySpace } from '../../src/redis/key-space.js';
import { loadRuleSet, RuleSet } from '../../src/rules/rule-set.js';
import { loadRulesFolder, type RulesFolder } from '../../src/rules/rules-folder.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { startActionBed, type ActionBed } from './action-bed.js';

/** A rules folder in a temporary directory, one file per entry. */
function rulesFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'reflex-user-actions-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** The 1-based line of the first line of `text` holding `needle`. */
function lineOf(text: string, needle: string): number {
  const i = text.split('\n').findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`"${needle}" not in the file`);
  return i + 1;
}

type Hook = (ctx: ActionContext<{ label: string }>) => Promise<'fail' | void>;
const hooks = globalThis as unknown as { reflexTestHook?: Hook };

const actionFile = `import { defineAction, defineRule, ReflexError, z } from 'reflex-lxd';

const hooks = globalThis as unknown as { reflexTestHook?: (ctx: unknown) => Promise<'fail' | void> };

/** Labels the instance (the test's hook sees each run). */
export const label = defineAction({
  name: 'label-instance',
  describe: 'label the instance',
  params: z.object({ label: z.string().min(1) }),
  async run(ctx) {
    if ((await hooks.reflexTestHook?.(ctx)) === 'fail') throw new ReflexError('API_BUSY', 'the labeller is busy');
    return { result: 'done', summary: \`labelled \${ctx.instance} \${ctx.params.label}\` };
  },
});

export default [
  label,
  defineRule({
    name: 'label-on-stop',
    on: { kind: 'instance.status', to: [102] },
    actions: [{ action: 'label-instance', params: { label: 'stopped' } }],
  }),
];
`;

describe('user-defined actions', () => {
  let dir: string;
  let loaded: RulesFolder;
  let bed: ActionBed;
  beforeAll(async () => {
    dir = rulesFolder({ 'label.ts': actionFile });
    loaded = await loadRulesFolder(dir);
    bed = await startActionBed({ rules: loaded.rules, actions: loaded.actions, instances: ['web-1'] });
  });
  afterAll(async () => {
    delete hooks.reflexTestHook;
    await bed.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('load from the rules folder into the registry of that load, beside the built-ins', () => {
    expect(loaded.errors).toEqual([]);
    expect(loaded.rules.map((r) => r.name)).toEqual(['label-on-stop']);
    expect(loaded.actions.names()).toEqual(expect.arrayContaining(['label-instance', 'start', 'http']));
    expect(loaded.actions.userDefined().map((a) => a.name)).toEqual(['label-instance']);
  });

  it('are listed by reflex rules list', async () => {
    const { reflexInProcess } = await import('../cli/in-process.js');
    const json = await reflexInProcess(['rules', 'list', '--json', dir]);
    expect(JSON.parse(json.stdout).actions).toEqual([
      { name: 'label-instance', describe: 'label the instance', touchesInstance: true, restarts: false },
    ]);
    expect((await reflexInProcess(['rules', 'list', dir])).stdout).toContain('action label-instance: label the instance\n');
  });

  it('run under the instance lock with their params parsed, and are audited', async () => {
    const seen: { params: unknown; locked: number }[] = [];
    hooks.reflexTestHook = async (ctx) => {
      seen.push({
        params: ctx.params,
        locked: await bed.redis.exists(bed.keys.instanceLock({ target: 't', project: 'default', instance: ctx.instance })),
      });
    };
    const id = await bed.queue({ rule: 'label-on-stop', action: 'label-instance', params: { label: 'stopped' }, instance: 'web-1', origin: 'rule' });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));
    expect(seen).toEqual([{ params: { label: 'stopped' }, locked: 1 }]);
    expect(records.filter((r) => r.type === 'outcome')).toMatchObject([
      { result: 'done', summary: 'label-instance: labelled web-1 stopped', rule: 'label-on-stop', instance: 'web-1' },
    ]);
  });

  it('are not run in dry-run: the audit says what would have run', async () => {
    let ran = 0;
    hooks.reflexTestHook = async () => void ran++;
    const id = await bed.queue({
      rule: 'label-on-stop',
      action: 'label-instance',
      params: { label: 'stopped' },
      instance: 'web-1',
      origin: 'rule',
      dryRun: true,
    });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));
    expect(ran).toBe(0);
    expect(records.filter((r) => r.type === 'outcome')).toMatchObject([
      { result: 'dry-run', summary: 'label-instance: would run label-instance with params {"label":"stopped"}' },
    ]);
  });

  it('in dry-run, say what would run without a param named like a secret', async () => {
    const secretive = { ...loaded.actions.get('label-instance'), params: z.strictObject({ label: z.string(), apiToken: z.string() }) };
    const outcome = await runAction(secretive, { params: { label: 'x', apiToken: 's3cr3t-value' }, dryRun: true } as ActionContext<unknown>);
    expect(outcome).toEqual({ result: 'dry-run', summary: 'would run label-instance with params {"label":"x","apiToken":"[redacted]"}' });
  });

  it('are retried by the retry policy when they throw a retryable ReflexError', async () => {
    let calls = 0;
    hooks.reflexTestHook = async () => (++calls === 1 ? 'fail' : undefined);
    const id = await bed.queue({ rule: 'label-on-stop', action: 'label-instance', params: { label: 'again' }, instance: 'web-1', origin: 'rule' });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome' && r.result === 'done'));
    expect(calls).toBe(2);
    expect(records.filter((r) => r.type === 'outcome').map((r) => [r.result, r.code])).toEqual([
      ['retrying', 'API_BUSY'],
      ['done', undefined],
    ]);
  });

  it('give up at once when they throw any other error (ACTION_FAILED, not retried)', async () => {
    let calls = 0;
    hooks.reflexTestHook = async () => {
      calls++;
      throw new TypeError('cannot read properties of undefined');
    };
    const id = await bed.queue({ rule: 'label-on-stop', action: 'label-instance', params: { label: 'x' }, instance: 'web-1', origin: 'rule' });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'give-up'));
    expect(calls).toBe(1);
    expect(records.filter((r) => r.type === 'outcome')).toMatchObject([
      { result: 'failed', code: 'ACTION_FAILED', summary: expect.stringContaining('cannot read properties of undefined') },
    ]);
  });

  it('refuse params a job carries that the schema refuses (a job queued before the rules changed), without running', async () => {
    let ran = 0;
    hooks.reflexTestHook = async () => void ran++;
    const id = await bed.queue({ rule: 'label-on-stop', action: 'label-instance', params: { lable: 'typo' }, instance: 'web-1', origin: 'rule' });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'give-up'));
    expect(ran).toBe(0);
    expect(records.filter((r) => r.type === 'outcome')).toMatchObject([
      { result: 'failed', code: 'CONFIG_INVALID', summary: expect.stringContaining('Unrecognized key: "lable"') },
    ]);
  });
});

describe('action params checked when the rules load', () => {
  const bad = `import { defineAction, defineRule, z } from 'reflex-lxd';

export const page = defineAction({
  name: 'page-owner',
  params: z.object({ name: z.string(), urgent: z.boolean().optional() }),
  run: async (ctx) => ({ result: 'done', summary: ctx.params.name }),
});

export default [
  defineRule({
    name: 'page-on-crash',
    on: { kind: 'instance.status', to: [102] },
    actions: [
      { action: 'start' },
      {
        action: 'page-owner',
        params: {
          nam: 'ops',
        },
      },
    ],
  }),
  defineRule({
    // name after actions: still found
    actions: [{ action: 'restart', params: { force: 'yes' } }],
    name: 'restart-on-crash',
    on: { kind: 'instance.status', to: [102] },
  }),
  defineRule({
    name: 'fine',
    on: { kind: 'instance.status', to: [102] },
    actions: [{ action: 'restart', params: { force: true } }, { action: 'page-owner', params: { name: 'ops' } }],
  }),
];
`;

  it('refuse bad params of a user action and of a built-in, with file:line of the offending param; the good rule loads', async () => {
    const dir = rulesFolder({ 'bad.ts': bad });
    try {
      const { rules, errors } = await loadRulesFolder(dir);
      expect(rules.map((r) => r.name)).toEqual(['fine']);
      const file = join(dir, 'bad.ts');
      expect(errors).toEqual([
        {
          file,
          line: lineOf(bad, "nam: 'ops'"),
          column: 11,
          message: expect.stringMatching(/^rule "page-on-crash": page-owner params: .*Unrecognized key: "nam"/),
        },
        {
          file,
          line: lineOf(bad, "force: 'yes'"),
          column: expect.any(Number),
          message: 'rule "restart-on-crash": restart params: force: Invalid input: expected boolean, received string',
        },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are reported by reflex rules check, each with its file:line (two in one file too)', async () => {
    const dir = rulesFolder({ 'bad.ts': bad });
    try {
      const { checkRules, formatProblem } = await import('../../src/rules/rule-checker.js');
      const { rules, problems } = await checkRules(dir);
      expect(rules).toEqual(['fine']);
      const file = join(dir, 'bad.ts');
      expect(problems.map(formatProblem)).toEqual([
        expect.stringMatching(new RegExp(`bad\\.ts:${lineOf(bad, "nam: 'ops'")}:11: rule "page-on-crash": page-owner params: `)),
        expect.stringMatching(new RegExp(`bad\\.ts:${lineOf(bad, "force: 'yes'")}:\\d+: rule "restart-on-crash": restart params: force: `)),
      ]);
      expect(problems.every((p) => p.file === file)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000); // From the sources the check type-checks against src/ (about 8 s of CPU on a quiet machine): the niced in-process run of a loaded CI took 60–84 s twice.

  it('refuse an unknown action with the line of its entry', async () => {
    const text = `import { defineRule } from 'reflex-lxd';\nexport default defineRule({\n  name: 'r',\n  on: { kind: 'lifecycle' },\n  actions: [\n    { action: 'restrat' },\n  ],\n});\n`;
    const dir = rulesFolder({ 'typo.ts': text });
    try {
      const { errors } = await loadRulesFolder(dir);
      expect(errors).toMatchObject([
        { file: join(dir, 'typo.ts'), line: 6, message: expect.stringContaining('unknown action "restrat"; known: start, restart') },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('user-defined action names', () => {
  const define = (name: string) =>
    `import { defineAction, z } from 'reflex-lxd';\nexport const a = defineAction({\n  name: '${name}',\n  params: z.strictObject({}),\n  run: async () => ({ result: 'done', summary: 'ok' }),\n});\n`;

  it('may not clash with a built-in or with each other (load error with file and line); an action imported by another file is no clash', async () => {
    const user = `import { defineRule } from 'reflex-lxd';\nimport { a } from './a-drain.js';\nexport default [a, defineRule({ name: 'r', on: { kind: 'lifecycle' }, actions: [{ action: 'drain' }] })];\n`;
    const dir = rulesFolder({
      'a-drain.ts': define('drain'),
      'b-user.ts': user,
      'c-drain-again.ts': define('drain'),
      'd-restart.ts': define('restart'),
    });
    try {
      const { rules, errors, actions } = await loadRulesFolder(dir);
      expect(rules.map((r) => r.name)).toEqual(['r']);
      expect(actions.userDefined().map((a) => a.name)).toEqual(['drain']);
      expect(errors).toEqual([
        {
          file: join(dir, 'c-drain-again.ts'),
          line: 2,
          message: `action name "drain" is already used by the action defined at ${join(dir, 'a-drain.ts')}:2`,
        },
        { file: join(dir, 'd-restart.ts'), line: 2, message: 'action name "restart" is a built-in action\'s; choose another' },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('live in the registry of their load only: another load, or the built-ins, do not see them', async () => {
    const dir = rulesFolder({ 'a.ts': define('only-here') });
    try {
      const first = await loadRulesFolder(dir);
      expect(first.actions.has('only-here')).toBe(true);
      const other = rulesFolder({ 'b.ts': define('elsewhere') });
      const second = await loadRulesFolder(other);
      rmSync(other, { recursive: true, force: true });
      expect(second.actions.has('only-here')).toBe(false);
      const { builtinActions } = await import('../../src/actions/registry.js');
      expect(builtinActions.has('only-here')).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('user-defined actions and a rules reload', () => {
  const version = (v: string, param = "{ label: 'x' }") => `import { defineAction, defineRule, z } from 'reflex-lxd';
export default [
  defineAction({ name: 'versioned', params: z.object({ label: z.string() }), run: async () => ({ result: 'done', summary: '${v}' }) }),
  defineRule({ name: 'uses-versioned', on: { kind: 'lifecycle' }, actions: [{ action: 'versioned', params: ${param} }] }),
];
`;

  it('swap with the rules: a job after the reload runs the new definition; a reload with bad params is refused and the old one keeps running', async () => {
    const dir = rulesFolder({ 'versioned.ts': version('v1') });
    const redis = redisClient();
    const audit = new AuditLog(redis, keySpace(uniquePrefix('ua-reload')).audit);
    const ruleSet = new RuleSet(await loadRuleSet({ dir }), { dir, audit, logger: pino({ level: 'silent' }), replica: 'test' });
    const bed = await startActionBed({ rules: () => ruleSet.current.engine, actions: () => ruleSet.current.loaded.actions, instances: ['web-1'] });
    const run = async () => {
      const id = await bed.queue({ rule: 'uses-versioned', action: 'versioned', params: { label: 'x' }, instance: 'web-1', origin: 'rule' });
      return (await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'))).find((r) => r.type === 'outcome')!.summary;
    };
    try {
      expect(await run()).toBe('versioned: v1');
      writeFileSync(join(dir, 'versioned.ts'), version('v2'));
      expect(await ruleSet.reload({ by: 'cli' })).toMatchObject({ result: 'reloaded' });
      expect(await run()).toBe('versioned: v2');
      writeFileSync(join(dir, 'versioned.ts'), version('v3', "{ lable: 'x' }"));
      const refused = await ruleSet.reload({ by: 'cli' });
      expect(refused).toMatchObject({ result: 'refused', summary: expect.stringContaining(`versioned.ts:4:`) });
      expect(await run()).toBe('versioned: v2');
    } finally {
      await bed.stop();
      redis.disconnect();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /**
   * Replaces versioned.ts (rule uses-versioned and its action versioned) by `file` and reloads;
   * then runs a job of the old rule with the removed action, queued before the reload: its trail.
   */
  async function jobOfRemovedAction(file: { name: string; rule: string }): Promise<StoredAuditRecord[]> {
    const dir = rulesFolder({ 'versioned.ts': version('v1') });
    const redis = redisClient();
    const audit = new AuditLog(redis, keySpace(uniquePrefix('ua-remove')).audit);
    const ruleSet = new RuleSet(await loadRuleSet({ dir }), { dir, audit, logger: pino({ level: 'silent' }), replica: 'test' });
    const bed = await startActionBed({ rules: () => ruleSet.current.engine, actions: () => ruleSet.current.loaded.actions, instances: ['web-1'] });
    try {
      rmSync(join(dir, 'versioned.ts'));
      writeFileSync(
        join(dir, file.name),
        `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: '${file.rule}', on: { kind: 'lifecycle' }, actions: [{ action: 'snapshot' }] });\n`,
      );
      expect(await ruleSet.reload({ by: 'cli' })).toMatchObject({ result: 'reloaded' });
      const id = await bed.queue({ rule: 'uses-versioned', action: 'versioned', params: { label: 'x' }, instance: 'web-1', origin: 'rule' });
      await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));
      await bed.idle(); // the job is over: a record after the outcome would be in the trail now
      return await bed.waitFor(id, () => true);
    } finally {
      await bed.stop();
      redis.disconnect();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it.each([
    {
      title: 'skip a job whose action a reload removed while its rule stays (now with other actions): no give-up, no alert',
      file: { name: 'uses.ts', rule: 'uses-versioned' },
      recheck: 'action-unloaded',
      says: 'action versioned is not defined any more (a reload removed it; rule uses-versioned stays)',
    },
    {
      title: "skip a job whose rule and action a reload removed together, as a removed rule's jobs are skipped: no give-up, no alert",
      file: { name: 'other.ts', rule: 'other' },
      recheck: 'rule-unloaded',
      says: 'rule uses-versioned is not loaded any more',
    },
  ])('$title', async ({ file, recheck, says }) => {
    const trail = await jobOfRemovedAction(file);
    expect(trail.find((r) => r.type === 'outcome')).toMatchObject({ result: 'skipped', recheck, summary: expect.stringContaining(says) });
    expect(trail.filter((r) => r.type === 'give-up' || r.type === 'alert')).toEqual([]);
  });
});
