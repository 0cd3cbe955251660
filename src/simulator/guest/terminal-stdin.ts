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

/** The name the patched shell asks (patches/README.md 46): whether a program that read a terminal's stdin reads it to its end. */
export const terminalStdinProgram = '__reflex_terminal_stdin';

/**
 * The shell's question (`__reflex_terminal_stdin PROG ARGS…`, asked after PROG read its stdin, the
 * terminal, as empty): status 0 when PROG reads what is typed to Ctrl-D (the shell then reads it
 * and runs PROG again on it), -1 when the empty stdin it read stands.
 */
export function terminalStdinCommand(): Command {
  return {
    name: terminalStdinProgram,
    async execute(args) {
      return { stdout: '', stderr: '', exitCode: readers.has(basename(args[0] ?? '')) ? 0 : -1 };
    },
  };
}
