import type { ExecResult } from 'just-bash';

/**
 * One write of a program: its descriptor (1 stdout, 2 stderr), what it wrote, and whether that is
 * raw bytes (one character a byte) rather than text. The patched shell's collectors and its `2>&1`
 * merge read a result's writes in this form (`jbLog`, patches/README.md item 8).
 */
export type OutputPart = [fd: 1 | 2, text: string, raw: boolean];

/** A command's result that says the order its two streams were written in. */
export type OrderedResult = ExecResult & { jbLog?: OutputPart[] };

/**
 * What a program writes, in the order it writes it. busybox flushes stdout before each message on
 * stderr (libbb/verror_msg.c: fflush_all), so under `2>&1` its output and its messages interleave in
 * the order the program wrote them (`wc f /nosuch g`: f's line, the message, g's line, total). A
 * program writes with `out` and `err`; each write is kept as a part, in order.
 */
export class ProgramOutput {
  readonly parts: OutputPart[] = [];
  #stdout = '';
  #stderr = '';
  #raw = false;

  get stdout(): string {
    return this.#stdout;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /**
   * Writes text to stdout. A method, not an assignment to `stdout`: `o.stdout += text` hands the
   * setter the whole output so far, and finding the new text in it costs the whole length each time
   * (65,536 short writes took minutes and ran out of memory).
   */
  out(text: string): void {
    if (text === '') return;
    if (this.#raw) return this.bytes(Buffer.from(text));
    this.#stdout += text;
    this.parts.push([1, text, false]);
  }

  /** Writes text to stderr (a message). */
  err(text: string): void {
    if (text === '') return;
    this.#stderr += text;
    this.parts.push([2, text, false]);
  }

  /** Writes bytes to stdout; the output as a whole is then bytes, passed on byte for byte. */
  bytes(data: Buffer): void {
    if (data.length === 0) return;
    if (!this.#raw) {
      // Text written before now counts as its UTF-8 bytes, as it would have gone out.
      this.#raw = true;
      this.#stdout = Buffer.from(this.#stdout).toString('latin1');
      for (const part of this.parts) if (part[0] === 1) part.splice(1, 2, Buffer.from(part[1]).toString('latin1'), true);
    }
    const text = data.toString('latin1');
    this.#stdout += text;
    this.parts.push([1, text, true]);
  }

  /**
   * The result, with its writes' order: bytes (`stdoutKind`) once a write was.
   */
  result(exitCode: number): OrderedResult {
    const interleaved = this.#stdout !== '' && this.#stderr !== '';
    const order = interleaved ? { jbLog: this.parts } : {};
    if (!this.#raw) return { stdout: this.#stdout, stderr: this.#stderr, exitCode, ...order };
    return { stdout: this.#stdout, stderr: this.#stderr, exitCode, stdoutKind: 'bytes', ...order };
  }

  /** Appends a result another program gave (just-bash's own, which a busybox program wraps), in its order. */
  append(result: ExecResult): void {
    const parts = orderOf(result);
    for (const [fd, text, raw] of parts) {
      if (fd === 2) this.err(text);
      else if (raw || result.stdoutKind === 'bytes') this.bytes(Buffer.from(text, 'latin1'));
      else this.out(text);
    }
  }
}

/**
 * A result's writes in order: its own `jbLog` when it has one that matches its streams, else all
 * its stdout and then all its stderr (what a result without an order can say).
 */
export function orderOf(result: ExecResult): OutputPart[] {
  const log = (result as OrderedResult).jbLog;
  const raw = result.stdoutKind === 'bytes' || result.stdoutEncoding === 'binary';
  // A result of bytes holds its text parts as their UTF-8 bytes, or as they are (the shell's
  // collector of a script's statements joins them so): the log's own flags say which part is which.
  const joined = (fd: 1 | 2, asBytes: boolean) =>
    log!
      .filter((p) => p[0] === fd)
      .map((p) => (asBytes && !p[2] ? Buffer.from(p[1]).toString('latin1') : p[1]))
      .join('');
  if (log && (joined(1, false) === result.stdout || (raw && joined(1, true) === result.stdout)) && joined(2, false) === result.stderr) return log;
  const parts: OutputPart[] = [];
  if (result.stdout) parts.push([1, result.stdout, raw]);
  if (result.stderr) parts.push([2, result.stderr, false]);
  return parts;
}

/** The result of one run followed by another's output: both streams, and their writes in order. */
export function followedBy(result: ExecResult, then: ExecResult): OrderedResult {
  return {
    ...result,
    stdout: `${result.stdout}${then.stdout}`,
    stderr: `${result.stderr}${then.stderr}`,
    jbLog: [...orderOf(result), ...orderOf(then)],
  };
}

/** A result's writes in order ({@link orderOf}), each message reworded by `words` (a shell's messages said as busybox's). */
export function rewordedWrites(result: ExecResult, words: (text: string) => string): OutputPart[] {
  return orderOf(result).map(([fd, text, raw]): OutputPart => (fd === 2 ? [2, words(text), raw] : [fd, text, raw]));
}

/**
 * The result with each of its messages reworded by `words` (a wrapper that says just-bash's
 * messages as busybox does), its writes' order kept.
 */
export async function rewordStderr(result: ExecResult, words: (text: string) => Promise<string>): Promise<OrderedResult> {
  const parts = await Promise.all(
    orderOf(result).map(async ([fd, text, raw]): Promise<OutputPart> => [fd, fd === 2 ? await words(text) : text, raw]),
  );
  const stderr = parts
    .filter((p) => p[0] === 2)
    .map((p) => p[1])
    .join('');
  return { ...result, stderr, ...(result.stdout && stderr ? { jbLog: parts } : { jbLog: undefined }) };
}

/**
 * busybox's words for a program an applet could not run (libbb's BB_EXECVP_or_die, xargs's own):
 * the applet runs its program through the shell, which says `sh: WORD: not found` (127) or
 * `sh: WORD: Permission denied` (126) when it cannot; `say` words the reason as the applet does
 * (`env: can't execute 'WORD': No such file or directory`). Any other result is the program's own.
 */
export async function execFailure(result: ExecResult, word: string, say: (why: string) => string): Promise<OrderedResult> {
  const why = result.exitCode === 127 ? 'No such file or directory' : result.exitCode === 126 ? 'Permission denied' : undefined;
  if (!why) return result;
  // The shell's own words are just-bash's (`bash: W: command not found`) until the exec's output is said as ash's.
  const quoted = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const line = new RegExp(
    `^(?:ba)?sh: ${quoted}: ${result.exitCode === 127 ? '(?:(?:command )?not found|No such file or directory)' : 'Permission denied'}\\n`,
    'm',
  );
  return rewordStderr(result, async (text) => text.replace(line, say(why)));
}
