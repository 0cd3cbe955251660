import { posix } from 'node:path';
import type { Command, ExecResult } from 'just-bash';
import { banner, helpAsked } from './busybox-getopt.js';
import { isRefusal } from './guest-access.js';
import { newEntryMode } from './guest-fs.js';
import { bytesOutput } from './bytes-output.js';
import { stdinBytes, umaskOf, writeFile, type ProgramHost } from './program-host.js';

/** What one stream gave: the bytes busybox writes, and its message and kind of failure if it failed. */
export interface Unpacked {
  output: Buffer;
  /** busybox's message (the applet's name goes before it). */
  error?: string;
  /** The program dies at once (bb_error_msg_and_die): a file being written stays as it is, no later operand is read. */
  fatal?: boolean;
  /** What the unpacker returned on success (bytes written; lzop's: 1), for `-v`'s percentage. */
  status: number;
}

/** Thrown inside a stream's transform for a message that ends the program at once (bb_error_msg_and_die). */
export class FatalUnpackError extends Error {}

/** A stream's output as busybox writes it (whole buffers as they fill), and the Unpacked it ends with. */
export class UnpackWriter {
  private readonly chunks: Buffer[] = [];
  total = 0;

  write(bytes: Uint8Array): void {
    this.chunks.push(Buffer.from(bytes));
    this.total += bytes.length;
  }

  /** Success; `status` is the unpacker's return (default: the bytes written). */
  done(status = this.total): Unpacked {
    return { output: Buffer.concat(this.chunks), status };
  }

  failed(error: string, fatal = false): Unpacked {
    return { output: Buffer.concat(this.chunks), error, fatal, status: -1 };
  }

  /** Runs a transform that writes here: a FatalUnpackError thrown in it ends it as a fatal failure, with what was written. */
  settle(transform: () => Unpacked): Unpacked {
    try {
      return transform();
    } catch (err) {
      if (err instanceof FatalUnpackError) return this.failed(err.message, true);
      throw err;
    }
  }
}

/** One applet of busybox's bbunpack family (archival/bbunzip.c) and its stream's transform. */
export interface Unpacker {
  name: string;
  /** The option letters getopt32 takes (any other: `invalid option`, then the usage). */
  options: string;
  /**
   * The option letters the arguments are read again with when these flags hand over to another
   * applet's main (`bzip2 -d` runs bunzip2's, whose getopt32 refuses bzip2's levels), if they do.
   */
  reparsedWith?(flags: Set<string>): string | undefined;
  /** Flags the applet's name carries (`lzcat`: `c`). */
  implied: string;
  usage: string;
  /** The file written for FILE (undefined: `unknown suffix - ignored`). */
  newName(file: string, flags: Set<string>): string | undefined;
  /** Whether the input file stays after a good run. */
  keeps(flags: Set<string>): boolean;
  /**
   * The message for a FILE the user may not read, if not open_or_warn's `can't open 'F': Permission
   * denied` (Debian's zcat says `F: Permission denied`).
   */
  refusedAs?(file: string): string;
  /** Refuses to run at all (`lzma` without `-d` or `-t`). */
  refuses?(flags: Set<string>): boolean;
  /** `directory`: the input is one, which opens but whose read(2) fails (EISDIR). */
  run(data: Buffer, flags: Set<string>, directory: boolean): Unpacked | Promise<Unpacked>;
}

/** busybox's make_new_name_generic: FILE.EXT gives FILE, anything else nothing. */
export const strippedOf =
  (ext: string) =>
  (file: string): string | undefined => {
    const dot = file.lastIndexOf('.');
    return dot >= 0 && file.slice(dot + 1) === ext ? file.slice(0, dot) : undefined;
  };

/**
 * bbunpack (archival/bbunzip.c) over an unpacker: each FILE (none or `-`: stdin to stdout) gives
 * its new name's file (refused if there, unless `-f`), made with the input's mode, and the input
 * is removed unless kept; `-c` writes to stdout, `-t` only tests. A failure removes the new file
 * and goes on to the next operand; a fatal one ends the program, leaving the new file as written.
 * Each FILE is opened onto stdin, so a `-` after one reads what that file has left: nothing; one the
 * user may not read is `can't open 'F': Permission denied` and the next is read. The output is raw
 * bytes only when they are not UTF-8 (bytes-output.ts).
 */
export function bbunpack(host: ProgramHost, unpacker: Unpacker): Command {
  const { name } = unpacker;
  return {
    name,
    async execute(args, ctx): Promise<ExecResult> {
      const help = helpAsked(args, unpacker.usage);
      if (help) return help;
      const parsed = parseArgs(args, unpacker.options, unpacker.implied);
      const again = typeof parsed === 'string' ? undefined : unpacker.reparsedWith?.(parsed.flags);
      const options = again === undefined ? parsed : parseArgs(args, again, unpacker.implied);
      if (typeof options === 'string')
        return { stdout: '', stderr: `${name}: invalid option -- '${options}'\n${banner}${unpacker.usage}`, exitCode: 1 };
      const { flags, files } = options;
      if (unpacker.refuses?.(flags)) return { stdout: '', stderr: `${banner}${unpacker.usage}`, exitCode: 1 };
      const toStdout = flags.has('c') || flags.has('t');
      let out = Buffer.alloc(0);
      let stderr = '';
      let code = 0;
      const failed = (message: string): void => {
        stderr += `${name}: ${message}\n`;
        code = 1;
      };
      let stdinOpened = false;
      for (const file of files.length ? files : ['-']) {
        let data: Buffer;
        let path: string | undefined;
        let mode = 0o644;
        let size = 0;
        let directory = false;
        if (file === '-') data = stdinOpened ? Buffer.alloc(0) : stdinBytes(ctx);
        else {
          path = posix.resolve(ctx.cwd, file);
          const entry = await host.fs.entry(path);
          if (!entry) {
            failed(`${file}: No such file or directory`);
            continue;
          }
          // A directory opens; reading it gives nothing (and an error only the readers check).
          directory = entry.type === 'directory';
          const read = directory ? Buffer.alloc(0) : await host.fs.read(path).catch((e: unknown) => (isRefusal(e) ? undefined : Promise.reject(e)));
          if (read === undefined) {
            failed(unpacker.refusedAs?.(file) ?? `can't open '${file}': Permission denied`);
            continue;
          }
          data = read;
          stdinOpened = true;
          mode = newEntryMode(entry.mode, umaskOf(host));
          size = entry.type === 'directory' ? entry.size : data.length;
        }
        let target: string | undefined;
        let shown: string | undefined;
        if (path && !toStdout) {
          shown = unpacker.newName(file, flags);
          if (shown === undefined) {
            failed(`${file}: unknown suffix - ignored`);
            continue;
          }
          target = posix.resolve(ctx.cwd, shown);
          if (flags.has('f')) await host.fs.remove(target).catch(() => undefined);
          if (await host.fs.entry(target)) {
            failed(`can't open '${shown}': File exists`);
            continue;
          }
        }
        const result = await unpacker.run(data, flags, directory);
        if (result.error !== undefined) failed(result.error);
        if (!target) {
          if (!flags.has('t')) out = Buffer.concat([out, result.output]);
        } else if (result.error === undefined || result.fatal) await writeFile(host, target, result.output, mode);
        if (result.fatal) break;
        if (result.error !== undefined || !target) continue;
        if (flags.has('v')) {
          const percent = result.status ? Number(((BigInt(size) * 100n) / BigInt(result.status)) & 0xffffffffn) : 0;
          stderr += `${file}: ${(100 - percent) >>> 0}% - replaced with ${shown}\n`;
        }
        // unlink(2) of a directory (gzip DIR writes DIR.gz of nothing) fails: DIR stays, DIR.gz too.
        if (unpacker.keeps(flags)) continue;
        if (directory) failed(`can't remove file '${file}': Is a directory`);
        else await host.fs.remove(path!);
      }
      return out.length ? bytesOutput(out, stderr, code) : { stdout: '', stderr, exitCode: code };
    },
  };
}

/** getopt32 over the arguments: the flags (with the name's own) and the operands, or the first letter refused. */
function parseArgs(args: string[], options: string, implied: string): { flags: Set<string>; files: string[] } | string {
  const flags = new Set<string>(implied);
  const files: string[] = [];
  let operandsOnly = false;
  for (const a of args) {
    if (operandsOnly || !a.startsWith('-') || a === '-') files.push(a);
    else if (a === '--') operandsOnly = true;
    else
      for (const c of a.slice(1)) {
        if (!options.includes(c)) return c;
        flags.add(c);
      }
  }
  return { flags, files };
}
