import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The modules that hold a real daemon for a suite: whoever imports one (directly or not) takes the daemon lock. */
const BEDS = ['test/support/daemon-bed.ts', 'test/support/lxd-bed.ts', 'test/support/lxd-cluster-bed.ts'];

/**
 * The test files that run on a real daemon (LXD, Incus, the LXD cluster): those importing a daemon
 * bed, directly or through another test module. They hold one cross-process lock while they run
 * (test/support/lxd-bed.ts), so vitest runs them one at a time in a project of their own, beside
 * the rest rather than in a worker slot that would wait on the lock.
 */
export function daemonTestFiles(root = 'test'): string[] {
  const files = walk(root).filter((f) => f.endsWith('.ts'));
  const imports = new Map(files.map((f) => [f, importsOf(f)]));
  const holding = new Set(BEDS);
  for (let grew = true; grew;) {
    grew = false;
    for (const [f, deps] of imports) {
      if (!holding.has(f) && deps.some((d) => holding.has(d))) {
        holding.add(f);
        grew = true;
      }
    }
  }
  return files.filter((f) => f.endsWith('.test.ts') && holding.has(f)).sort();
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? walk(p) : [p];
  });
}

function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/from\s+['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => relative('.', resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts'))));
}
