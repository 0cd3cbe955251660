import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { cacheDir } from './typecheck-cache.js';

/** The last line of a remembered module: what it was compiled from, each file with the SHA-256 of its content. */
const inputsLine = '\n// reflex-compiled-from: ';

/**
 * A rule file's compiled module, remembered across processes beside the type-check cache
 * (typecheck-cache.ts): a worker restarted on unchanged rules and `reflex housekeeping plan` import
 * the module compiled last time instead of loading and running the compiler (on Node 20 about a
 * tenth of a second of a command a person waits for). The module is one file,
 * `rules-compiled/<key>.mjs`, keyed by the compiler's version, this installation's entry (rules
 * import it by absolute path) and the rule file's path; it ends with the files the compiler read
 * (the rule file, the helpers and libraries it bundles), each with the hash of its content, and is
 * used only while every one of them still hashes the same. It is written whole, then renamed into
 * place, so a process never imports half of one. The compiler writes its source map for this path,
 * so a stack read through it names the rule file's own lines.
 *
 * A cache that cannot be written is no cache: {@link compiledModulePath} says so, and the file is
 * compiled to a temporary folder each time, as before.
 */
export interface CompiledModule {
  /** Where the module lives (and where the compiler is told it is written). */
  path: string;
  /** Whether the module at `path` was compiled from the files as they are now. */
  isFresh(): boolean;
  /** Writes a new compile: its code and the files the compiler read (absolute paths). */
  remember(code: string, inputs: readonly string[]): void;
}

/** The remembered module of one rule file, or undefined when the cache folder cannot be made. */
export function compiledModule(file: string, entry: string): CompiledModule | undefined {
  const folder = join(cacheDir(), 'rules-compiled');
  try {
    mkdirSync(folder, { recursive: true });
  } catch {
    return undefined;
  }
  const key = createHash('sha256')
    .update(`${compilerVersion()}\0node${process.versions.node.split('.')[0]}\0${entry}\0${resolve(file)}`)
    .digest('hex')
    .slice(0, 32);
  const path = join(folder, `${key}.mjs`);
  return {
    path,
    isFresh() {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        return false;
      }
      const at = text.lastIndexOf(inputsLine);
      if (at < 0) return false;
      try {
        const inputs = JSON.parse(text.slice(at + inputsLine.length)) as [string, string][];
        return inputs.length > 0 && inputs.every(([input, digest]) => contentHash(input) === digest);
      } catch {
        return false;
      }
    },
    remember(code, inputs) {
      const hashes: [string, string][] = [];
      for (const input of inputs) {
        const digest = contentHash(input);
        if (digest === undefined) return; // gone already: nothing sound to remember
        hashes.push([input, digest]);
      }
      const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      writeFileSync(tmp, `${code.endsWith('\n') ? code : `${code}\n`}${inputsLine.slice(1)}${JSON.stringify(hashes)}\n`);
      renameSync(tmp, path);
    },
  };
}

function contentHash(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

/** The installed compiler's version, read without loading the compiler. */
function compilerVersion(): string {
  try {
    return (createRequire(import.meta.url)('esbuild/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
