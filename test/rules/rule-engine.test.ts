import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RuleEngine } from '../../src/rules/engine.js';
import { loadRulesFolder } from '../../src/rules/rules-folder.js';
import { defineRule } from '../../src/rules/rule.js';
import type { InstanceStatusEvent } from '../../src/events/canonical-event.js';
import type { Instance } from '../../src/client/instance.js';

const crash: InstanceStatusEvent = {
  kind: 'instance.status',
  id: 'e1',
  target: 't',
  location: 'none',
  project: 'default',
  timestamp: '2026-11-22T06:36:43.559Z',
  synthetic: false,
  instance: 'c1',
  from: 103,
  to: 102,
  intent: 'unrequested',
  action: 'instance-shutdown',
};
const optedIn: Instance = { name: 'c1', status: 'Stopped', status_code: 102, config: { 'user.reflex.autorestart': 'true' } };
const notOptedIn: Instance = { name: 'c1', status: 'Stopped', status_code: 102, config: {} };

describe('the bundled restart-on-crash rule', async () => {
  const { rules, errors } = await loadRulesFolder(resolve('rules'));
  const engine = new RuleEngine(rules);

  it('loads from rules/ without a build step', () => {
    expect(errors).toEqual([]);
    expect(rules.map((r) => r.name)).toContain('restart-on-crash');
  });

  it('starts an opted-in instance that stopped without being asked to', async () => {
    const [d] = await engine.decide(crash, optedIn);
    expect(d).toMatchObject({ rule: 'restart-on-crash', matched: true, actions: [{ action: 'start' }] });
  });

  it('starts an opted-in instance that reports Error (112), whatever the intent', async () => {
    const [d] = await engine.decide({ ...crash, to: 112, intent: 'unknown' }, optedIn);
    expect(d).toMatchObject({ matched: true });
  });

  it('leaves a stop requested through the API alone, and says why', async () => {
    const [d] = await engine.decide({ ...crash, intent: 'requested' }, optedIn);
    expect(d).toMatchObject({ matched: false, summary: expect.stringContaining('intent is requested') });
  });

  it('does not react to its own start', async () => {
    const [d] = await engine.decide({ ...crash, intent: 'self' }, optedIn);
    expect(d).toMatchObject({ matched: false, summary: expect.stringContaining('intent is self') });
  });

  it('leaves instances without the opt-in key alone, and says why', async () => {
    const [d] = await engine.decide(crash, notOptedIn);
    expect(d).toMatchObject({ matched: false, summary: expect.stringContaining('not opted in') });
  });

  it('says nothing about events it does not listen to', async () => {
    expect(await engine.decide({ ...crash, to: 103 }, optedIn)).toEqual([]);
  });
});

describe('loading rule files', () => {
  it('reports a broken rule file with its path and keeps the good ones', async () => {
    // Inside the package, where `import ... from 'reflex-lxd'` resolves (the package references itself).
    mkdirSync(resolve('.tmp'), { recursive: true });
    const dir = mkdtempSync(join(resolve('.tmp'), 'rules-'));
    writeFileSync(
      join(dir, 'good.ts'),
      `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'good', on: { kind: 'lifecycle' }, actions: [{ action: 'start' }] });\n`,
    );
    writeFileSync(join(dir, 'syntax.ts'), `export default {{{;\n`);
    writeFileSync(join(dir, 'throws.ts'), `throw new Error('boom at load');\n`);
    writeFileSync(
      join(dir, 'invalid.ts'),
      `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'Bad Name', on: { kind: 'nope' }, actions: [] } as never);\n`,
    );
    writeFileSync(join(dir, 'other.ts'), `export default 42;\n`);
    const { rules, errors } = await loadRulesFolder(dir);
    expect(rules.map((r) => r.name)).toEqual(['good']);
    const byFile = Object.fromEntries(errors.map((e) => [e.file.split('/').pop(), e.message]));
    expect(Object.keys(byFile).sort()).toEqual(['invalid.ts', 'other.ts', 'syntax.ts', 'throws.ts']);
    expect(byFile['syntax.ts']).toMatch(/syntax\.ts:1/);
    expect(byFile['throws.ts']).toContain('boom at load');
    expect(byFile['invalid.ts']).toMatch(/name: use lowercase/);
    expect(byFile['invalid.ts']).toMatch(/on/);
    expect(byFile['other.ts']).toContain('not a rule');
  });

  it('rejects a rule without actions at definition time', () => {
    expect(() => defineRule({ name: 'x', on: { kind: 'lifecycle' }, actions: [] })).toThrow(/actions/);
  });
});
