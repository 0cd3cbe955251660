import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typeCheckRules } from '../../src/rules/rule-checker.js';

// Each check of a miss loads the compiler and checks against Reflex's declarations: seconds each.
const root = mkdtempSync(join(tmpdir(), 'reflex-typecheck-cache-'));
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

const rule = (extra = '') => `import { defineRule } from 'reflex-lxd';
import { label } from './helper.js';
${extra}
export default defineRule({ name: label, on: [{ kind: 'instance.status' }], actions: [{ action: 'start' }] });
`;

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, 'rules-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function remembered(): number {
  try {
    return readdirSync(join(cacheDir, 'rules-typecheck')).filter((f) => f.endsWith('.json')).length;
  } catch {
    return 0;
  }
}

describe('a clean type-check is remembered across processes, and never hides a problem', () => {
  it('checks a rule file changed after a clean check again and reports its error', { timeout: 120_000 }, async () => {
    const dir = folder({ 'r.ts': rule(), 'helper.ts': `export const label: string = 'cached';\n` });
    expect(await typeCheckRules(dir)).toEqual([]);
    expect(remembered()).toBe(1);
    expect(await typeCheckRules(dir)).toEqual([]);

    writeFileSync(join(dir, 'r.ts'), rule(`const n: number = 'x';`));
    const problems = await typeCheckRules(dir);
    expect(problems.map((p) => [p.file.endsWith('r.ts'), p.line, p.message])).toEqual([
      [true, 3, "Type 'string' is not assignable to type 'number'."],
    ]);
    // A folder with problems is checked afresh every time: the same error again.
    expect((await typeCheckRules(dir)).length).toBe(1);
  });

  it('checks again when a module a rule imports changed, though the rule files did not', { timeout: 120_000 }, async () => {
    const dir = folder({ 'r.ts': rule().replace("'./helper.js'", "'./lib/helper.js'") });
    mkdirSync(join(dir, 'lib'));
    writeFileSync(join(dir, 'lib', 'helper.ts'), `export const label: string = 'cached';\n`);
    expect(await typeCheckRules(dir)).toEqual([]);
    writeFileSync(join(dir, 'lib', 'helper.ts'), `export const label: number = 42;\n`);
    const problems = await typeCheckRules(dir);
    expect(problems.length).toBe(1);
    expect(problems[0]!.message).toMatch(/number/);
  });

  it('checks as usual when the cache folder cannot be written', { timeout: 120_000 }, async () => {
    const file = join(root, 'not-a-folder');
    writeFileSync(file, '');
    process.env.REFLEX_CACHE_DIR = file;
    try {
      const dir = folder({ 'r.ts': rule(`const n: number = 'x';`), 'helper.ts': `export const label: string = 'x';\n` });
      expect((await typeCheckRules(dir)).length).toBe(1);
      writeFileSync(join(dir, 'r.ts'), rule());
      expect(await typeCheckRules(dir)).toEqual([]);
    } finally {
      process.env.REFLEX_CACHE_DIR = cacheDir;
    }
  });
});
