import { posix } from 'node:path';
import type { TerminalSize } from '../guest/busybox-tty.js';
import type { GuestResult } from '../guest/guests.js';
import { completions, type DirectoryLister } from './line-completion.js';
import { LineEditor, LineHistory } from './line-editor.js';
import { nextKey } from './terminal-keys.js';

/**
 * Runs the script of one command line of a terminal session (`sh -c SCRIPT`) in the state the
 * previous lines left, on its terminal.
 */
export type LineRunner = (
  script: string,
  state: { environment: Record<string, string>; cwd: string; signal: AbortSignal; terminal: TerminalSize },
) => Promise<GuestResult>;

/** The variable a line's script sets last: present in the state it left unless the line ran `exit`. */
const statusVariable = '__reflex_status';

/** What busybox ash prints when it starts on a terminal (the test beds' busybox, LXD 5.0.2 and Incus 6.0.4). */
const banner = "\r\n\r\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) built-in shell (ash)\r\nEnter 'help' for a list of built-in commands.\r\n\r\n";

/** ash asks the terminal where its cursor is after each prompt; the terminal's answer comes back as input. */
const cursorQuery = '\x1b[6n';
// eslint-disable-next-line no-control-regex
const cursorReport = /\x1b\[\d+;\d+R/g;

/** How long busybox waits for the rest of an escape sequence before it takes the escape alone. */
const escapeWaitMs = 50;

/**
 * An interactive shell on a terminal (`lxc exec c -- sh` from a terminal: `interactive`, one
 * websocket both ways), as the test beds' busybox ash behaves on its pty: its banner, a prompt
 * `~ # ` naming the directory (`$` for a user other than root) followed by ash's cursor-position
 * query (not sent while typed input waits, as ash), the line edited as busybox's line editor does
 * (line-editor.ts: cursor keys, history, Ctrl-A/E/U/K/W, Tab completion over the guest's files,
 * wrapping at the terminal's width), Ctrl-C
 * (`^C`, a new prompt, `$?` 130), Ctrl-D on an empty line (a new line, the shell ends with the
 * last status), each line run when Enter comes with its output's newlines as CR LF, and `exit N`
 * ending the session with N. Each line runs as a script of its own in the state the previous left
 * (variables, directory); functions and aliases do not carry over. The terminal's size is the
 * exec request's and then the client's (window-resize); a resize while the editor waits for a key
 * redraws the line, as ash does on SIGWINCH.
 */
export class TerminalSession {
  private pending = '';
  private draining = false;
  private executing = false;
  private status = 0;
  private done = false;
  private environment: Record<string, string>;
  private cwd: string;
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
      runLine: LineRunner;
      /** Lists a directory of the guest (an absolute path), for Tab completion. */
      list: DirectoryLister;
      /** Bytes to the terminal. */
      write: (bytes: Buffer) => void;
      /** The shell ended with this code. */
      end: (code: number) => void;
      signal: AbortSignal;
    },
  ) {
    this.environment = { ...opts.environment };
    this.cwd = opts.cwd;
    this.drawnSize = { ...opts.size };
    this.write(banner);
    this.prompt();
  }

  /** Input from the terminal (keystrokes in raw mode, or pasted text). */
  input(bytes: Buffer): void {
    if (this.done) return;
    this.pending += bytes.toString('utf8').replace(cursorReport, '');
    clearTimeout(this.escapeTimer);
    void this.drain();
  }

  /** The client's window was resized (a `window-resize` control message). */
  resize(cols: number, rows: number): void {
    this.opts.size.cols = cols;
    this.opts.size.rows = rows;
    // While a line runs the signal goes to its program, not to the shell's editor.
    if (this.done || this.executing || !this.editor) return;
    if (this.drawnSize.cols === cols && this.drawnSize.rows === rows) return;
    this.drawnSize = { cols, rows };
    this.editor.setWidth(this.width());
  }

  private async drain(bareEscape = false): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.pending !== '' && !this.done) {
        const next = nextKey(this.pending, bareEscape);
        if (!next) {
          this.escapeTimer = setTimeout(() => void this.drain(true), escapeWaitMs).unref();
          return;
        }
        this.pending = this.pending.slice(next.length);
        const editor = this.editor!;
        const outcome = editor.key(next.key);
        if (outcome === 'complete') {
          const { word, kind } = editor.completionQuery();
          editor.complete(await completions(word, kind, this.environment.PATH, (dir) => this.opts.list(posix.resolve(this.cwd, dir))));
        } else if (outcome === 'entered') {
          this.editor = undefined;
          const line = editor.line;
          if (line.trim() !== '') await this.run(line);
          if (!this.done) this.prompt();
        } else if (outcome === 'interrupted') {
          // ash writes ^C and takes the SIGINT it raises: a new line, and $? is 130.
          this.write('^C\r\n');
          this.status = 130;
          this.prompt();
        } else if (outcome === 'end-of-input') {
          this.write('\r\n');
          return this.finish(this.status);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private async run(line: string): Promise<void> {
    this.executing = true;
    let result: GuestResult;
    try {
      // The line starts with the status the last left ($?), and ends saying its own.
      const script = `${this.status ? `(exit ${this.status})\n` : ''}${line}\n${statusVariable}=$?`;
      result = await this.opts.runLine(script, { environment: this.environment, cwd: this.cwd, signal: this.opts.signal, terminal: this.opts.size });
    } finally {
      this.executing = false;
    }
    const text = Buffer.concat([result.stdout, result.stderr]).toString('latin1').replace(/\r?\n/g, '\r\n');
    this.writeBytes(Buffer.from(text, 'latin1'));
    const after = result.env;
    if (!after || !(statusVariable in after)) return this.finish(result.code);
    this.status = Number(after[statusVariable]) || 0;
    const { [statusVariable]: _status, ...kept } = after;
    this.environment = kept;
    if (kept.PWD) this.cwd = kept.PWD;
  }

  /** The width the editor works with: `$COLUMNS` when the shell has it, else the terminal's (80 when unusable), as busybox. */
  private width(): number {
    const columns = this.environment.COLUMNS;
    const width = columns !== undefined ? parseInt(columns, 10) || 0 : this.opts.size.cols;
    return width <= 1 || width >= 30000 ? 80 : width;
  }

  private prompt(): void {
    const home = this.environment.HOME;
    const where = home && (this.cwd === home || this.cwd.startsWith(`${home}/`)) ? `~${this.cwd.slice(home.length)}` : this.cwd;
    this.drawnSize = { ...this.opts.size };
    this.editor = new LineEditor(`${where} ${this.opts.root ? '#' : '$'} `, this.width(), this.history, (text) => this.write(text));
    // ash asks where the cursor is only when no typed input is waiting (its answer would come after it).
    if (this.pending === '') this.write(cursorQuery);
  }

  private finish(code: number): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.escapeTimer);
    this.opts.end(code);
  }

  private write(text: string): void {
    this.writeBytes(Buffer.from(text, 'utf8'));
  }

  private writeBytes(bytes: Buffer): void {
    if (bytes.length > 0) this.opts.write(bytes);
  }
}
