import { relative } from 'node:path';
import ts from 'typescript';
import { nodeTypesRoot, packageName, packageTypes } from './package-entry.js';
import { loadRules, ruleFiles } from './rule-loader.js';

/** One problem in a rule file, located precisely. */
export interface RuleProblem {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

/**
 * Type-checks the rule files of a folder against the rule contract (strict TypeScript; `reflex-lxd`
 * is the running installation's declarations, wherever the folder is), then loads them to run
 * the contract's validation. Problems come back as file:line:column messages.
 */
export async function checkRules(dir: string): Promise<{ rules: string[]; problems: RuleProblem[] }> {
  const files = ruleFiles(dir);
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [nodeTypesRoot()].filter((r): r is string => r !== undefined),
    paths: { [packageName]: [packageTypes] },
  });
  const problems: RuleProblem[] = [];
  const wanted = new Set(files);
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (d.file && !wanted.has(d.file.fileName)) continue; // only report the rule files themselves
    if (d.file && d.start !== undefined) {
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
      problems.push({ file: d.file.fileName, line: line + 1, column: character + 1, message });
    } else {
      problems.push({ file: dir, message });
    }
  }
  const { rules, errors } = await loadRules(dir);
  // A file the type-checker already faulted fails to load for the same reason: reported once.
  const typed = new Set(problems.map((p) => p.file));
  for (const e of errors) if (!typed.has(e.file)) problems.push({ file: e.file, line: e.line, column: e.column, message: e.message });
  return { rules: rules.map((r) => r.name), problems };
}

/** `rules/x.ts:12:5 message`, relative to the working directory. */
export function formatProblem(p: RuleProblem): string {
  const where = [relative(process.cwd(), p.file) || p.file, p.line, p.column].filter((x) => x !== undefined).join(':');
  return `${where}: ${p.message}`;
}
