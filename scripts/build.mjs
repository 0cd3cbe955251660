#!/usr/bin/env node
// @ts-check
// `npm run build [-- --force]`: compiles src/ into dist/ (tsc -p tsconfig.build.json), unless
// dist/ is already what the current sources compile to. `npm ci` (prepare), `npm pack`
// (prepack and prepare), `npm run demo`, `bench`, `chaos` and `soak` all build: with dist/
// current each of these is a hash of the sources (tens of ms) instead of a compiler run (tsc's own
// incremental check still parses every file: 7–30 s here).
//
// dist/ is current when dist/.build-stamp.json holds the hash of everything the compiler's output
// depends on (each file under src/, both tsconfig files, package-lock.json: the compiler's and
// the libraries' versions) and every file the build wrote is still there, as it was written (size
// and mtime). A build that fails writes no stamp, so the next one runs the compiler again.
// Plain JavaScript, like the compiler it runs: it must work where only the dependencies are
// installed.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const root = process.cwd();
const outDir = join(root, 'dist');
const stampFile = join(outDir, '.build-stamp.json');
const inputs = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** Written in dist/ but not by the compiler's emit (or by it, but never shipped or checked). */
const notOutputs = new Set([stampFile, join(outDir, '.tsbuildinfo')]);

/**
 * Every file under a folder, sorted, as absolute paths.
 * @param {string} dir
 * @returns {string[]}
 */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .sort();
}

/** The hash of the sources and settings the compiler's output depends on. */
function sourceKey() {
  const hash = createHash('sha256');
  for (const file of [...inputs.map((f) => join(root, f)), ...filesUnder(join(root, 'src'))]) {
    hash.update(relative(root, file)).update('\0');
    hash.update(existsSync(file) ? readFileSync(file) : '(none)').update('\0');
  }
  return hash.digest('hex');
}

/** @typedef {{ key: string, outputs: [path: string, size: number, mtimeMs: number][] }} Stamp */

/** @returns {Stamp | undefined} */
function readStamp() {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Whether every file the last build wrote is there as it wrote it, and no other.
 * @param {Stamp} stamp
 */
function outputsIntact(stamp) {
  if (!Array.isArray(stamp.outputs) || stamp.outputs.length === 0) return false;
  const outputs = filesUnder(outDir).filter((f) => !notOutputs.has(f));
  if (outputs.length !== stamp.outputs.length) return false;
  return stamp.outputs.every(([path, size, mtimeMs], i) => {
    const s = statSync(join(root, path), { throwIfNoEntry: false });
    return outputs[i] === join(root, path) && s !== undefined && s.size === size && s.mtimeMs === mtimeMs;
  });
}

const force = process.argv.includes('--force');
const key = sourceKey();
const stamp = readStamp();
const intact = stamp !== undefined && outputsIntact(stamp);
if (!force && intact && stamp.key === key) {
  process.stdout.write('dist/ is current (sources unchanged since the last build); npm run build -- --force rebuilds\n');
  process.exit(0);
}
// tsc's incremental build re-emits only what changed in the sources: an output deleted or edited
// since the last build (or --force) needs the whole build.
if (force || (stamp !== undefined && !intact)) rmSync(join(outDir, '.tsbuildinfo'), { force: true });
rmSync(stampFile, { force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit', cwd: root });
if (run.status !== 0) process.exit(run.status ?? 1);
/** @type {Stamp} */
const written = {
  key,
  outputs: filesUnder(outDir)
    .filter((f) => !notOutputs.has(f))
    .map((f) => {
      const s = statSync(f);
      return [relative(root, f), s.size, s.mtimeMs];
    }),
};
// A source changed while the compiler ran: no stamp, the next build compiles again.
if (sourceKey() === key) {
  writeFileSync(`${stampFile}.${process.pid}.tmp`, JSON.stringify(written));
  renameSync(`${stampFile}.${process.pid}.tmp`, stampFile);
}
