import { basename } from 'node:path';
import type { Command, ExecResult } from 'just-bash';
import { wcShown } from './busybox-wc.js';

/** A program's failure: its message and status 1. */
const failed = (message: string): ExecResult => ({ stdout: '', stderr: `${message}\n`, exitCode: 1 });

/**
 * A program whose stdin is a directory (`cat < /tmp`): busybox's sh opens the directory as it
 * would a file, and the program's read(2) fails with EISDIR, which each program words its own way.
 * These are the answers of LXD 5.0.2's busybox 1.35 for the programs that read their stdin; a
 * program not listed reads it as empty (sort, sed, cut, grep …, as they do there).
 */
const failures: Record<string, (args: string[]) => ExecResult> = {
  cat: () => failed('cat: read error: Is a directory'),
  tail: () => failed('tail: read error: Is a directory'),
  tr: () => failed('tr: read error: Is a directory'),
  base64: () => failed('base64: read error: Is a directory'),
  head: () => failed('head: standard input: Input/output error'),
  dd: () => failed('dd: standard input: Is a directory'),
  tac: () => failed('tac: -: Is a directory'),
  uniq: () => failed('uniq: (null): I/O error'),
  awk: () => failed('awk: cmd. line:1: Is a directory'),
  tee: () => ({ stdout: '', stderr: '', exitCode: 1 }),
  od: () => ({ ...failed('od: standard input: read error'), stdout: '0000000\n' }),
  wc: (args) => ({ ...failed('wc: standard input: Is a directory'), stdout: `${wcZeros(args)}\n` }),
  ...Object.fromEntries(['md5sum', 'sha1sum', 'sha256sum', 'sha512sum'].map((p) => [p, () => failed(`${p}: can't read '-': Is a directory`)])),
};

/** wc's counts of nothing for its options: one column bare, several at busybox's width of 9. */
function wcZeros(args: string[]): string {
  const columns = wcShown(args).length;
  return columns === 1 ? '0' : Array.from({ length: columns }, () => '0'.padStart(9)).join(' ');
}

/** The name the patched shell asks (patches/README.md): it answers for a program that read a directory as its stdin. */
export const directoryStdinProgram = '__reflex_directory_stdin';

/**
 * The shell's question (`__reflex_directory_stdin PROG ARGS…`, asked after PROG read a stdin that
 * is a directory): busybox's answer for PROG, or status -1 when PROG reads it as empty, the
 * answer it already gave then standing.
 */
export function directoryStdinCommand(): Command {
  return {
    name: directoryStdinProgram,
    async execute(args) {
      const [program, ...rest] = args;
      const answer = failures[basename(program ?? '')];
      return answer ? answer(rest) : { stdout: '', stderr: '', exitCode: -1 };
    },
  };
}
