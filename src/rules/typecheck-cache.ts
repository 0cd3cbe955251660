import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * A clean type-check remembered across processes, as `tsc --incremental` remembers its build:
 * keyed by the compiler's version and options and the rule files' contents, and valid while every
 * file the check read (the standard library, @types/node, Reflex's declarations, helpers the rules
 * import) has the size and mtime it had. A worker restarted on unchanged rules, a replica started
 * beside another, and `reflex rules check` run twice skip the 2–6 s of a check. Only clean verdicts
 * are kept: a folder with problems is checked again each time, so what is reported is always fresh.
 *
 * Where: `$REFLEX_CACHE_DIR`, else `$XDG_CACHE_HOME/reflex`, else `~/.cache/reflex`. A cache that
 * cannot be read or written is a cache miss, never an error.
 */
export interface TypecheckCache {
  /** Whether a clean check of exactly these rule files, with every file it read unchanged, is remembered. */
  isClean(): boolean;
  /** Remembers a clean check and the files it read. */
  rememberClean(read: readonly string[]): void;
}

interface Entry {
  key: string;
  files: [path: string, size: number, mtimeMs: number][];
}

export function typecheckCache(dir: string, ruleFiles: readonly string[], options: Record<string, unknown>): TypecheckCache {
  const key = createHash('sha256').update(compilerVersion()).update('\0').update(JSON.stringify(options)).update('\0');
  for (const f of ruleFiles) key.update(f).update('\0').update(readFileSync(f)).update('\0');
  const digest = key.digest('hex');
  const file = join(cacheDir(), 'rules-typecheck', `${createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 32)}.json`);
  return {
    isClean() {
      let entry: Entry;
      try {
        entry = JSON.parse(readFileSync(file, 'utf8')) as Entry;
      } catch {
        return false;
      }
      if (entry.key !== digest || !Array.isArray(entry.files)) return false;
      return entry.files.every(([path, size, mtimeMs]) => {
        const s = statSync(path, { throwIfNoEntry: false });
        return s !== undefined && s.size === size && s.mtimeMs === mtimeMs;
      });
    },
    rememberClean(read) {
      const files: Entry['files'] = [];
      for (const path of read) {
        const s = statSync(path, { throwIfNoEntry: false });
        if (!s) return; // a file the compiler read is gone already: nothing sound to remember
        files.push([path, s.size, s.mtimeMs]);
      }
      try {
        mkdirSync(join(file, '..'), { recursive: true });
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify({ key: digest, files } satisfies Entry));
        renameSync(tmp, file);
      } catch {
        // read-only home, full disk: the next start checks again
      }
    },
  };
}

/** Where Reflex keeps what it remembers across processes: `$REFLEX_CACHE_DIR`, else `$XDG_CACHE_HOME/reflex`, else `~/.cache/reflex`. */
export function cacheDir(): string {
  if (process.env.REFLEX_CACHE_DIR) return process.env.REFLEX_CACHE_DIR;
  if (process.env.XDG_CACHE_HOME) return join(process.env.XDG_CACHE_HOME, 'reflex');
  return join(homedir(), '.cache', 'reflex');
}

/** The installed compiler's version, read without loading the compiler. */
function compilerVersion(): string {
  try {
    return (createRequire(import.meta.url)('typescript/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
