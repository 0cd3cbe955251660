import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { ashOptionLetters, ashOptionNames } from './ash-options.js';
import { EdSession } from './busybox-ed-session.js';
import { banner, getopt, isResult } from './busybox-getopt.js';
import { openPath } from './guest-open.js';
import { stdinBytes, type ProgramHost } from './program-host.js';
import { bytesOutput } from './bytes-output.js';
import { shellQuote } from './program-run.js';

const edUsageText = 'Usage: ed [-p PROMPT] [FILE]\n';
const edUsage = `${banner}${edUsageText}`;
const mimUsage =
  `${banner}Usage: mim [-f FILE] [SHELL_OPTIONS] [TARGET] ...\n\n` +
  'Run a script from a Makefile-like specification file\n\n\t-f FILE\t\tSpec file (default Mimfile)\n';

/**
 * ed's `-p` prompt as busybox's line editing shows it: `\w`, `\W` (HOME as `~`), `\u`, `\h`, `\H`,
 * `\$`, the C escapes with `\NNN` and `\xHH`, `\[` and `\]` (nothing), any other `\c` its letter.
 * The times (`\t`, `\T`, `\A`, `\@`) are not read.
 */
async function expandPrompt(prompt: string, ctx: CommandContext, uid: number): Promise<string> {
  if (!prompt.includes('\\')) return prompt;
  const home = ctx.env.get('HOME');
  const cwd = home && (ctx.cwd === home || ctx.cwd.startsWith(`${home}/`)) ? `~${ctx.cwd.slice(home.length)}` : ctx.cwd;
  const passwd = await ctx.fs.readFile('/etc/passwd').catch(() => '');
  const user =
    passwd
      .split('\n')
      .find((l) => l.split(':')[2] === String(uid))
      ?.split(':')[0] ?? '';
  const host = /\\[hH]/.test(prompt) ? (await ctx.exec!('hostname', { cwd: ctx.cwd, stdin: '' })).stdout.trim() : '';
  const fields: Record<string, string> = {
    w: cwd,
    W: cwd.slice(cwd.lastIndexOf('/') + 1),
    u: user,
    h: host.split('.')[0]!,
    H: host,
    $: uid === 0 ? '#' : '$',
    a: '\x07',
    b: '\b',
    e: '\x1b',
    f: '\f',
    n: '\n',
    r: '\r',
    v: '\v',
    '[': '',
    ']': '',
  };
  return prompt.replace(/\\(x[0-9a-fA-F]{0,3}|[0-7]{1,3}|.?)/gs, (_m, c: string) => {
    if (/^[0-7]/.test(c)) return String.fromCharCode(parseInt(c, 8) & 0xff);
    if (!c.startsWith('x')) return fields[c] ?? c;
    // As many hex digits (up to three) as make a byte; a NUL shows as `?`.
    let digits = c.slice(1);
    while (digits.length && parseInt(digits, 16) > 0xff) digits = digits.slice(0, -1);
    const code = digits ? parseInt(digits, 16) : 0;
    return (code ? String.fromCharCode(code) : '?') + c.slice(1 + digits.length);
  });
}

/** getopt's answer to ed's options (`-p PROMPT` only): the prompt and the file, or the usage error. */
function edOptions(args: string[]): { prompt: string; file: string | undefined } | ExecResult {
  const p = getopt('ed', edUsageText, args, '', 'p');
  if (isResult(p)) return p;
  const prompt = p.opts.get('p');
  return { prompt: typeof prompt === 'string' ? prompt : '', file: p.operands[0] };
}

/** ash's one-letter options (`sh -s OPTIONS`): `set`'s and the command line's own, that mim hands to its shell. */
const ashLetters = `${Object.keys(ashOptionLetters).join('')}iscl`;

/**
 * The script busybox's mim (applets_sh/mim) writes from a spec file: a `case` on the target (the
 * first one by default), each line ending in `:` a target, the lines under it its commands
 * (trimmed as `read` trims them), an unknown target `Unknown command`; `targets` false when the
 * file names none (ash runs the lines before and then fails at the `*)` it cannot parse).
 * `errexit` (`set -e`) comes after `TARGET="$1"`: just-bash gives that assignment the status of
 * the `&&` list before it, which `-e` would take for a failure.
 */
function mimScript(spec: string, errexit: string): { script: string; targets: boolean } {
  let script = '';
  let inCase = false;
  // `read` stops at the end of the file: a last line without its newline is not read.
  for (const raw of spec.split('\n').slice(0, -1)) {
    const line = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (line === '') continue;
    if (!line.endsWith(':')) {
      script += `${line}\n`;
      continue;
    }
    const target = line.slice(0, -1);
    script += inCase ? ';;\n' : `[ $# -eq 0 ] && set -- "${target}"\nTARGET="$1"\n${errexit}shift\ncase "$TARGET" in\n`;
    script += `${target})\n`;
    inCase = true;
  }
  if (inCase) script += ';;\n*)\necho "Unknown command $TARGET"\nexit 1\n;;\nesac\n';
  return { script, targets: inCase };
}

/**
 * busybox 1.35's `ed` (the line editor as busybox has it: commands from stdin, `-p PROMPT`, plain
 * strings for searches and `s`) and `mim` (a Makefile-like spec run by the shell). Output, messages
 * and exit codes are busybox's on the LXD 5.0.2 test bed.
 */
export function busyboxEditors(host: ProgramHost): Command[] {
  const ed: Command = {
    name: 'ed',
    async execute(args, ctx) {
      if (args.length === 1 && args[0] === '--help') return { stdout: '', stderr: edUsage, exitCode: 0 };
      const options = edOptions(args);
      if ('exitCode' in options) return options;
      const session = new EdSession(host, ctx.cwd, stdinBytes(ctx).toString('latin1'), await expandPrompt(options.prompt, ctx, host.uid));
      await session.run(options.file);
      return bytesOutput(Buffer.from(session.out, 'latin1'), session.err);
    },
  };
  const mim: Command = {
    name: 'mim',
    async execute(args, ctx) {
      if (args.length === 1 && args[0] === '--help') return { stdout: '', stderr: mimUsage, exitCode: 0 };
      const [file, rest] = args.length >= 2 && args[0] === '-f' ? [args[1]!, args.slice(2)] : ['Mimfile', args];
      const opened = await openPath(host, ctx.cwd, file, 'read');
      if ('error' in opened) {
        const why = opened.error === 'Permission denied' ? opened.error : 'no such file';
        return { stdout: '', stderr: `mim: line 7: can't open ${file}: ${why}\n`, exitCode: 1 };
      }
      // `sh -s "$@"`: leading options are the shell's, as ash reads them, and set before the script.
      const sets: string[] = [];
      let i = 0;
      for (; i < rest.length && /^[-+]/.test(rest[i]!); i++) {
        const a = rest[i]!;
        if (a === '-' || a === '--') {
          i++;
          break;
        }
        for (const c of a.slice(1)) {
          if (c === 'o') {
            const name = rest[++i];
            if (name !== undefined && !ashOptionNames.includes(name))
              return { stdout: '', stderr: `sh: illegal option ${a[0]}o ${name}\n`, exitCode: 0 };
            if (name !== undefined && ['errexit', 'nounset', 'xtrace', 'pipefail', 'noexec'].includes(name)) sets.push(`${a[0]}o ${name}`);
          } else if (!ashLetters.includes(c)) return { stdout: '', stderr: `sh: illegal option ${a[0]}${c}\n`, exitCode: 2 };
          else if ('eunx'.includes(c)) sets.push(`${a[0]}${c}`);
        }
      }
      const errexit = sets.filter((o) => /^[-+](e|o errexit)$/.test(o));
      const others = sets.filter((o) => !errexit.includes(o));
      const setLine = (options: string[]): string => (options.length ? `set ${options.join(' ')}\n` : '');
      const { script, targets } = mimScript('data' in opened ? opened.data : '', setLine(errexit));
      const body = targets ? script : `${setLine(errexit)}${script}echo 'sh: syntax error: unexpected ")"' >&2\nexit 2\n`;
      const prefix = setLine(others);
      return ctx.exec!(['sh', '-c', prefix + body, 'sh', ...rest.slice(i)].map(shellQuote).join(' '), { cwd: ctx.cwd, stdin: '' });
    },
  };
  return [ed, mim];
}
