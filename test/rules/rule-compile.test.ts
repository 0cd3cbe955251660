import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRulesFolder } from '../../src/rules/rules-folder.js';

/** Rules folders outside the checkout, as an operator keeps them (e.g. /etc/reflex/rules). */
const root = mkdtempSync(join(tmpdir(), 'reflex-rule-compile-'));
const cacheDir = join(root, 'cache');
let savedCacheDir: string | undefined;
beforeAll(() => {
  savedCacheDir = process.env.REFLEX_CACHE_DIR;
  process.env.REFLEX_CACHE_DIR = cacheDir;
});
afterAll(() => {
  if (savedCacheDir === undefined) delete process.env.REFLEX_CACHE_DIR;
  else process.env.REFLEX_CACHE_DIR = savedCacheDir;
  rmSync(root, { recursive: true, force: true });
});

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, 'rules-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const rule = (name: string) => `import { defineRule, StatusCode } from 'reflex-lxd';
export default defineRule({ name: '${name}', on: { kind: 'instance.status', to: [StatusCode.Error] }, actions: [{ action: 'start' }] });
`;

describe('rule files compiled at load time', () => {
  it('load from a folder outside the checkout, with reflex-lxd resolved to the running code', async () => {
    const { rules, errors } = await loadRulesFolder(folder({ 'a.ts': rule('a') }));
    expect(errors).toEqual([]);
    expect(rules.map((r) => r.name)).toEqual(['a']);
  });

  it('bundle their relative imports and the libraries they import', async () => {
    const dir = folder({
      'lib/opt-in.ts': `export const optedIn = (c: Record<string, string> | undefined): boolean => c?.['user.team'] === 'web';\n`,
      'uses-lib.ts': `import { defineRule } from 'reflex-lxd';
import { z } from 'zod';
import { optedIn } from './lib/opt-in.js';
const team = z.literal('web');
export default defineRule({ name: 'uses-lib', on: { kind: 'instance.status' }, when: ({ instance }) => optedIn(instance?.config) && team.safeParse('web').success, actions: [{ action: 'start' }] });
`,
    });
    const { rules, errors } = await loadRulesFolder(dir);
    expect(errors).toEqual([]);
    expect(await rules[0]!.when!({ instance: { config: { 'user.team': 'web' } } } as never)).toBe(true);
  });

  it('report a syntax error with file:line:column and load the other files', async () => {
    const dir = folder({
      'good.ts': rule('good'),
      'syntax.ts': `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'x' ;\n`,
    });
    const { rules, errors } = await loadRulesFolder(dir);
    expect(rules.map((r) => r.name)).toEqual(['good']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: join(dir, 'syntax.ts'), line: 2 });
    expect(errors[0]!.message).toMatch(new RegExp(`^${join(dir, 'syntax.ts')}:2:\\d+: Expected`));
  });

  it('load side by side: several loads at once in one process each get every rule', async () => {
    const dirs = [folder({ 'a.ts': rule('a') }), folder({ 'b.ts': rule('b'), 'c.ts': rule('c') }), folder({ 'd.ts': rule('d') })];
    const loads = await Promise.all([...dirs, ...dirs].map((d) => loadRulesFolder(d)));
    expect(loads.map((l) => l.errors)).toEqual(loads.map(() => []));
    expect(loads.map((l) => l.rules.map((r) => r.name).join(','))).toEqual(['a', 'b,c', 'd', 'a', 'b,c', 'd']);
  });

  it('import fresh modules on every load, so a changed file is seen by the next load', async () => {
    const dir = folder({ 'r.ts': rule('first') });
    expect((await loadRulesFolder(dir)).rules.map((r) => r.name)).toEqual(['first']);
    writeFileSync(join(dir, 'r.ts'), rule('second'));
    expect((await loadRulesFolder(dir)).rules.map((r) => r.name)).toEqual(['second']);
  });

  it('are compiled once: an unchanged file is imported as compiled last time, an edited file or helper compiled again', async () => {
    const dir = folder({
      'lib/name.ts': `export const name = 'one';\n`,
      'named.ts': `import { defineRule } from 'reflex-lxd';\nimport { name } from './lib/name.js';\nexport default defineRule({ name, on: { kind: 'instance.status' }, actions: [{ action: 'start' }] });\n`,
    });
    const names = async () => (await loadRulesFolder(dir)).rules.map((r) => r.name);
    expect(await names()).toEqual(['one']);
    // The remembered module is what the next load imports: marked here, the mark is what loads.
    // Found by what it was compiled from (its last line), not by its text: another test's module
    // bundles zod, whose locales hold the string "one" too.
    const remembered = readdirSync(join(cacheDir, 'rules-compiled'))
      .map((f) => join(cacheDir, 'rules-compiled', f))
      .find((f) =>
        readFileSync(f, 'utf8')
          .trimEnd()
          .split('\n')
          .at(-1)!
          .includes(JSON.stringify(join(dir, 'named.ts'))),
      )!;
    writeFileSync(remembered, readFileSync(remembered, 'utf8').replace('"one"', '"remembered"'));
    expect(await names()).toEqual(['remembered']);
    writeFileSync(join(dir, 'lib/name.ts'), `export const name = 'two';\n`);
    expect(await names()).toEqual(['two']);
    writeFileSync(join(dir, 'named.ts'), rule('three'));
    expect(await names()).toEqual(['three']);
  });

  it('a remembered module still locates a failure at the line of the rule file', async () => {
    const dir = folder({
      'throws.ts': `import { defineRule } from 'reflex-lxd';\n\nconst x: number = 1;\nif (x) throw new Error('boom');\nexport default defineRule({ name: 'n' });\n`,
    });
    for (const load of ['compiled', 'remembered']) {
      const { errors } = await loadRulesFolder(dir);
      expect(errors, load).toHaveLength(1);
      expect(errors[0], load).toMatchObject({ file: join(dir, 'throws.ts'), line: 4, message: 'boom' });
    }
  });
});
