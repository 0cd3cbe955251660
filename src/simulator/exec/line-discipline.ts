import type { TerminalInput } from '../guest/busybox-tty.js';
import type { GuestResult } from '../guest/guests.js';

/** Linux's n_tty settings on the beds' ptys (`stty -a`): isig, icrnl, icanon, echo, echoe, echoke, echoctl; VINTR ^C, VERASE ^?, VKILL ^U, VWERASE ^W, VEOF ^D. */
const interruptKey = '\x03';
const erase = '\x7f';
const kill = '\x15';
const wordErase = '\x17';
const endOfInput = '\x04';

/** The pty's output processing (n_tty's onlcr): each newline written goes out as CR LF, a CR written before it kept (`a\r\n`: `a\r\r\n`). */
function onlcr(text: string): string {
  return text.replace(/\n/g, '\r\n');
}

/** What a command wrote, as its terminal shows it: both streams in the order written, through {@link onlcr}. */
export function terminalBytes(written: Omit<GuestResult, 'code'>): Buffer {
  return Buffer.from(onlcr((written.terminal ?? Buffer.concat([written.stdout, written.stderr])).toString('latin1')), 'latin1');
}

/** A character a word erase takes as part of a word (n_tty: alphanumerics and `_`). */
const wordChar = /[\p{L}\p{N}_]/u;

/** How echoctl echoes a control character: `^` and its letter (DEL as `^?`); tab and newline as they are. */
function echoed(c: string): string {
  const code = c.charCodeAt(0);
  if (c === '\t') return c;
  if (c === '\n') return '\r\n';
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return '^?';
  return c;
}

/** The columns a character's echo took, which erasing it takes back. */
const columns = (c: string): number => echoed(c).length;

/** The kernel's `iscntrl` (lib/ctype.c): bytes below 32 and DEL; those from 128 are not. */
const isControl = (byte: number): boolean => byte < 0x20 || byte === 0x7f;

/**
 * n_tty's column after `bytes` go out with opost and onlcr (its `column`): CR and NL to the start,
 * a tab to the next multiple of 8, a backspace one back, a control character nowhere, any other
 * byte one on (iutf8 is off on the beds: each byte of a UTF-8 character takes one).
 */
function columnAfter(column: number, bytes: Buffer): number {
  for (const byte of bytes) {
    if (byte === 0x0a || byte === 0x0d) column = 0;
    else if (byte === 0x09) column = (column | 7) + 1;
    else if (byte === 0x08) column = Math.max(0, column - 1);
    else if (!isControl(byte)) column++;
  }
  return column;
}

/**
 * The pty's line discipline while a line of a terminal session runs (the editor has the terminal
 * in raw mode only while it edits), or a command other than a bare shell runs on a terminal
 * (`lxc exec -t c -- sh -c …`): what is typed is echoed at once and kept as the kernel keeps
 * it, in lines ended by Enter (CR read as NL) and edited with the erase, kill and word-erase
 * characters, for the program that reads the terminal ({@link TerminalInput}: the shell's `read`),
 * and whatever no program read goes to the editor at the next prompt ({@link take}), which echoes
 * it again, as busybox's editor does on the beds. Ctrl-C is echoed `^C`, flushes what was typed,
 * interrupts a waiting read and sends SIGINT to the foreground job (`sigint`).
 */
export class LineDiscipline implements TerminalInput {
  /** Reads' worth not read yet: lines ended by Enter, what Ctrl-D pushed (`''`: the end of input), keys typed in non-canonical mode. */
  private readonly ready: string[] = [];
  /** The line being typed (canonical mode). */
  private line = '';
  /** The termios a waiting read set; between reads, the pty's defaults. */
  private mode = { canonical: true, echo: true };
  private waiting?: (text: string | undefined) => void;
  /** A waiting read's time limit (`read -t`). */
  private timer?: NodeJS.Timeout;
  /** Ctrl-C typed so far ({@link interrupts}). */
  private interruptsTyped = 0;
  /** The echoes of the keys being taken ({@link input}). */
  private echoes = '';
  /** The column of the terminal's cursor after what went out so far ({@link wrote}). */
  private column = 0;
  /** The column the line being typed started at (n_tty's `canon_column`), which a tab's erase counts from. */
  private lineColumn = 0;

  /** `write`: text to the terminal (the echo); `sigint`: Ctrl-C's SIGINT, for the job running on the terminal. */
  constructor(
    private readonly write: (text: string) => void,
    private readonly sigint: () => void,
  ) {}

  read(mode: { canonical: boolean; echo: boolean; prompt?: string; timeoutMs?: number }): Promise<string | undefined> {
    if (mode.prompt) this.write(onlcr(mode.prompt));
    return new Promise((resolve) => {
      const now = this.available(mode.canonical);
      if (now !== undefined) return resolve(now);
      this.mode = { canonical: mode.canonical, echo: mode.echo };
      this.waiting = resolve;
      if (mode.timeoutMs !== undefined) this.timer = setTimeout(() => this.resolve(''), mode.timeoutMs).unref();
    });
  }

  get interrupts(): number {
    return this.interruptsTyped;
  }

  /** A read waits for the terminal: whatever is typed now goes to it. */
  get reading(): boolean {
    return this.waiting !== undefined;
  }

  /**
   * Bytes went out to the terminal (the shell's, a program's, the echoes): where its cursor is now.
   * A CR or NL among them also moves the start of the line being typed to the first column, as n_tty's output does.
   */
  wrote(bytes: Buffer): void {
    this.column = columnAfter(this.column, bytes);
    if (bytes.includes(0x0a) || bytes.includes(0x0d)) this.lineColumn = 0;
  }

  unread(text: string): void {
    if (text !== '') this.ready.unshift(text);
  }

  /**
   * Keys typed at the terminal while no editor has it, as n_tty takes one write of them: their
   * echoes go out once all are taken, and so does a waiting read wake; a Ctrl-C among them drops
   * the echoes not out yet with what was typed (its `^C` goes at once), so a read waiting gets
   * nothing of a line typed with a Ctrl-C after it (`y⏎^C` in one write echoes `^C` alone).
   */
  input(text: string): void {
    const [first, ...afterInterrupts] = text.split(interruptKey);
    this.echoes = '';
    this.receive(first!);
    for (const typed of afterInterrupts) {
      this.interruptsTyped++;
      this.echoes = '';
      this.write('^C');
      this.interrupt();
      this.sigint();
      this.receive(typed);
    }
    const echoes = this.echoes;
    this.echoes = '';
    if (echoes !== '') this.write(echoes);
    if (this.waiting) {
      const now = this.available(this.mode.canonical);
      if (now !== undefined) this.resolve(now);
    }
  }

  /** Keys between two Ctrl-C, their echoes kept for the end of the write. */
  private receive(text: string): void {
    for (const typed of text) {
      const c = typed === '\r' ? '\n' : typed;
      if (!this.mode.canonical) {
        this.ready.push(c);
        this.echo(echoed(c));
      } else if (c === '\n') {
        this.ready.push(`${this.line}\n`);
        this.line = '';
        // echonl is off: a newline is echoed only with echo.
        this.echo('\r\n');
      } else if (c === endOfInput) {
        this.ready.push(this.line);
        this.line = '';
      } else if (c === erase) {
        this.eraseBack(this.line.length > 0 ? 1 : 0);
      } else if (c === kill) {
        this.eraseBack([...this.line].length);
      } else if (c === wordErase) {
        this.eraseBack(wordLength([...this.line]));
      } else {
        if (this.line === '' && this.mode.echo) this.lineColumn = this.echoColumn();
        this.line += c;
        this.echo(echoed(c));
      }
    }
  }

  /** What was typed goes (SIGINT flushes it), and a waiting read is interrupted (the session ended from outside, or Ctrl-C). */
  interrupt(): void {
    this.ready.length = 0;
    this.line = '';
    this.resolve(undefined);
  }

  /** Keys the editor left when its line ended: already in the kernel's buffer (unechoed), a read gets them at once. */
  preload(text: string): void {
    if (text !== '') this.ready.push(text.replace(/\r/g, '\n'));
  }

  /** What was typed and not read, for the editor (it reads it as keys); Ctrl-D's pushes are gone. */
  take(): string {
    const rest = this.ready.join('') + this.line;
    this.ready.length = 0;
    this.line = '';
    return rest;
  }

  /** The lines typed (and Ctrl-D's pushes) go unread; the line being typed stays: a terminal no program reads (the console's). */
  dropLines(): void {
    this.ready.length = 0;
  }

  /** What one read gets now, if anything: a line (or push) in canonical mode, every key typed else. */
  private available(canonical: boolean): string | undefined {
    if (canonical) return this.ready.length > 0 ? this.ready.shift() : undefined;
    const all = this.ready.join('') + this.line;
    if (all === '') return undefined;
    this.ready.length = 0;
    this.line = '';
    return all;
  }

  private resolve(text: string | undefined): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    clearTimeout(this.timer);
    this.mode = { canonical: true, echo: true };
    waiting?.(text);
  }

  /**
   * Erases the last `n` characters of the line, each echoed back over as echoe and echoke do
   * (`\b \b` a column), a tab with the backspaces back to where it started.
   */
  private eraseBack(n: number): void {
    const chars = [...this.line];
    for (let i = 0; i < n; i++) {
      const c = chars.pop()!;
      this.echo(c === '\t' ? '\b'.repeat(this.tabWidth(chars)) : '\b \b'.repeat(columns(c)));
    }
    this.line = chars.join('');
  }

  /**
   * The columns a tab typed after `before` took, as n_tty's eraser counts them: from the tab before
   * it, or from the column the line started at, each byte typed since a column (a control
   * character's echo two), to the next multiple of 8; never more than the cursor has.
   */
  private tabWidth(before: string[]): number {
    let counted = 0;
    let afterTab = false;
    for (let i = before.length - 1; i >= 0 && !afterTab; i--) {
      if (before[i] === '\t') afterTab = true;
      else for (const byte of Buffer.from(before[i]!, 'utf8')) counted += isControl(byte) ? 2 : 1;
    }
    if (!afterTab) counted += this.lineColumn;
    return Math.min(8 - (counted & 7), this.echoColumn());
  }

  /** The cursor's column once the echoes being taken are out. */
  private echoColumn(): number {
    return columnAfter(this.column, Buffer.from(this.echoes, 'utf8'));
  }

  private echo(text: string): void {
    if (this.mode.echo) this.echoes += text;
  }
}

/** How many characters a word erase takes from the end of `chars`: what is not a word's, then the word (n_tty's WERASE). */
function wordLength(chars: string[]): number {
  let n = 0;
  let seenWord = false;
  for (let i = chars.length - 1; i >= 0; i--) {
    const inWord = wordChar.test(chars[i]!);
    if (inWord) seenWord = true;
    else if (seenWord) break;
    n++;
  }
  return n;
}
