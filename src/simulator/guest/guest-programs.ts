import { posix } from 'node:path';
import type { Command, IFileSystem } from 'just-bash';
import { appletNames, isProgramImage } from './busybox-applets.js';

/** A command as just-bash registered it (what its runner calls). */
interface Registered {
  name: string;
  execute: (...args: never[]) => unknown;
}

/**
 * What the shell runs for a command word, in just-bash's terms (a script too is a command here:
 * the shell process that runs it, `script` of {@link programLookup}); null: not found.
 */
export type FoundProgram = { cmd: Registered; path: string } | { error: 'not_found' | 'permission_denied'; path: string } | null;

/**
 * How the guest's shell finds its programs, as busybox's ash does (built with standalone applets):
 * a word that names an applet runs it whatever PATH and the files hold (`ls` after `rm /bin/ls`),
 * and `type`/`command -v` say `ls is ls`; a file found by its path or on PATH runs as busybox runs
 * when it is a link to (a copy of) the busybox binary, the applet its name says (`ln -s
 * /bin/busybox /tmp/x; /tmp/x`: `x: applet not found`), and as a script otherwise. The patched
 * just-bash asks it (`fs.jbPrograms`) before its own look-up, which took any registered name as a
 * program and wrote a stand-in file for each in /bin and /usr/bin.
 */
export interface ProgramLookup {
  /** What runs for `word` (`path`: it resolved, when the word has a slash); undefined: just-bash's own look-up. */
  find(
    fs: IFileSystem,
    word: string,
    path: string | undefined,
    commands: Map<string, Registered>,
    searchPath: string,
  ): Promise<FoundProgram | undefined>;
  /** What `type` and `command -v` say `word` is: the applet's own name; undefined: just-bash's answer. */
  shown(word: string, commands: Map<string, Registered>): string | undefined;
}

const applets: ReadonlySet<string> = new Set(appletNames);

/**
 * The look-up for a guest whose busybox-linked files run `runnable` (the bed's applets and any
 * program the image adds, python3). Other registered commands (the simulator's own helpers,
 * scripted commands, `bash`) run by name only and have no file. `bytesOf` reads a file as
 * execve(2) does: without the read permission a user needs, and without moving its atime.
 */
export function programLookup(
  runnable: ReadonlySet<string>,
  bytesOf: (path: string) => Promise<Uint8Array>,
  script: (path: string) => Registered,
): ProgramLookup {
  const asApplet = (name: string, path: string, commands: Map<string, Registered>): FoundProgram => {
    const cmd = runnable.has(name) ? commands.get(name) : undefined;
    return { cmd: cmd ?? appletNotFound(name), path };
  };
  // `typed`: the path as the command gave it, or as it was found on PATH (what execve(2) gets, and a script's $0).
  const fileAt = async (fs: IFileSystem, path: string, commands: Map<string, Registered>, typed: string): Promise<FoundProgram> => {
    if (!(await fs.exists(path))) return { error: 'not_found', path };
    const st = await fs.stat(path).catch(() => undefined);
    if (!st) return { error: 'not_found', path };
    if (st.isDirectory || (st.mode & 0o111) === 0) return { error: 'permission_denied', path };
    const real = await fs.realpath(path).catch(() => path);
    const bytes = await bytesOf(real).catch(() => undefined);
    if (bytes && isProgramImage(bytes)) return asApplet(posix.basename(path), path, commands);
    // A script the user may run but not read: the kernel starts its `#!` interpreter, which cannot open it.
    const interpreter = bytes && /^#!\s*(\S+)/.exec(Buffer.from(bytes.subarray(0, 256)).toString('latin1'))?.[1];
    if (
      interpreter &&
      !(await fs.readFileBuffer(path).then(
        () => true,
        () => false,
      ))
    )
      return { cmd: cannotOpen(interpreter, path), path };
    // A script: the kernel runs its interpreter, a shell process of its own (nested-shell.ts).
    return { cmd: script(typed), path };
  };
  return {
    async find(fs, word, path, commands, searchPath) {
      if (path !== undefined) return fileAt(fs, path, commands, word);
      const cmd = commands.get(word);
      if (cmd) return { cmd, path: word };
      for (const dir of searchPath.split(':')) {
        if (!dir) continue;
        const at = posix.join(dir.startsWith('/') ? dir : fs.resolvePath('/', dir), word);
        const found = await fileAt(fs, at, commands, at);
        // A name on PATH that is not executable is passed over, as execvp(3) goes on to the next directory.
        if (found && !('error' in found)) return found;
      }
      return null;
    },
    shown: (word, commands) => (applets.has(word) && commands.has(word) ? word : undefined),
  };
}

/** What a script's interpreter says when it may not read the script (ash: `can't open`, status 2). */
function cannotOpen(interpreter: string, path: string): Registered {
  return {
    name: interpreter,
    execute: async () => ({ stdout: '', stderr: `${interpreter}: can't open '${path}': Permission denied\n`, exitCode: 2 }),
  };
}

/** What busybox says when it is called by a name that is none of its applets. */
function appletNotFound(name: string): Registered {
  return { name, execute: async () => ({ stdout: '', stderr: `${name}: applet not found\n`, exitCode: 127 }) };
}

/** ash's PATH when none is set (busybox's default). */
export const defaultPath = '/sbin:/usr/sbin:/bin:/usr/bin';

/**
 * busybox's `which`: each name found as an executable regular file, by its path when it has a
 * slash, else in each directory of PATH (an empty entry is the current directory, `./ls`); `-a`
 * every one; status 1 when a name is not found, and usage for none.
 */
export function whichCommand(): Command {
  return {
    name: 'which',
    async execute(args, ctx) {
      const all = args[0] === '-a';
      const names = all ? args.slice(1) : args;
      if (names.length === 0) return { stdout: '', stderr: whichUsage, exitCode: 1 };
      const runnable = async (path: string): Promise<boolean> => {
        const st = await ctx.fs.stat(ctx.fs.resolvePath(ctx.cwd, path)).catch(() => undefined);
        return st !== undefined && st.isFile && (st.mode & 0o111) !== 0;
      };
      let stdout = '';
      let missing = false;
      for (const name of names) {
        const found: string[] = [];
        if (name.includes('/')) {
          if (await runnable(name)) found.push(name);
        } else
          for (const dir of (ctx.env.get('PATH') ?? defaultPath).split(':')) {
            const path = `${dir || '.'}/${name}`;
            if (!(await runnable(path))) continue;
            found.push(path);
            if (!all) break;
          }
        if (found.length === 0) missing = true;
        stdout += found.map((p) => `${p}\n`).join('');
      }
      return { stdout, stderr: '', exitCode: missing ? 1 : 0 };
    },
  };
}

const whichUsage = `BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.

Usage: which [-a] COMMAND...

Locate COMMAND

\t-a\tShow all matches
`;

/**
 * `test`, `[` and `[[` run as programs (`/usr/bin/[ 1 = 1 ]`, `env test -f F`): busybox's applet is
 * the shell's own test, so each runs the shell's builtin on its arguments (`[[` as `[`: busybox's
 * `[[` applet is test ending in `]]`).
 */
export function testPrograms(): Command[] {
  const run = (name: string, close?: string): Command => ({
    name,
    async execute(args, ctx) {
      let words = args;
      if (close !== undefined) {
        if (args[args.length - 1] !== close) return { stdout: '', stderr: `${name}: missing ${close}\n`, exitCode: 2 };
        words = args.slice(0, -1);
      }
      const line = ['test', ...words].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
      return ctx.exec!(line, { cwd: ctx.cwd, stdin: String(ctx.stdin), stdinKind: 'bytes' });
    },
  });
  return [run('test'), run('[', ']'), run('[[', ']]')];
}
