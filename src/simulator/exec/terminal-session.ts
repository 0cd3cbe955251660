import { posix } from 'node:path';
import type { parse as parseScript } from 'just-bash';
import type { TerminalInput, TerminalSize } from '../guest/busybox-tty.js';
import type { GuestResult } from '../guest/guests.js';
import { syntaxErrorMessage } from '../guest/nested-shell.js';
import { wholeness, type ScriptSource, type ShellState } from '../guest/script-feed.js';
import { completions, type DirectoryLister } from './line-completion.js';
import { LineDiscipline, terminalBytes } from './line-discipline.js';
import { LineEditor, LineHistory } from './line-editor.js';
import { nextKey } from './terminal-keys.js';
import { sigint } from '../guest/guest-commands.js';

/**
 * Runs the session's shell once: `sh` on the session's terminal, reading the whole commands the
 * session hands it (`lines`), each asked for once the one before has run, and giving what it writes
 * to `output` as it goes. It ends with the shell (`exit`, the end of its lines). Or the exec's own
 * program (`su`, `sh -c sh`), on the terminal's `tty`, whose first shell started there reads `lines`.
 */
export type ShellRunner = (shell: {
  lines: ScriptSource;
  output: (written: Omit<GuestResult, 'code'>) => void;
  /** Ctrl-C while a line runs: an `interrupt` event (its programs die of SIGINT, the rest of the line is dropped). */
  interrupts: EventTarget;
  /** The terminal's input while a line runs, for the shell's `read`. */
  tty: TerminalInput;
}) => Promise<GuestResult>;

/** ash asks the terminal where its cursor is after each prompt; the terminal's answer comes back as input. */
const cursorQuery = '\x1b[6n';
// eslint-disable-next-line no-control-regex
const cursorReport = /\x1b\[\d+;\d+R/g;

/** How long busybox waits for the rest of an escape sequence before it takes the escape alone. */
const escapeWaitMs = 50;

/** The prompt ash shows for a command's next line while the command is not whole yet (PS2). */
const continuation = '> ';

/**
 * An interactive shell on a terminal (`lxc exec c -- sh` from a terminal: `interactive`, one
 * websocket both ways), as the test beds' busybox ash behaves on its pty: its banner, a prompt
 * `~ # ` naming the directory (`$` for a user other than root) followed by ash's cursor-position
 * query (not sent while typed input waits, as ash), the line edited as busybox's line editor does
 * (line-editor.ts: cursor keys, history, Ctrl-A/E/U/K/W, Tab completion over the guest's files,
 * wrapping at the terminal's width), Ctrl-C (`^C`, a new prompt, `$?` 130), Ctrl-D on an empty line
 * (a new line, the shell ends with the last status), and `exit N` ending the session with N.
 *
 * One shell runs for the whole session ({@link ShellRunner}), so what a line sets is there for the
 * next: variables, the directory, functions, aliases, traps (the EXIT trap runs when the shell
 * ends), `set` options. A line is handed to it when it is a whole command; one that leaves a
 * command open (`if true; then`, `f() {`, a quote) gets the continuation prompt `> ` and the next
 * line joins it (Ctrl-D there is ash's syntax error); a syntax error is ash's message and `$?` 2,
 * and the shell goes on. Ctrl-C while a line runs is echoed `^C`, ends the line's program (it dies
 * of SIGINT) and the rest of the line, and `$?` is 130; `history` lists the lines typed. Keys typed
 * while a line runs are the pty's (line-discipline.ts): echoed at once, read by the shell's `read`,
 * and what nothing read goes to the editor at the next prompt. What the
 * shell writes reaches the terminal in the order written, its newlines as CR LF. The terminal's
 * size is the exec request's and then the client's (window-resize); a resize while the editor
 * waits for a key redraws the line, as ash does on SIGWINCH.
 *
 * An exec of another program on a terminal (`lxc exec -t c -- su`, `sh -c 'cd /srv && sh'`) is a
 * session too, with no banner or prompt of its own: the program reads the pty (its `read`, `cat`),
 * Ctrl-C and the control socket's signals are its (`signals`), and the first shell it starts on the
 * terminal reads the session's lines as the bare shell would, until it ends; the exec ends with the
 * program's status.
 */
export class TerminalSession implements ScriptSource {
  private pending = '';
  private draining = false;
  /** A status for `$?` set between the shell's commands (Ctrl-C: 130, a syntax error: 2), given to the shell with its next command. */
  private status?: number;
  /** No more input is taken (the shell's input ended, or the session was ended from outside). */
  private done = false;
  /** The end was told (or the session was ended from outside). */
  private ended = false;
  /** The shell's state when it last asked for a command (its directory and variables). */
  private state?: ShellState;
  /** Lines handed to the shell so far. */
  private lines = 0;
  /** Ctrl-C while a line runs, for the shell running it. */
  private readonly interrupts = new EventTarget();
  /** The line running now was interrupted (Ctrl-C). */
  private interrupted = false;
  /**
   * The pty's own line discipline, which has the keys typed while a line runs (the editor has them
   * at a prompt). Its Ctrl-C ends the line's program (it dies of SIGINT); the shell drops the rest
   * of the line and reads the next.
   */
  private readonly tty = new LineDiscipline(
    (text) => this.write(text),
    () => {
      // The session's program runs with no shell of it reading the lines: it gets the SIGINT (its trap, or its end).
      if (this.opts.signals && this.shells === 0) return void this.opts.signals.dispatchEvent(new CustomEvent('signal', { detail: sigint }));
      this.interrupted = true;
      this.interrupts.dispatchEvent(new Event('interrupt'));
    },
  );
  /** The shells reading the session's lines, one started at another's prompt (`sh` typed there) counted too. */
  private shells = 0;
  /** The lines of a command not whole yet. */
  private open = '';
  /** The shell waits for its next command. */
  private waiting?: (part: string | undefined) => void;
  private parse?: typeof parseScript;
  private readonly history = new LineHistory();
  private editor?: LineEditor;
  private escapeTimer?: NodeJS.Timeout;
  /** The size the editor last drew with (busybox is only signalled when the size changes). */
  private drawnSize: TerminalSize;

  constructor(
    private readonly opts: {
      environment: Record<string, string>;
      cwd: string;
      root: boolean;
      /** The pty's size; `stty rows|cols` in a line changes it too. */
      size: TerminalSize;
      /**
       * The session's program is not a bare shell (`lxc exec -t c -- su`, `sh -c sh`): it runs on the
       * terminal, its first shell started there reads the lines, and Ctrl-C while none does, and
       * the control socket's signals, are signals to it (`signal` events here, as without a terminal).
       */
      signals?: EventTarget;
      runShell: ShellRunner;
      /** just-bash's parser, which the shell runs with: it says whether a line is a whole command. */
      parser: () => Promise<typeof parseScript>;
      /** Lists a directory of the guest (an absolute path), for Tab completion. */
      list: DirectoryLister;
      /** Bytes to the terminal. */
      write: (bytes: Buffer) => void;
      /** The shell ended with this code. */
      end: (code: number) => void;
      signal: AbortSignal;
    },
  ) {
    this.drawnSize = { ...opts.size };
    // A session ended from outside (a signal through the control socket) gives its shell no more lines.
    opts.signal.addEventListener('abort', () => this.giveUp(), { once: true });
    void opts
      .parser()
      .then((parse) => {
        this.parse = parse;
        return opts.runShell({ lines: this, output: (written) => this.output(written), interrupts: this.interrupts, tty: this.tty });
      })
      .then(
        (result) => {
          this.output(result);
          // A bare shell ends with a status set at its prompt; a program ends with its own.
          this.finish(this.opts.signals ? result.code : (this.status ?? result.code));
        },
        (err: unknown) => {
          this.write(`sh: ${(err as Error).message ?? String(err)}\r\n`);
          this.finish(2);
        },
      );
  }

  /** The shell's next command: asked for once it has run the last, in `state`; undefined ends it (Ctrl-D). */
  next(state?: ShellState): Promise<string | undefined> {
    if (state) this.state = state;
    if (this.done) return Promise.resolve(undefined);
    if (this.interrupted) {
      // ash ends the line its job died of SIGINT on, and $? is 130.
      this.interrupted = false;
      this.write('\r\n');
      this.status = 130;
    }
    // What was typed while the line ran and no program read, the editor reads as keys (and echoes again).
    this.pending = this.tty.take() + this.pending;
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.prompt();
      void this.drain();
    });
  }

  /** A shell reads the lines from now (the session's, or one started on its terminal). */
  shellStarted(): void {
    this.shells++;
  }

  /** A shell that read the lines ended (`exit`, Ctrl-D): the one or the program that started it has the terminal again. */
  shellEnded(): void {
    this.shells--;
  }

  /** The control socket's signals go to the session's program (it is not a bare shell): the `signals` it was given. */
  get takesSignals(): boolean {
    return this.opts.signals !== undefined;
  }

  /**
   * The session waits for the terminal: its editor for the next command, or a program of the line
   * (or the shell's `read`) in a read of it; or it is over. Between, the line runs, and what is
   * typed waits for a read that may come or not (a Ctrl-C then drops it, as the kernel's does).
   */
  readsTerminal(): boolean {
    return this.done || this.waiting !== undefined || this.tty.reading;
  }

  /** The lines typed so far, as the editor keeps them for the arrows (what `history` lists). */
  typed(): readonly string[] {
    return this.history.lines.slice(0, this.history.count);
  }

  /** Input from the terminal (keystrokes in raw mode, or pasted text). */
  input(bytes: Buffer): void {
    if (this.done) return;
    const text = bytes.toString('utf8').replace(cursorReport, '');
    // A line runs: the keys are the pty's, echoed and kept for a program that reads them.
    if (!this.editor && this.waiting === undefined) return this.tty.input(text);
    this.pending += text;
    clearTimeout(this.escapeTimer);
    void this.drain();
  }

  /** The client's window was resized (a `window-resize` control message). */
  resize(cols: number, rows: number): void {
    this.opts.size.cols = cols;
    this.opts.size.rows = rows;
    // While a line runs the signal goes to its program, not to the shell's editor.
    if (this.done || !this.editor) return;
    if (this.drawnSize.cols === cols && this.drawnSize.rows === rows) return;
    this.drawnSize = { cols, rows };
    this.editor.setWidth(this.width());
  }

  private async drain(bareEscape = false): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      // The editor takes the keys while it has the terminal; while a line runs the pty has them (input).
      while (this.pending !== '' && !this.done && this.editor) {
        const next = nextKey(this.pending, bareEscape);
        if (!next) {
          this.escapeTimer = setTimeout(() => void this.drain(true), escapeWaitMs).unref();
          return;
        }
        this.pending = this.pending.slice(next.length);
        const editor = this.editor;
        const outcome = editor.key(next.key);
        if (outcome === 'complete') {
          const { word, kind } = editor.completionQuery();
          editor.complete(await completions(word, kind, this.variable('PATH'), (dir) => this.opts.list(posix.resolve(this.cwd(), dir))));
        } else if (outcome === 'entered') {
          this.editor = undefined;
          this.entered(editor.line);
        } else if (outcome === 'interrupted') {
          // ash writes ^C and takes the SIGINT it raises: the command typed so far goes, a new line, and $? is 130.
          this.write('^C\r\n');
          this.open = '';
          this.status = 130;
          this.prompt();
        } else if (outcome === 'end-of-input' && this.open !== '') {
          // The end of input inside an open command: ash says what it expected, $? is 2, and it reads on.
          this.editor = undefined;
          this.syntaxError(this.open);
          this.open = '';
        } else if (outcome === 'end-of-input') {
          this.write('\r\n');
          this.editor = undefined;
          this.handOver(undefined);
          return;
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** A line ended with Enter: the command, once it is whole, goes to the shell. */
  private entered(line: string): void {
    if (this.open === '' && line.trim() === '') return this.prompt();
    const text = `${this.open}${line}\n`;
    const verdict = wholeness(this.parse!, text);
    if (verdict === 'open') {
      this.open = text;
      return this.prompt(continuation);
    }
    this.open = '';
    if (verdict === 'whole') {
      // Each command starts with as many newlines as lines came before it: the shell takes an
      // alias defined on an earlier line, as ash does, for it counts the line as a new one.
      const part = '\n'.repeat(this.lines) + text;
      this.lines += text.split('\n').length - 1;
      return this.handOver(part);
    }
    this.syntaxError(text);
  }

  /** A syntax error in `text`: ash says so, `$?` is 2, and it reads the next line. */
  private syntaxError(text: string): void {
    this.output({ stdout: Buffer.alloc(0), stderr: Buffer.from(syntaxErrorMessage(this.parse!, text, 'sh') ?? '', 'utf8') });
    this.status = 2;
    this.prompt();
  }

  /** Gives the shell its next command (undefined: its input ended), with a `$?` set since the last. */
  private handOver(part: string | undefined): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (this.status !== undefined && this.state) {
      this.state.lastExitCode = this.status;
      this.state.env.set('?', String(this.status));
      // Ending here, the shell ends with it (its last command's status is older).
      if (part !== undefined) this.status = undefined;
    }
    // Keys typed after the line, which the editor did not take, wait in the pty for what reads it.
    this.tty.preload(this.pending);
    this.pending = '';
    waiting?.(part);
  }

  /** The session was ended from outside (its exec ends it, with the signal's code): the shell gets no more lines. */
  private giveUp(): void {
    this.ended = true;
    this.done = true;
    clearTimeout(this.escapeTimer);
    // A `read` waiting for the terminal gets nothing more either.
    this.tty.interrupt();
    this.handOver(undefined);
  }

  /** What the shell wrote, to the terminal in the order written, with its newlines as CR LF. */
  private output(written: Omit<GuestResult, 'code'>): void {
    if (!this.done) this.writeBytes(terminalBytes(written));
  }

  private variable(name: string): string | undefined {
    return this.state ? this.state.env.get(name) : this.opts.environment[name];
  }

  private cwd(): string {
    return this.state?.cwd ?? this.opts.cwd;
  }

  /** The width the editor works with: `$COLUMNS` when the shell has it, else the terminal's (80 when unusable), as busybox. */
  private width(): number {
    const columns = this.variable('COLUMNS');
    const width = columns !== undefined ? parseInt(columns, 10) || 0 : this.opts.size.cols;
    return width <= 1 || width >= 30000 ? 80 : width;
  }

  /** A prompt and a new line to edit: PS1 (naming the directory) unless told another (the continuation). */
  private prompt(text = this.ps1()): void {
    this.drawnSize = { ...this.opts.size };
    this.editor = new LineEditor(text, this.width(), this.history, (written) => this.write(written));
    // ash asks where the cursor is only when no typed input is waiting (its answer would come after it).
    if (this.pending === '') this.write(cursorQuery);
  }

  private ps1(): string {
    const home = this.variable('HOME');
    const cwd = this.cwd();
    const where = home && (cwd === home || cwd.startsWith(`${home}/`)) ? `~${cwd.slice(home.length)}` : cwd;
    return `${where} ${this.opts.root ? '#' : '$'} `;
  }

  private finish(code: number): void {
    if (this.ended) return;
    this.ended = true;
    this.done = true;
    clearTimeout(this.escapeTimer);
    this.opts.end(code);
  }

  private write(text: string): void {
    this.writeBytes(Buffer.from(text, 'utf8'));
  }

  private writeBytes(bytes: Buffer): void {
    this.tty.wrote(bytes);
    if (bytes.length > 0) this.opts.write(bytes);
  }
}
