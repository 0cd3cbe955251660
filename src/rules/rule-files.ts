import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Esbuild from 'esbuild';
import type { Message } from 'esbuild';
import { ReflexError } from '../errors/reflex-error.js';
import { compiledModule, type CompiledModule } from './compile-cache.js';
import { stackPlaces } from '../errors/stack-place.js';
import { packageEntry, packageName } from './package-entry.js';
import { isRuleDefinitionError } from './rule.js';
import { placeOfRuleField } from './rule-location.js';

/** A rule file that could not be loaded: reported, skipped, never fatal. */
export interface RuleLoadError {
  file: string;
  /** Where in the file, when the compiler located it. */
  line?: number;
  column?: number;
  message: string;
}

/**
 * The `.ts` files directly in a rules folder (sub-folders such as examples/ are not loaded). A
 * folder that does not exist is an error (RULES_MISSING), never an empty rule set.
 */
export function ruleFiles(dir: string): string[] {
  const abs = resolve(dir);
  const stat = statSync(abs, { throwIfNoEntry: false });
  if (!stat)
    throw new ReflexError('RULES_MISSING', `rules folder ${abs} does not exist (give --rules DIR, REFLEX_RULES or rulesDir in the config file)`);
  if (!stat.isDirectory()) throw new ReflexError('RULES_MISSING', `rules folder ${abs} is not a folder`);
  return readdirSync(abs)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(abs, f))
    .filter((f) => statSync(f).isFile())
    .sort();
}

/** Where a file of a rules folder failed to compile, when the compiler knows. */
interface CompileFailure {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

function compileFailures(err: unknown, file: string): CompileFailure[] {
  const errors = (err as { errors?: Message[] }).errors;
  if (!Array.isArray(errors) || errors.length === 0) return [{ file, message: (err as Error).message.split('\n').slice(0, 6).join('\n') }];
  return errors.map((e) => ({
    // esbuild names files relative to absWorkingDir, the rule file's folder.
    file: e.location?.file ? resolve(dirname(file), e.location.file) : file,
    line: e.location?.line,
    column: e.location ? e.location.column + 1 : undefined,
    message: e.text,
  }));
}

/**
 * esbuild, loaded at the first compile: rules remembered compiled (compile-cache.ts) need none.
 * Loaded with `require`, which reads its one CommonJS file without lexing it first.
 */
let esbuild: typeof Esbuild | undefined;
const compiler = (): typeof Esbuild => (esbuild ??= createRequire(import.meta.url)('esbuild') as typeof Esbuild);

/**
 * Compiles one rule file to a single ES module: TypeScript stripped, its relative imports and
 * libraries bundled in (found beside the rules, then in this installation), and `reflex-lxd`
 * left as an import of the running installation's entry, so every rule shares one Reflex.
 * esbuild does the work; no loader thread stays resident. Returns the code and the files it read.
 */
async function compileRuleFile(file: string, outfile: string): Promise<{ code: string; inputs: string[] }> {
  const result = await compiler().build({
    entryPoints: [file],
    // The source map's paths are relative to where the module is written: the rule file's own path.
    outfile,
    absWorkingDir: dirname(file),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    sourcemap: 'inline',
    sourcesContent: false,
    write: false,
    metafile: true,
    logLevel: 'silent',
    nodePaths: [join(dirname(dirname(packageEntry)), 'node_modules'), join(dirname(dirname(dirname(packageEntry))))],
    plugins: [
      {
        name: packageName,
        setup(b) {
          b.onResolve({ filter: new RegExp(`^${packageName}$`) }, () => ({ path: pathToFileURL(packageEntry).href, external: true }));
        },
      },
    ],
  });
  // esbuild names the files it read relative to absWorkingDir.
  const inputs = Object.keys(result.metafile.inputs).map((f) => resolve(dirname(file), f));
  return { code: result.outputFiles[0]!.text, inputs };
}

/**
 * A rule file's module, ready to import: the one remembered when every file it was compiled from
 * is unchanged, else compiled now (and remembered); in a temporary folder when nothing can be
 * remembered.
 */
async function moduleOf(file: string, remembered: CompiledModule | undefined, temporary: () => Promise<string>): Promise<string> {
  if (remembered?.isFresh()) return remembered.path;
  if (remembered) {
    const { code, inputs } = await compileRuleFile(file, remembered.path);
    try {
      remembered.remember(code, inputs);
      return remembered.path;
    } catch {
      // a cache folder that takes no more files (full disk): compiled to a temporary folder below
    }
  }
  const path = join(await temporary(), `${basename(file, '.ts')}.mjs`);
  await writeFile(path, (await compileRuleFile(file, path)).code);
  return path;
}

/**
 * Each `.ts` file of a rules folder, compiled ({@link compileRuleFile}) and imported, in name
 * order. A file that fails to compile comes back as its error with file:line:column; one that
 * throws on import, as its message (first lines). Each load imports fresh modules.
 */
export async function* importRuleFiles(
  dir: string,
): AsyncGenerator<{ file: string; mod: Record<string, unknown> } | { file: string; error: RuleLoadError }> {
  const files = ruleFiles(dir);
  if (files.length === 0) return;
  let out: Promise<string> | undefined;
  const temporary = () => (out ??= mkdtemp(join(tmpdir(), 'reflex-rules-')));
  process.setSourceMapsEnabled(true);
  compiling++;
  try {
    // Every file is handed to esbuild at once (it compiles them in parallel); they are imported in name order.
    const modules = files.map((file) => {
      const path = moduleOf(file, compiledModule(file, packageEntry), temporary);
      path.catch(() => undefined); // awaited below, in order
      return { file, path };
    });
    for (const { file, path: pending } of modules) {
      let path: string;
      try {
        path = await pending;
      } catch (err) {
        const [first, ...more] = compileFailures(err, file);
        const where = (f: CompileFailure) => [f.file, f.line, f.column].filter((x) => x !== undefined).join(':');
        const message = [first!, ...more]
          .slice(0, 5)
          .map((f) => (f.file === file && f.line === undefined ? f.message : `${where(f)}: ${f.message}`))
          .join('\n');
        yield {
          file,
          error: { file, line: first!.file === file ? first!.line : undefined, column: first!.file === file ? first!.column : undefined, message },
        };
        continue;
      }
      try {
        // A module is imported once per URL: each load of the same file gets its own.
        yield { file, mod: (await import(`${pathToFileURL(path).href}?load=${++loads}`)) as Record<string, unknown> };
      } catch (err) {
        yield { file, error: await importFailure(err, file) };
      }
    }
  } finally {
    // esbuild's service process serves every load of this process: the last load to finish stops
    // it (several processes' worth of Reflex can load at once in one process, e.g. replicas in a test).
    if (--compiling === 0) await esbuild?.stop();
    if (out) await rm(await out, { recursive: true, force: true });
  }
}

/**
 * A rule file that threw while it was imported, located: an invalid rule definition at the line of
 * the first field at fault (found by its path in the definition), anything else at the deepest
 * line of the file in the error's stack (source maps are on while rules load, so that is the
 * line as written).
 */
async function importFailure(err: unknown, file: string): Promise<RuleLoadError> {
  const message = (err as Error).message.split('\n').slice(0, 6).join('\n');
  const first = isRuleDefinitionError(err) ? err.ruleIssues[0] : undefined;
  const place =
    (isRuleDefinitionError(err) && err.rule && first && (await placeOfRuleField(file, err.rule, first.path))) ||
    stackPlaces((err as Error)?.stack).find((p) => p.file === file);
  return { file, ...place, message };
}

/** Loads in progress in this process (see the finally above). */
let compiling = 0;
/** Loads of rule files so far in this process: each import's own URL. */
let loads = 0;
