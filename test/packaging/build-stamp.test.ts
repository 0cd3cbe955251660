import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** A project of two source files laid out as Reflex's (src/ → dist/ by tsconfig.build.json), built by its scripts/build.mjs. */
function project(): string {
  mkdirSync(resolve('.tmp'), { recursive: true });
  const dir = mkdtempSync(join(resolve('.tmp'), 'build-stamp-'));
  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'src'));
  copyFileSync('scripts/build.mjs', join(dir, 'scripts/build.mjs'));
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package-lock.json'), '{}\n');
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, types: [] } }));
  writeFileSync(
    join(dir, 'tsconfig.build.json'),
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: { rootDir: 'src', outDir: 'dist', incremental: true, tsBuildInfoFile: 'dist/.tsbuildinfo' },
      include: ['src'],
    }),
  );
  writeFileSync(join(dir, 'src/a.ts'), 'export const a: number = 1;\n');
  writeFileSync(join(dir, 'src/b.ts'), "export const b: string = 'b';\n");
  return dir;
}

async function build(dir: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['scripts/build.mjs'], { cwd: dir });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('npm run build (scripts/build.mjs)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('compiles once, then leaves a current dist/ alone; compiles again when a source, a setting or an output changed', async () => {
    const dir = project();
    dirs.push(dir);
    const a = join(dir, 'dist/a.js');

    expect((await build(dir)).code).toBe(0);
    expect(readFileSync(a, 'utf8')).toContain('a = 1');
    const built = statSync(a).mtimeMs;

    const again = await build(dir);
    expect(again.out).toContain('dist/ is current');
    expect(statSync(a).mtimeMs).toBe(built);

    // Touched without a change: still current (content, not mtime, says what changed).
    writeFileSync(join(dir, 'src/b.ts'), "export const b: string = 'b';\n");
    expect((await build(dir)).out).toContain('dist/ is current');

    writeFileSync(join(dir, 'src/a.ts'), 'export const a: number = 2;\n');
    const changed = await build(dir);
    expect(changed.out).not.toContain('dist/ is current');
    expect(readFileSync(a, 'utf8')).toContain('a = 2');
    expect((await build(dir)).out).toContain('dist/ is current');

    writeFileSync(join(dir, 'src/c.ts'), 'export const c = 3;\n');
    expect((await build(dir)).out).not.toContain('dist/ is current');
    expect(readFileSync(join(dir, 'dist/c.js'), 'utf8')).toContain('c = 3');

    rmSync(a);
    expect((await build(dir)).out).not.toContain('dist/ is current');
    expect(readFileSync(a, 'utf8')).toContain('a = 2');

    writeFileSync(join(dir, 'dist/b.js'), 'edited by hand\n');
    expect((await build(dir)).out).not.toContain('dist/ is current');

    writeFileSync(join(dir, 'package-lock.json'), '{ "lockfileVersion": 3 }\n');
    expect((await build(dir)).out).not.toContain('dist/ is current');
  }, 180_000);

  it('a build that fails leaves no stamp: the next run compiles (and fails) again', async () => {
    const dir = project();
    dirs.push(dir);
    writeFileSync(join(dir, 'src/a.ts'), "export const a: number = 'not a number';\n");
    const first = await build(dir);
    expect(first.code).not.toBe(0);
    expect(first.out).toContain('TS2322');
    const second = await build(dir);
    expect(second.code).not.toBe(0);
    expect(second.out).toContain('TS2322');
  }, 120_000);
});
