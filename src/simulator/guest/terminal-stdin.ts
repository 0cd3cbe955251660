import { basename } from 'node:path';
import type { Command } from 'just-bash';

/**
 * The programs whose stdin, when they ask for it, is read to its end, here as busybox's do: on a
 * terminal (`cat > /tmp/f` typed at a session's prompt) they read the lines typed, to Ctrl-D. Each
 * asks for its stdin only when it reads it (no file operand, or `-`); a program that asks for it
 * otherwise (`cp` for its `-i` answers, `tty` to tell whether it is a terminal, just-bash's
 * `base64` whatever its operands) is not listed, nor one that reads the terminal in a way of its
 * own (`sh`, `bc`, `ed`: their prompts).
 */
const readers = new Set([
  'cat',
  'tac',
  'head',
  'tail',
  'wc',
  'sort',
  'uniq',
  'od',
  'md5sum',
  'sha1sum',
  'sha256sum',
  'sha512sum',
  'nl',
  'rev',
  'tee',
  'tr',
  'cut',
  'fold',
  'grep',
  'sed',
  'awk',
]);

/**
 * Of those, the ones that write each line as they read it, so that when Ctrl-C kills them what they
 * read is written (`cat > /tmp/f` then Ctrl-C keeps the lines ended with Enter); the others die of
 * it with nothing written (`wc -l > /tmp/n` leaves the file empty).
 */
const passing = new Set(['cat', 'tee']);

/** The name the patched shell asks (patches/README.md 46): whether a program that read a terminal's stdin reads it to its end. */
export const terminalStdinProgram = '__reflex_terminal_stdin';

/**
 * The shell's question (`__reflex_terminal_stdin PROG ARGS…`, asked after PROG read its stdin, the
 * terminal, as empty): status 0 when PROG reads what is typed to Ctrl-D (the shell then reads it
 * and runs PROG again on it), 2 when it also writes what it read before a Ctrl-C (the shell runs
 * it on the lines typed, then ends the line), -1 when the empty stdin it read stands.
 */
export function terminalStdinCommand(): Command {
  return {
    name: terminalStdinProgram,
    async execute(args) {
      const program = basename(args[0] ?? '');
      return { stdout: '', stderr: '', exitCode: passing.has(program) ? 2 : readers.has(program) ? 0 : -1 };
    },
  };
}
