/** What a command run by the built-in shell produced. */
export interface ShellResult {
  stdout: string;
  stderr: string;
  code: number;
  /** How long the command runs (its `sleep`s added up); 0 when it ends at once. */
  sleepMs: number;
  /** The output written before its first `sleep`: what a command killed while it sleeps leaves. */
  beforeSleep?: { stdout: string; stderr: string };
}

/** Where and as whom the command runs (the exec request's `cwd`, `user`, `group`, `environment`). */
export interface ShellContext {
  cwd?: string;
  user?: number;
  group?: number;
  environment?: Record<string, string>;
}

/**
 * The simulator's stand-in for a guest's programs: `true`, `false`, `echo` (with `-n`), `exit N`,
 * `sleep N` (seconds; it only adds to how long the command runs), `pwd`, `id -u`/`id -g`,
 * `env` and `sh -c SCRIPT` (also `bash`, `/bin/sh`…), where a script is a list of those joined by `;`,
 * `&&` and `||`, with single and double quotes and `>&2` (output to stderr). Anything else is
 * "not found" with exit code 127, as a shell reports it; executed directly (not through `sh -c`)
 * the daemon cannot start it.
 */
export function runCommand(argv: readonly string[], context: ShellContext = {}): ShellResult {
  const out: ShellResult = { stdout: '', stderr: '', code: 0, sleepMs: 0 };
  const program = basename(argv[0] ?? '');
  if ((program === 'sh' || program === 'bash' || program === 'ash') && argv[1] === '-c') {
    runScript(argv[2] ?? '', out, program, context);
    return out;
  }
  // Executed directly, an unknown program cannot be started: 127 with nothing on stderr (the
  // daemon then fails the operation with "Command not found").
  if (builtin(argv, out, context) === 'unknown') out.code = 127;
  return out;
}

type Outcome = 'ran' | 'exit' | 'unknown';

function builtin(argv: readonly string[], out: ShellResult, context: ShellContext): Outcome {
  const [cmd, ...args] = argv;
  switch (basename(cmd ?? '')) {
    case 'sleep': {
      const seconds = Number(args[0]);
      if (!Number.isFinite(seconds) || seconds < 0) {
        out.stderr += `sleep: invalid number '${args[0] ?? ''}'\n`;
        out.code = 1;
        return 'ran';
      }
      out.beforeSleep ??= { stdout: out.stdout, stderr: out.stderr };
      out.sleepMs += Math.round(seconds * 1000);
      out.code = 0;
      return 'ran';
    }
    case 'pwd':
      out.stdout += `${context.cwd ?? (context.user ? '/' : '/root')}\n`;
      out.code = 0;
      return 'ran';
    case 'id':
      out.stdout += `${args[0] === '-g' ? (context.group ?? 0) : (context.user ?? 0)}\n`;
      out.code = 0;
      return 'ran';
    case 'env':
      for (const [k, v] of Object.entries(context.environment ?? {})) out.stdout += `${k}=${v}\n`;
      out.code = 0;
      return 'ran';
    case 'true':
    case ':':
      out.code = 0;
      return 'ran';
    case 'false':
      out.code = 1;
      return 'ran';
    case 'echo': {
      const noNewline = args[0] === '-n';
      const words = noNewline ? args.slice(1) : args;
      out.stdout += words.join(' ') + (noNewline ? '' : '\n');
      out.code = 0;
      return 'ran';
    }
    case 'exit':
      out.code = args[0] === undefined ? out.code : Number.parseInt(args[0], 10) & 0xff;
      return 'exit';
    default:
      return 'unknown';
  }
}

function runScript(script: string, out: ShellResult, shell: string, context: ShellContext): void {
  const tokens = tokenize(script);
  if (tokens === undefined) {
    out.stderr += `${shell}: syntax error: unterminated quoted string\n`;
    out.code = 2;
    return;
  }
  let words: string[] = [];
  let skip = false;
  const runPending = (): 'exit' | undefined => {
    if (words.length === 0) return undefined;
    const toStderr = words.some((w) => w === '>&2' || w === '1>&2');
    const argv = words.filter((w) => w !== '>&2' && w !== '1>&2');
    words = [];
    if (skip) return undefined;
    const before = out.stdout.length;
    const outcome = builtin(argv, out, context);
    if (toStderr) {
      out.stderr += out.stdout.slice(before);
      out.stdout = out.stdout.slice(0, before);
    }
    if (outcome === 'unknown') {
      out.stderr += `${shell}: ${argv[0]}: not found\n`;
      out.code = 127;
    }
    return outcome === 'exit' ? 'exit' : undefined;
  };
  for (const t of tokens) {
    if (t.op === undefined) {
      words.push(t.word);
      continue;
    }
    if (runPending() === 'exit') return;
    // `a && b` runs b only after success, `a || b` only after failure; `;` always.
    skip = t.op === '&&' ? out.code !== 0 : t.op === '||' ? out.code === 0 : false;
  }
  runPending();
}

type Token = { op: undefined; word: string } | { op: ';' | '&&' | '||'; word: '' };

/** Splits a script into words and operators; undefined when a quote is not closed. */
function tokenize(script: string): Token[] | undefined {
  const tokens: Token[] = [];
  let word = '';
  let inWord = false;
  const flush = (): void => {
    if (inWord) tokens.push({ op: undefined, word });
    word = '';
    inWord = false;
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === "'" || c === '"') {
      const end = script.indexOf(c, i + 1);
      if (end < 0) return undefined;
      word += script.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === ';' || c === '\n') {
      flush();
      tokens.push({ op: ';', word: '' });
    } else if ((c === '&' || c === '|') && script[i + 1] === c) {
      flush();
      tokens.push({ op: c === '&' ? '&&' : '||', word: '' });
      i++;
    } else if (c === ' ' || c === '\t') {
      flush();
    } else {
      word += c;
      inWord = true;
    }
  }
  flush();
  return tokens;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
