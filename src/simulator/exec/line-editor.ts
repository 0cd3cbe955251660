import { completionWord, matchColumns, quoteSpecial, type CompletionKind } from './line-completion.js';
import type { EditorKey } from './terminal-keys.js';

/** What a key did to the line being edited (`complete`: a first Tab, whose matches the caller finds, line-completion.ts). */
export type EditorOutcome = 'editing' | 'entered' | 'interrupted' | 'end-of-input' | 'complete';

/** Lines the shell keeps for the arrows (busybox's default history size), oldest first. */
export class LineHistory {
  /** One slot past the last line: what was being typed before moving up. */
  readonly lines: string[] = [];
  count = 0;

  constructor(private readonly max = 255) {}

  /** Keeps an entered line, unless it is empty or the same as the last. */
  remember(line: string): void {
    if (line === '' || (this.count > 0 && this.lines[this.count - 1] === line)) return;
    if (this.count >= this.max) {
      this.lines.shift();
      this.count--;
    }
    this.lines[this.count++] = line;
    this.lines.length = this.count;
  }
}

/**
 * Editing one input line on a terminal the way busybox 1.35's line editor (`read_line_input`,
 * used by ash) does, byte for byte in what it writes: the prompt, each typed character, and for
 * every move the cursor controls it sends (`\b` for up to four columns back, `ESC[nD` beyond,
 * `ESC[nA` and CR to go up over wrapped rows, `ESC[J` to clear what follows). It keeps the
 * terminal's column and row as busybox counts them, so a line longer than the terminal wraps and
 * is redrawn as there. Keys: Enter; backspace; Delete and Ctrl-D (delete under the cursor, Ctrl-D
 * on an empty line is end of input); left/right, Ctrl-B/Ctrl-F; Home/End, Ctrl-A/Ctrl-E;
 * Ctrl-Left/Right and Alt-b/Alt-f (by words); up/down, Ctrl-P/Ctrl-N (history, the line being
 * left kept in its slot as busybox does); Ctrl-U (delete before the cursor), Ctrl-K (after),
 * Ctrl-W (the word before, to a blank), Alt-Backspace (the word before, to a blank or
 * punctuation, as Alt-b moves) and Alt-d (the word after, as Alt-f moves); Ctrl-L (clear the screen); Ctrl-C (interrupt); Tab: completion (the caller finds the
 * matches of {@link completionQuery}, {@link complete} puts them in), a second Tab lists them.
 * Ctrl-R, like any control key it does not know, does nothing: the test beds' busybox-static is
 * built without FEATURE_REVERSE_SEARCH, so it has no `(reverse-i-search)` either.
 */
export class LineEditor {
  private chars: string[] = [];
  private cursor = 0;
  private x = 0;
  private y = 0;
  private readonly promptWidth: number;

  constructor(
    private readonly prompt: string,
    private width: number,
    private readonly history: LineHistory,
    private readonly write: (text: string) => void,
  ) {
    this.promptWidth = [...prompt].length;
    this.current = history.count;
    this.flushed(() => this.putPrompt());
  }

  /** What the key being taken wrote so far: busybox's stdout is a buffered stream it flushes before it reads the next key. */
  private written = '';

  private out(text: string): void {
    this.written += text;
  }

  /**
   * Runs one step of the editor (a prompt, a key, a completion, a redraw) and writes what it put
   * out in one write, as busybox does: a key's echo and the wrap or redraw after it reach the
   * terminal together, never a part of them before the rest.
   */
  private flushed<T>(step: () => T): T {
    try {
      return step();
    } finally {
      const text = this.written;
      this.written = '';
      if (text !== '') this.write(text);
    }
  }

  /** The history slot being edited (history.count: the new line). */
  private current: number;

  /** Whether the last key was a Tab, and what it found: a second Tab lists them. */
  private lastWasTab = false;
  private matches: string[] = [];

  /** What the Tab just typed completes: the word before the cursor and its kind. */
  completionQuery(): { word: string; kind: CompletionKind } {
    return completionWord(this.chars.slice(0, this.cursor).join(''));
  }

  /**
   * Puts in what a Tab found (`input_tab`): one match whole (a blank after it unless it is a
   * directory), several the part they share with the bell, none the bell; the line is redrawn
   * with the cursor after what was put in.
   */
  complete(found: { matches: string[]; prefixLength: number }): void {
    this.flushed(() => this.putCompletion(found));
  }

  private putCompletion(found: { matches: string[]; prefixLength: number }): void {
    this.matches = found.matches;
    let chosen: string;
    if (found.matches.length === 1) {
      this.lastWasTab = false;
      chosen = quoteSpecial(found.matches[0]!);
      if (!chosen.endsWith('/')) chosen += ' ';
    } else {
      this.out('\x07');
      if (found.matches.length === 0) return;
      const first = [...found.matches[0]!];
      let shared = 0;
      while (shared < first.length && found.matches.every((m) => [...m][shared] === first[shared])) shared++;
      if (shared === 0) return;
      chosen = quoteSpecial(first.slice(0, shared).join(''));
    }
    const added = [...chosen].slice(found.prefixLength);
    this.chars.splice(this.cursor, 0, ...added);
    const at = this.cursor + added.length;
    this.redraw(this.y, this.chars.length - at);
  }

  /** The line as typed so far. */
  get line(): string {
    return this.chars.join('');
  }

  /** The terminal has a new width: the line is redrawn from the row the cursor is on, as busybox does on SIGWINCH. */
  setWidth(width: number): void {
    this.width = width;
    const row = Math.floor((this.cursor + this.promptWidth) / width);
    this.flushed(() => this.redraw(Math.max(row, this.y), this.chars.length - this.cursor));
  }

  /** Applies one key. */
  key(key: EditorKey): EditorOutcome {
    return this.flushed(() => this.takeKey(key));
  }

  private takeKey(key: EditorKey): EditorOutcome {
    const tabBefore = this.lastWasTab;
    if (!('char' in key && key.char === '\t')) this.lastWasTab = false;
    if ('name' in key) {
      switch (key.name) {
        case 'up':
          if (this.previous()) this.rewrite();
          else this.out('\x07');
          break;
        case 'down':
          if (this.next()) this.rewrite();
          break;
        case 'left':
          this.backward(1);
          break;
        case 'right':
          this.forward();
          break;
        case 'home':
          this.backward(this.cursor);
          break;
        case 'end':
          this.putTillEnd();
          break;
        case 'delete':
          this.deleteHere();
          break;
        case 'word-left':
          this.wordLeft();
          break;
        case 'word-right':
          this.wordRight();
          break;
        case 'delete-word-left': {
          const from = this.cursor;
          this.wordLeft();
          for (let n = from - this.cursor; n > 0; n--) this.deleteHere();
          break;
        }
        case 'delete-word-right': {
          const from = this.cursor;
          this.wordRight();
          const n = this.cursor - from;
          this.backward(n);
          for (let k = 0; k < n; k++) this.deleteHere();
          break;
        }
        case 'ignored':
          break;
      }
      return 'editing';
    }
    const c = key.char;
    switch (c) {
      case '\r':
      case '\n':
        this.goToNewLine();
        this.history.remember(this.line);
        return 'entered';
      case '\x01':
        this.backward(this.cursor);
        break;
      case '\x02':
        this.backward(1);
        break;
      case '\x03':
        this.chars = [];
        return 'interrupted';
      case '\x04':
        if (this.chars.length === 0) return 'end-of-input';
        this.deleteHere();
        break;
      case '\x05':
        this.putTillEnd();
        break;
      case '\x06':
        this.forward();
        break;
      case '\x08':
      case '\x7f':
        this.backspace();
        break;
      case '\t':
        if (!tabBefore) {
          this.lastWasTab = true;
          return 'complete';
        }
        if (this.matches.length > 0) {
          const at = this.cursor;
          this.goToNewLine();
          this.out(matchColumns(this.matches, this.width));
          this.redraw(0, this.chars.length - at);
        }
        break;
      case '\x0b':
        this.chars.length = this.cursor;
        this.out('\x1b[J');
        break;
      case '\x0c':
        this.out('\x1b[H\x1b[J');
        this.redraw(0, this.chars.length - this.cursor);
        break;
      case '\x0e':
        if (this.next()) this.rewrite();
        break;
      case '\x10':
        if (this.previous()) this.rewrite();
        break;
      case '\x15':
        if (this.cursor > 0) {
          this.chars = this.chars.slice(this.cursor);
          this.redraw(this.y, this.chars.length);
        }
        break;
      case '\x17':
        while (this.cursor > 0 && isSpace(this.chars[this.cursor - 1]!)) this.backspace();
        while (this.cursor > 0 && !isSpace(this.chars[this.cursor - 1]!)) this.backspace();
        break;
      default:
        if (c < ' ') break;
        this.insert(c);
    }
    return 'editing';
  }

  private insert(c: string): void {
    if (this.cursor === this.chars.length) {
      this.chars.push(c);
      this.putGlyph();
      return;
    }
    this.chars.splice(this.cursor, 0, c);
    const after = this.cursor + 1;
    this.putTillEnd();
    this.backward(this.cursor - after);
  }

  /** Moves to the previous history line, keeping the edited one in its slot; false (with a bell) at the first. */
  private previous(): boolean {
    if (this.current === 0) {
      this.out('\x07');
      return false;
    }
    this.keepEdited();
    this.current--;
    return true;
  }

  private next(): boolean {
    if (this.current >= this.history.count) {
      this.out('\x07');
      return false;
    }
    this.keepEdited();
    this.current++;
    return true;
  }

  private keepEdited(): void {
    if (this.chars.length > 0) this.history.lines[this.current] = this.line;
  }

  /** Shows the history line selected, the cursor at its end. */
  private rewrite(): void {
    this.chars = [...(this.history.lines[this.current] ?? '')];
    this.redraw(this.y, 0);
  }

  private putPrompt(): void {
    this.out(this.prompt);
    this.cursor = 0;
    this.y = Math.floor(this.promptWidth / this.width);
    this.x = this.promptWidth % this.width;
  }

  /** Writes the character under the cursor and moves past it; past the last column busybox forces a new row with CR LF. */
  private putGlyph(): void {
    const c = this.chars[this.cursor] ?? ' ';
    if (this.cursor < this.chars.length) {
      this.cursor++;
      this.x++;
    }
    this.out(c);
    if (this.x >= this.width) {
      this.out('\r\r\n');
      this.y++;
      this.x = 0;
    }
  }

  /** To the end of the line, then to a new row unless the last character wrapped to it. */
  private goToNewLine(): void {
    this.putTillEnd();
    if (this.cursor === 0 || this.x !== 0) this.out('\r\n');
  }

  private putTillEnd(): void {
    while (this.cursor < this.chars.length) this.putGlyph();
  }

  private forward(): void {
    if (this.cursor < this.chars.length) this.putGlyph();
  }

  private backward(count: number): void {
    let num = Math.min(count, this.cursor);
    if (num <= 0) return;
    this.cursor -= num;
    if (this.x >= num) {
      this.x -= num;
      this.out(num <= 4 ? '\b'.repeat(num) : `\x1b[${num}D`);
      return;
    }
    num -= this.x;
    const up = 1 + Math.floor((num - 1) / this.width);
    this.x = (((this.width * this.y - num) % this.width) + this.width) % this.width;
    this.y -= up;
    this.out(`\r\x1b[${up}A`);
    if (this.x) this.out(`\x1b[${this.x}C`);
  }

  private redraw(up: number, back: number): void {
    if (up > 0) this.out(`\x1b[${up}A`);
    this.out('\r');
    this.putPrompt();
    this.putTillEnd();
    this.out('\x1b[J');
    this.backward(back);
  }

  private deleteHere(): void {
    const at = this.cursor;
    if (at === this.chars.length) return;
    this.chars.splice(at, 1);
    this.putTillEnd();
    this.out('\x1b[J');
    this.backward(this.cursor - at);
  }

  private backspace(): void {
    if (this.cursor === 0) return;
    this.backward(1);
    this.deleteHere();
  }

  private wordLeft(): void {
    for (;;) {
      this.backward(1);
      if (this.cursor === 0) return;
      if (!isDelimiter(this.chars[this.cursor]!)) {
        while (!isDelimiter(this.chars[this.cursor - 1]!)) {
          this.backward(1);
          if (this.cursor === 0) return;
        }
        return;
      }
    }
  }

  private wordRight(): void {
    for (;;) {
      const c = this.chars[this.cursor];
      if (c === undefined) return;
      if (!isDelimiter(c)) {
        do this.forward();
        while (this.cursor < this.chars.length && !isDelimiter(this.chars[this.cursor]!));
        return;
      }
      this.forward();
    }
  }
}

function isSpace(c: string): boolean {
  return /^[ \t\n\v\f\r]$/.test(c);
}

/** A space or ASCII punctuation: where Ctrl-Left/Right, Alt-b/f/d and Alt-Backspace stop. */
function isDelimiter(c: string): boolean {
  return c === ' ' || /^[!-/:-@[-`{-~]$/.test(c);
}
