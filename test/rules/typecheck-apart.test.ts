import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { typeCheckRulesApart } from '../../src/rules/rule-checker.js';

// `reflex run` type-checks its rules at start and at each reload in a child process: the compiler
// and what it parsed (about 40 MB that stayed resident for good) never enter the worker.
const root = mkdtempSync(join(tmpdir(), 'reflex-typecheck-apart-'));
const savedCacheDir = process.env.REFLEX_CACHE_DIR;
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  if (savedCacheDir === undefined) delete process.env.REFLEX_CACHE_DIR;
  else process.env.REFLEX_CACHE_DIR = savedCacheDir;
});
const loadedModules = () => Object.keys(createRequire(import.meta.url).cache);

it('reports a type error with file:line:column from a child process, and the compiler never loads into the caller', async () => {
  const dir = mkdtempSync(join(root, 'rules-'));
  writeFileSync(
    join(dir, 'typo.ts'),
    `import { defineRule } from 'reflex-lxd';\nconst retries: number = 'three';\nexport default defineRule({ name: 'typo', on: [{ kind: 'instance.status' }], actions: [{ action: 'start' }] });\n`,
  );
  process.env.REFLEX_CACHE_DIR = join(root, 'cache');
  const problems = await typeCheckRulesApart(dir);
  expect(problems).toEqual([
    expect.objectContaining({ file: join(dir, 'typo.ts'), line: 2, message: "Type 'string' is not assignable to type 'number'." }),
  ]);
  // Its package.json is read, for the version that keys the remembered checks; its code is not.
  expect(loadedModules().filter((m) => m.includes('/node_modules/typescript/') && !m.endsWith('/package.json'))).toEqual([]);
});

it('a folder that does not exist is RULES_MISSING, as in the process', async () => {
  await expect(typeCheckRulesApart(join(root, 'nowhere'))).rejects.toMatchObject({ name: 'ReflexError', code: 'RULES_MISSING' });
});

it('a check remembered clean answers without starting a child: the rule files are hashed in the caller', async () => {
  const dir = mkdtempSync(join(root, 'rules-'));
  writeFileSync(
    join(dir, 'fine.ts'),
    `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'fine', on: [{ kind: 'instance.status' }], actions: [{ action: 'start' }] });\n`,
  );
  process.env.REFLEX_CACHE_DIR = join(root, 'cache');
  expect(await typeCheckRulesApart(dir)).toEqual([]);
  // A child started now could not run: Node refuses to start with a preload that does not exist.
  const options = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${options ?? ''} --require=${join(root, 'no-such-preload.cjs')}`;
  try {
    expect(await typeCheckRulesApart(dir)).toEqual([]);
    writeFileSync(
      join(dir, 'fine.ts'),
      `${'// edited\n'}import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'fine', on: [{ kind: 'instance.status' }], actions: [{ action: 'start' }] });\n`,
    );
    await expect(typeCheckRulesApart(dir), 'an edited file is checked again, in a child').rejects.toThrow(/exited/);
  } finally {
    if (options === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = options;
  }
});
