import type { ExecResult, parse as parseScript } from 'just-bash';
import { followedBy } from './program-output.js';

/** Stdin as it arrives: its bytes, then its end (an exec's fd 0 that has not ended when the command starts). */
export interface StdinPipe {
  /** `take` gets every chunk (those that came already first), `end` is called once it ended. */
  attach(take: (bytes: Buffer) => void, end: () => void): void;
}

/**
 * The script of a shell that reads it from a pipe as it arrives (`… | lxc exec c -- sh`, a client
 * that writes a command, reads its answer, writes the next): busybox's ash reads its stdin as it
 * comes and runs each command once its line is whole, so a command's output is out before the next
 * line is sent. The bytes are cut at line ends into whole commands: a part is handed over when it
 * parses and a line after it would start a command of its own (not inside an open here-document,
 * after a `|`, `&&` or a `\` at the line's end, nor inside an open `if`, quote or brace). A syntax
 * error that no later line can mend is handed over at once, after the whole commands before its
 * line: the shell meets it there and ends, as ash does.
 */
export class ScriptFeed implements ScriptSource {
  /** Bytes not handed over yet. */
  private pending = Buffer.alloc(0);
  private ended = false;
  /** Lines handed over so far: each part starts with as many newlines, so the shell's line numbers run on. */
  private lines = 0;
  private readonly parts: string[] = [];
  private last?: string;
  private waiting?: (part: string | undefined) => void;

  /** @param parse just-bash's parser (loaded with the guest's shell). */
  constructor(
    private readonly parse: typeof parseScript,
    pipe: StdinPipe,
  ) {
    pipe.attach(
      (bytes) => this.push(bytes),
      () => this.end(),
    );
  }

  /** Bytes that arrived on stdin. */
  private push(bytes: Buffer): void {
    if (this.ended || bytes.length === 0) return;
    this.pending = Buffer.concat([this.pending, bytes]);
    const end = this.pending.lastIndexOf(0x0a);
    if (end < 0) return;
    const text = utf8(this.pending.subarray(0, end + 1));
    const verdict = wholeness(this.parse, text);
    if (verdict === 'open') return;
    this.pending = this.pending.subarray(end + 1);
    if (verdict === 'whole') return this.handOver(text);
    // A syntax error no later line can mend: the whole commands before its line run, then the
    // shell meets it and ends (ash reads no further).
    const split = splitAt(this.parse, text, verdict);
    if (split) {
      this.handOver(split[0]);
      this.handOver(text.slice(split[0].length));
    } else this.handOver(text);
    this.end();
  }

  /** Stdin ended (or the command was killed): what is left is the last part. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    if (rest.length > 0) this.handOver(utf8(rest));
    this.deliver();
  }

  /** The next part of the script, or undefined once the input ended and every part was taken. */
  next(): Promise<string | undefined> {
    const part = this.parts.shift();
    if (part !== undefined || this.ended) return Promise.resolve(this.taken(part));
    return new Promise((resolve) => (this.waiting = (next) => resolve(this.taken(next))));
  }

  /** The last part the shell took, as taken (a syntax error's line and column are in it). */
  get lastPart(): string | undefined {
    return this.last;
  }

  private taken(part: string | undefined): string | undefined {
    if (part !== undefined) this.last = part;
    return part;
  }

  private handOver(text: string): void {
    const before = this.lines;
    this.lines += text.split('\n').length - 1;
    // Blank lines only: nothing to run, their lines counted.
    if (text.trim() === '') return;
    this.parts.push('\n'.repeat(before) + text);
    this.deliver();
  }

  private deliver(): void {
    const waiting = this.waiting;
    if (!waiting || (this.parts.length === 0 && !this.ended)) return;
    this.waiting = undefined;
    waiting(this.parts.shift());
  }
}

/**
 * A whole script cut before the line of a syntax error no later line mends, when whole commands
 * come before that line: ash runs those before it meets the error (just-bash would parse the whole
 * script first and run none). A script left open at its end (an `if` without `fi`) is cut before
 * the line of the command it never ends, which the patched parser names on its error
 * (`jbStatementLine`, patches/README.md 74). The rest keeps its lines' numbers (it starts with as
 * many newlines).
 */
function splitAtSyntaxError(parse: typeof parseScript, script: string): [string, string] | undefined {
  const text = script.endsWith('\n') ? script : `${script}\n`;
  const verdict = wholeness(parse, text);
  if (typeof verdict === 'number') return splitAt(parse, script, verdict);
  if (verdict === 'whole') return undefined;
  const opened = openedAt(parse, text);
  return opened === undefined ? undefined : splitAt(parse, script, opened);
}

/**
 * The line the command a script leaves open starts on: the top-level statement its parse failed in,
 * or, for a quote the lexer found unclosed, the line the quote opens on ({@link splitAt} keeps it
 * only where the lines before it are whole commands).
 */
function openedAt(parse: typeof parseScript, text: string): number | undefined {
  try {
    parse(text);
  } catch (err) {
    const { jbStatementLine, line } = err as { jbStatementLine?: unknown; line?: unknown };
    const at = jbStatementLine ?? line;
    return typeof at === 'number' ? at : undefined;
  }
  return undefined;
}

/** The text cut before `line`: the lines before it (when they are whole commands) and the rest, padded to keep its lines' numbers. */
function splitAt(parse: typeof parseScript, text: string, line: number): [string, string] | undefined {
  const head = text
    .split('\n')
    .slice(0, line - 1)
    .join('\n');
  if (head.trim() === '' || wholeness(parse, `${head}\n`) !== 'whole') return undefined;
  return [`${head}\n`, '\n'.repeat(line - 1) + text.slice(head.length + 1)];
}

/**
 * Whether a text of whole lines is whole commands: it parses, and a line after it is a statement of
 * its own (inside an open here-document, a pipeline or a `\` continued line it would be absorbed);
 * or open, waiting for lines that may close it (an `if`, a quote, a brace); or a syntax error at a
 * line of its own that no later line mends (its number).
 */
export function wholeness(parse: typeof parseScript, text: string): 'whole' | 'open' | number {
  let statements: number;
  try {
    statements = parse(text).statements.length;
  } catch (err) {
    const { line, message } = err as { line?: unknown; message?: unknown };
    const lines = text.split('\n').length - 1;
    const atEnd = typeof line !== 'number' || line > lines || /\bEOF\b|end of file|missing '\)\)'/i.test(String(message));
    return atEnd ? 'open' : line;
  }
  try {
    return parse(`${text}:\n`).statements.length === statements + 1 ? 'whole' : 'open';
  } catch {
    return 'open';
  }
}

/** Bytes as the shell reads its script: UTF-8 where they are valid UTF-8, else one character per byte. */
export function utf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

/**
 * The interpreter's state as the patched interpreter hands it to `next` (live: a status set on it is
 * the shell's `$?`): its directory, variables and last status.
 */
export interface ShellState {
  cwd: string;
  env: Map<string, string>;
  lastExitCode: number;
}

/** A shell's script as it comes, in whole commands: the next part once the shell has run the last (in `state`), or undefined at its end. */
export interface ScriptSource {
  next(state?: ShellState): Promise<string | undefined>;
  /** The last part handed over, as handed over (a syntax error's line and column are in it). */
  readonly lastPart?: string;
  /** Whether what is left of the part handed last is dropped (a terminal's line interrupted by Ctrl-C). */
  cut?(): boolean;
  /** The lines typed so far, oldest first (a terminal's history, which `history` lists). */
  typed?(): readonly string[];
  /** A shell started reading these lines, and one ended: the program that started it goes on (a terminal's lines). */
  shellStarted?(): void;
  shellEnded?(): void;
}

/** The patched interpreter's `jbStream` option: more of the script when its statements are run, and what the run wrote before it asks. */
export interface ScriptStream extends ScriptSource {
  flush(written: { stdout: string; stderr: string }): void;
}

/**
 * Runs a script given whole as ash meets a syntax error in it: without one, at once; with one no
 * later line mends ({@link splitAtSyntaxError}), the lines before it first, then the patched
 * interpreter asks `stream` for the rest and meets the error there. What the first part wrote goes
 * before the run's result, or, given `flush`, to it as each statement ends (a command on a
 * terminal: what it wrote shows before it waits for a key); the result then holds only the rest.
 */
export async function runToSyntaxError(
  parse: typeof parseScript,
  script: string,
  run: (script: string, stream?: ScriptStream) => Promise<ExecResult>,
  flush?: ScriptStream['flush'],
): Promise<ExecResult> {
  const split = splitAtSyntaxError(parse, script);
  if (!split && !flush) return run(script);
  let before: ExecResult = { stdout: '', stderr: '', exitCode: 0 };
  let rest: string | undefined = split?.[1];
  const ran = await run(split?.[0] ?? script, {
    next: () => {
      const part = rest;
      rest = undefined;
      return Promise.resolve(part);
    },
    flush: flush ?? ((written) => (before = followedBy(before, written as ExecResult))),
  });
  if (flush) return ran;
  // The run's accounting covers its last part only: it goes. Its writes follow the first part's, in order.
  const { internalOutputAccounting: _accounting, ...kept } = ran as ExecResult & { internalOutputAccounting?: unknown };
  return { ...kept, ...followedBy(before, ran), exitCode: ran.exitCode };
}
