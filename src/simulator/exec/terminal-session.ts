import type { GuestResult } from '../guest/guests.js';

/** Runs one command line of a terminal session in the state the previous lines left. */
export type LineRunner = (line: string, state: { environment: Record<string, string>; cwd: string; signal: AbortSignal }) => Promise<GuestResult>;

/** The variable a line's script sets last: present in the state it left unless the line ran `exit`. */
export const statusVariable = '__reflex_status';

/** What busybox ash prints when it starts on a terminal (the test beds' busybox, LXD 5.0.2 and Incus 6.0.4). */
const banner = "\r\n\r\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) built-in shell (ash)\r\nEnter 'help' for a list of built-in commands.\r\n\r\n";

/** ash asks the terminal where its cursor is after each prompt; the terminal's answer comes back as input. */
const cursorQuery = '\x1b[6n';
// eslint-disable-next-line no-control-regex
const cursorReport = /\x1b\[\d+;\d+R/g;

/**
 * An interactive shell on a terminal (`lxc exec c -- sh` from a terminal: `interactive`, one
 * websocket both ways), as the test beds' busybox ash behaves on its pty: its banner, a prompt
 * `~ # ` naming the directory (`$` for a user other than root) followed by ash's cursor-position
 * query, the typed characters echoed, backspace, Ctrl-C (`^C`, a new prompt), Ctrl-D on an empty
 * line (ends the shell), each line run when Enter comes with its output's newlines as CR LF, and
 * `exit N` ending the session with N. Each line runs as a script of its own in the state the
 * previous left (variables, directory); functions and aliases do not carry over.
 */
export class TerminalSession {
  private line = '';
  private pending = '';
  private running = false;
  private status = 0;
  private done = false;
  private environment: Record<string, string>;
  private cwd: string;

  constructor(
    private readonly opts: {
      environment: Record<string, string>;
      cwd: string;
      root: boolean;
      runLine: LineRunner;
      /** Bytes to the terminal. */
      write: (bytes: Buffer) => void;
      /** The shell ended with this code. */
      end: (code: number) => void;
      signal: AbortSignal;
    },
  ) {
    this.environment = { ...opts.environment };
    this.cwd = opts.cwd;
    this.write(banner);
    this.prompt();
  }

  /** Input from the terminal (keystrokes in raw mode, or pasted text). */
  input(bytes: Buffer): void {
    if (this.done) return;
    this.pending += bytes.toString('utf8').replace(cursorReport, '');
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.pending !== '' && !this.done) {
        const ch = this.pending[0]!;
        this.pending = this.pending.slice(1);
        if (ch === '\r' || ch === '\n') {
          this.write('\r\n');
          const line = this.line;
          this.line = '';
          if (line.trim() !== '') await this.run(line);
          if (!this.done) this.prompt();
        } else if (ch === '\x7f' || ch === '\b') {
          if (this.line !== '') {
            this.line = this.line.slice(0, -1);
            this.write('\b \b');
          }
        } else if (ch === '\x03') {
          this.line = '';
          this.write('^C\r\n');
          this.prompt();
        } else if (ch === '\x04') {
          if (this.line === '') return this.finish(this.status);
        } else if (ch >= ' ' || ch === '\t') {
          this.line += ch;
          this.write(ch);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async run(line: string): Promise<void> {
    const result = await this.opts.runLine(line, { environment: this.environment, cwd: this.cwd, signal: this.opts.signal });
    const text = Buffer.concat([result.stdout, result.stderr]).toString('latin1').replace(/\r?\n/g, '\r\n');
    this.writeBytes(Buffer.from(text, 'latin1'));
    const after = result.env;
    if (!after || !(statusVariable in after)) return this.finish(result.code);
    this.status = Number(after[statusVariable]) || 0;
    const { [statusVariable]: _status, ...kept } = after;
    this.environment = kept;
    if (kept.PWD) this.cwd = kept.PWD;
  }

  private prompt(): void {
    const home = this.environment.HOME;
    const where = home && (this.cwd === home || this.cwd.startsWith(`${home}/`)) ? `~${this.cwd.slice(home.length)}` : this.cwd;
    this.write(`${where} ${this.opts.root ? '#' : '$'} ${cursorQuery}`);
  }

  private finish(code: number): void {
    if (this.done) return;
    this.done = true;
    this.opts.end(code);
  }

  private write(text: string): void {
    this.writeBytes(Buffer.from(text, 'utf8'));
  }

  private writeBytes(bytes: Buffer): void {
    if (bytes.length > 0) this.opts.write(bytes);
  }
}
