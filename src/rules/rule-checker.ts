import { fork } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative } from 'node:path';
import type ts from 'typescript';
import type { ErrorCode } from '../errors/codes.js';
import { ReflexError } from '../errors/reflex-error.js';
import { fromSources, nodeTypesRoot, packageName, packageTypes } from './package-entry.js';
import { ruleFiles } from './rule-files.js';
import { loadRulesFolder } from './rules-folder.js';
import { typecheckCache, type TypecheckCache } from './typecheck-cache.js';

/** One problem in a rule file, located precisely. */
export interface RuleProblem {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

/**
 * Type-checks the rule files of a folder against the rule contract: strict TypeScript, `reflex-lxd`
 * being the running installation's declarations, wherever the folder is. Only the rule files are
 * checked (what they import is read for its types, not checked itself: checking Reflex's own
 * sources from a checkout took 8 s, the rule files alone 2 s). Problems come back with file, line
 * and column; a folder that does not exist throws RULES_MISSING. A clean check of unchanged files
 * is remembered across processes (typecheck-cache.ts). What the compiler parsed of the declarations
 * is kept for the next check for `keepParsedMs` (default a minute; 0 lets it go at once).
 */
export async function typeCheckRules(dir: string, opts: { keepParsedMs?: number } = {}): Promise<RuleProblem[]> {
  const files = ruleFiles(dir);
  if (files.length === 0) return [];
  const { cache, typeRoots } = rememberedChecks(dir, files);
  if (cache.isClean()) return [];
  // The compiler takes seconds to load: only a check that is not remembered loads it. Required,
  // not imported: an import of a CommonJS module has Node scan its 9 MB for named exports first.
  const ts = createRequire(import.meta.url)('typescript') as typeof import('typescript');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    // Rules run in Node: its globals come from @types/node, and the DOM's would type-check code that fails at run time.
    lib: ['lib.es2022.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: ['node'],
    typeRoots,
    paths: { [packageName]: [packageTypes] },
  };
  const program = ts.createProgram(files, options, cachingHost(ts, options, new Set(files), opts.keepParsedMs ?? 60_000));
  const problems: RuleProblem[] = [];
  const wanted = new Set(files);
  // Of a file with a syntax error, only the first is reported: the parser's later complaints, and type errors in what it recovered, follow from it.
  const perFile = files
    .map((f) => program.getSourceFile(f))
    .flatMap((sf) => {
      const syntax = program.getSyntacticDiagnostics(sf);
      return syntax.length ? syntax.slice(0, 1) : program.getSemanticDiagnostics(sf);
    });
  for (const d of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...perFile]) {
    if (d.file && !wanted.has(d.file.fileName)) continue; // only report the rule files themselves
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (d.file && d.start !== undefined) {
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
      problems.push({ file: d.file.fileName, line: line + 1, column: character + 1, message });
    } else {
      problems.push({ file: d.file?.fileName ?? dir, message });
    }
  }
  if (problems.length === 0) cache.rememberClean(program.getSourceFiles().map((sf) => sf.fileName));
  return problems;
}

/**
 * {@link typeCheckRules} in a child process of its own, for a long-running process (`reflex run`
 * at start and at each reload): the compiler (9 MB of code) and what it parses (the standard
 * library, @types/node and Reflex's declarations) live and die there, where in the process they
 * stayed for good (about 40 MB of resident memory in an idle worker, and a larger heap for every
 * major collection to mark; a worker thread's heap goes, but not all of its memory). Same
 * problems, same errors (RULES_MISSING).
 */
export async function typeCheckRulesApart(dir: string): Promise<RuleProblem[]> {
  // A check remembered clean needs neither the compiler nor a child: the rule files are read and
  // hashed, and what the check read is stat'ed, here. A missing folder throws as the child would.
  const files = ruleFiles(dir);
  if (files.length === 0 || rememberedChecks(dir, files).cache.isClean()) return [];
  // From the sources (the checkout's tests), the child's TypeScript goes through tsx as this file did.
  const child = fork(new URL(`./rule-check-process.${fromSources ? 'ts' : 'js'}`, import.meta.url), [dir], {
    execArgv: fromSources ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (answer: { problems?: RuleProblem[]; error?: { code?: ErrorCode; message: string } }) => {
      if (answer.problems) resolve(answer.problems);
      else if (answer.error?.code) reject(new ReflexError(answer.error.code, answer.error.message));
      else reject(new Error(`type-checking ${dir}: ${answer.error?.message}`));
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`type-checking ${dir}: the checker exited (${signal ?? code}) without an answer`)));
  });
}

/** The remembered checks of `files` (typecheck-cache.ts), keyed by what decides a check's verdict, and the type roots it uses. */
function rememberedChecks(dir: string, files: readonly string[]): { cache: TypecheckCache; typeRoots: string[] } {
  const typeRoots = [nodeTypesRoot()].filter((r): r is string => r !== undefined);
  const cache = typecheckCache(dir, files, {
    strict: true,
    target: 'ES2022',
    lib: ['lib.es2022.d.ts'],
    module: 'NodeNext',
    skipLibCheck: true,
    types: ['node'],
    typeRoots,
    packageTypes,
  });
  return { cache, typeRoots };
}

/** Declarations parsed by earlier checks of this process, by file, with the file's mtime and size when parsed. */
const parsed = new Map<string, { mtimeMs: number; size: number; source: ts.SourceFile }>();
let forget: NodeJS.Timeout | undefined;

/**
 * A compiler host that keeps what it parsed of the files a rule imports (the standard library,
 * @types/node, Reflex's declarations: 300 files, most of a check's time) for the next check within
 * `keepMs`, as an editor's language service does; a file changed since is parsed again. The rule
 * files are always read afresh. Kept a minute at most: a worker checks at start and at reloads,
 * and need not hold the compiler's trees (tens of MB) in between.
 */
function cachingHost(ts: typeof import('typescript'), options: ts.CompilerOptions, rules: Set<string>, keepMs: number): ts.CompilerHost {
  const host = ts.createCompilerHost(options);
  // JSDoc in TypeScript files gives no types and no errors, and @types/node is mostly JSDoc: tsc
  // itself skips it this way (TypeScript 5.3+). Comment directives (@ts-expect-error) are not JSDoc.
  host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeErrors;
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError, create) => {
    const stat = rules.has(fileName) ? undefined : statSync(fileName, { throwIfNoEntry: false });
    if (!stat) return read(fileName, language, onError, create);
    const known = parsed.get(fileName);
    if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size) return known.source;
    const source = read(fileName, language, onError, create);
    if (source) parsed.set(fileName, { mtimeMs: stat.mtimeMs, size: stat.size, source });
    return source;
  };
  clearTimeout(forget);
  forget = setTimeout(() => parsed.clear(), keepMs).unref();
  return host;
}

/**
 * Merges a folder's type problems and its load errors: a file the type-checker already faulted
 * fails to load for the same reason, so its load errors are left out (reported once).
 */
export function withLoadErrors(typed: RuleProblem[], loadErrors: RuleProblem[]): RuleProblem[] {
  const faulted = new Set(typed.map((p) => p.file));
  return [...typed, ...loadErrors.filter((e) => !faulted.has(e.file))];
}

/**
 * Type-checks the rule files of a folder ({@link typeCheckRules}), then loads them to run the
 * contract's validation. Problems come back as file:line:column messages.
 */
export async function checkRules(dir: string): Promise<{ rules: string[]; probes: string[]; problems: RuleProblem[] }> {
  // Loading starts first: esbuild compiles the files in its own process while the type-checker
  // holds this thread, so on two cores the two take the time of the longer one.
  const loading = loadRulesFolder(dir);
  loading.catch(() => undefined); // a missing folder: typeCheckRules throws the same error first
  const typed = await typeCheckRules(dir);
  const { rules, probes, errors } = await loading;
  return { rules: rules.map((r) => r.name), probes: probes.map((p) => p.name), problems: withLoadErrors(typed, errors) };
}

/** `rules/x.ts:12:5 message`, relative to the working directory. */
export function formatProblem(p: RuleProblem): string {
  const where = [relative(process.cwd(), p.file) || p.file, p.line, p.column].filter((x) => x !== undefined).join(':');
  return `${where}: ${p.message}`;
}
