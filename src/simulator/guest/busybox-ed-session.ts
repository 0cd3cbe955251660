import { posix } from 'node:path';
import { openPath } from './guest-open.js';
import { writeFile, type ProgramHost } from './program-host.js';

/** One line of the buffer, in busybox's doubly linked list (the head is a line of its own, empty). */
interface Line {
  prev: Line;
  next: Line;
  /** The line's bytes with its newline (the last line of a file may have none). */
  data: string;
}

const isSpace = (c: string | undefined): boolean => c !== undefined && ' \t\n\v\f\r'.includes(c);
const skipSpace = (text: string, at: number): number => {
  while (isSpace(text[at])) at++;
  return at;
};

/** A byte as ed's `l` shows it (libbb's fputc_printable with PRINTABLE_META). */
function printable(code: number): string {
  let out = '';
  if (code & 0x80) {
    out = 'M-';
    code &= 0x7f;
  }
  if (code < 0x20) return `${out}^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return `${out}^?`;
  return out + String.fromCharCode(code);
}

/** The sizes ed gives fgets(): its command buffer (USERSIZE, 1023 on the beds) and a line of text's (one more). */
const commandSize = 1023;
const textSize = 1024;

/**
 * busybox 1.35's ed (editors/ed.c) on the lines of stdin, ported as it is: plain strings for
 * searches and `s` (it has no regular expressions), a message on stderr for every error, its list of lines
 * with a remembered current line whose number goes stale when lines are inserted before it (a
 * `2a` after reading a file then shows the buffer from its second line, as busybox's does).
 */
export class EdSession {
  out = '';
  err = '';
  private readonly lines: Line;
  private curLine: Line;
  private curNum = 0;
  private lastNum = 0;
  private fileName: string | undefined;
  private dirty = false;
  private readonly marks: number[] = new Array<number>(26).fill(0);
  private searchString = '';
  private at = 0;

  constructor(
    private readonly host: ProgramHost,
    private readonly cwd: string,
    private readonly input: string,
    private readonly prompt: string,
  ) {
    const head = { data: '' } as Line;
    head.prev = head.next = head;
    this.lines = this.curLine = head;
  }

  /** ed FILE: the file read first (ed ends at once when it cannot be), then the commands. */
  async run(file: string | undefined): Promise<void> {
    if (file !== undefined) {
      this.fileName = file;
      if (!(await this.readLines(file, 1))) return;
      this.dirty = false;
    }
    await this.doCommands();
  }

  private error(message: string): void {
    this.err += `ed: ${message}\n`;
  }

  /** read_line_input without a terminal: the prompt, then fgets() of at most size - 1 bytes (cut at a NUL, as strlen() cuts it). */
  private readLine(prompt: string, size: number): string | undefined {
    this.out += prompt;
    if (this.at >= this.input.length) return undefined;
    const newline = this.input.indexOf('\n', this.at);
    const end = Math.min(newline < 0 ? this.input.length : newline + 1, this.at + size - 1);
    const line = this.input.slice(this.at, end);
    this.at = end;
    const nul = line.indexOf('\0');
    return nul < 0 ? line : line.slice(0, nul);
  }

  private badNums(num1: number, num2: number, what: string): boolean {
    if (num1 >= 1 && num2 <= this.lastNum && num1 <= num2) return false;
    this.error(`bad line range for ${what}`);
    return true;
  }

  private findLine(num: number): Line | undefined {
    if (num < 1 || num > this.lastNum) {
      this.error(`line number ${num} does not exist`);
      return undefined;
    }
    if (this.curNum <= 0) {
      this.curNum = 1;
      this.curLine = this.lines.next;
    }
    if (num === this.curNum) return this.curLine;
    let lp = this.curLine;
    let lnum = this.curNum;
    if (num < Math.floor(this.curNum / 2)) {
      lp = this.lines.next;
      lnum = 1;
    } else if (num > Math.floor((this.curNum + this.lastNum) / 2)) {
      lp = this.lines.prev;
      lnum = this.lastNum;
    }
    for (; lnum < num; lnum++) lp = lp.next;
    for (; lnum > num; lnum--) lp = lp.prev;
    return lp;
  }

  private setCurNum(num: number): boolean {
    const lp = this.findLine(num);
    if (!lp) return false;
    this.curNum = num;
    this.curLine = lp;
    return true;
  }

  private searchLines(str: string, num1: number, num2: number): number {
    if (this.badNums(num1, num2, 'search')) return 0;
    if (str === '') {
      if (this.searchString === '') {
        this.error('no previous search string');
        return 0;
      }
      str = this.searchString;
    }
    this.searchString = str;
    let lp = this.findLine(num1);
    if (!lp) return 0;
    for (; num1 <= num2; num1++, lp = lp.next) if (lp.data.includes(str)) return num1;
    this.error(`can't find string "${str}"`);
    return 0;
  }

  /** An address (sums and differences of numbers, `.`, `$`, `'x`, `/string/`) from `at`; undefined after an error. */
  private getNum(text: string, at: number): { at: number; have: boolean; num: number } | undefined {
    let value = 0;
    let have = false;
    let minus = false;
    for (;;) {
      at = skipSpace(text, at);
      let num: number;
      const c = text[at];
      if (c === '.' || c === '$') {
        num = c === '.' ? this.curNum : this.lastNum;
        at++;
      } else if (c === "'") {
        const mark = (text.charCodeAt(at + 1) || 0) - 97;
        if (mark < 0 || mark >= 26) {
          this.error('bad mark name');
          return undefined;
        }
        num = this.marks[mark]!;
        at += 2;
      } else if (c === '/') {
        const end = text.indexOf('/', at + 1);
        const str = text.slice(at + 1, end < 0 ? undefined : end);
        at = end < 0 ? text.length : end + 1;
        num = this.searchLines(str, this.curNum, this.lastNum);
        if (num === 0) return undefined;
      } else if (c !== undefined && c >= '0' && c <= '9') {
        const digits = /^\d+/.exec(text.slice(at))![0];
        num = Number(digits);
        at += digits.length;
      } else return { at, have, num: value };
      have = true;
      value += minus ? -num : num;
      at = skipSpace(text, at);
      if (text[at] === '-') minus = true;
      else if (text[at] === '+') minus = false;
      else return { at, have, num: value };
      at++;
    }
  }

  private insertLine(num: number, data: string): boolean {
    if (num < 1 || num > this.lastNum + 1) {
      this.error('inserting at bad line number');
      return false;
    }
    const lp = num > this.lastNum ? this.lines : this.findLine(num);
    if (!lp) return false;
    const line: Line = { data, next: lp, prev: lp.prev };
    lp.prev.next = line;
    lp.prev = line;
    this.lastNum++;
    this.dirty = true;
    return this.setCurNum(num);
  }

  /** Lines of text up to a lone `.` (or the end of the input) inserted from line `num` on. */
  private addLines(num: number): void {
    for (;;) {
      const line = this.readLine('', textSize);
      if (!line || line === '.\n') return;
      if (!this.insertLine(num++, line)) return;
    }
  }

  private async readLines(file: string, num: number): Promise<boolean> {
    if (num < 1 || num > this.lastNum + 1) {
      this.error('bad line for read');
      return false;
    }
    const opened = await openPath(this.host, this.cwd, file, 'read');
    if (!('data' in opened)) {
      this.error(`${file}: ${'error' in opened ? opened.error : 'Is a directory'}`);
      return false;
    }
    const data = opened.data;
    for (let start = 0; start < data.length; num++) {
      const newline = data.indexOf('\n', start);
      const end = newline < 0 ? data.length : newline + 1;
      if (!this.insertLine(num, data.slice(start, end))) return false;
      start = end;
    }
    this.out += `${data.length}\n`;
    return true;
  }

  private async writeLines(file: string, num1: number, num2: number): Promise<void> {
    if (this.badNums(num1, num2, 'write')) return;
    const opened = await openPath(this.host, this.cwd, file, 'write');
    if ('error' in opened) return this.error(`${file}: ${opened.error}`);
    let lp = this.findLine(num1)!;
    let data = '';
    for (; num1 <= num2; num1++, lp = lp.next) data += lp.data;
    const path = posix.resolve(this.cwd, file);
    await writeFile(this.host, await this.host.fs.memory.realpath(path).catch(() => path), Buffer.from(data, 'latin1'));
    this.out += `${data.length}\n`;
  }

  private printLines(num1: number, num2: number, expand: boolean): boolean {
    if (this.badNums(num1, num2, 'print')) return false;
    let lp = this.findLine(num1);
    if (!lp) return false;
    while (num1 <= num2) {
      if (expand) {
        const text = lp.data.endsWith('\n') ? lp.data.slice(0, -1) : lp.data;
        for (let i = 0; i < text.length; i++) this.out += printable(text.charCodeAt(i));
        this.out += '$\n';
      } else this.out += lp.data;
      this.setCurNum(num1++);
      lp = lp.next;
    }
    return true;
  }

  private deleteLines(num1: number, num2: number): void {
    if (this.badNums(num1, num2, 'delete')) return;
    let lp = this.findLine(num1);
    if (!lp) return;
    if (this.curNum >= num1 && this.curNum <= num2) {
      if (num2 < this.lastNum) this.setCurNum(num2 + 1);
      else if (num1 > 1) this.setCurNum(num1 - 1);
      else this.curNum = 0;
    }
    let count = num2 - num1 + 1;
    if (this.curNum > num2) this.curNum -= count;
    this.lastNum -= count;
    for (; count > 0; count--) {
      lp.prev.next = lp.next;
      lp.next.prev = lp.prev;
      lp = lp.next;
    }
    this.dirty = true;
  }

  /** `s/old/new/[gp]`: old and new are plain strings (no pattern, no `&`), as busybox's ed has them. */
  private substitute(cmd: string, num1: number, num2: number): void {
    if (this.badNums(num1, num2, 'substitute')) return;
    const delim = cmd[0];
    if (delim === undefined || delim === ' ' || delim === '\t') return this.error('bad delimiter for substitute');
    const second = cmd.indexOf(delim, 1);
    if (second < 0) return this.error('missing 2nd delimiter for substitute');
    let oldStr = cmd.slice(1, second);
    const third = cmd.indexOf(delim, second + 1);
    const newStr = cmd.slice(second + 1, third < 0 ? undefined : third);
    const flags = third < 0 ? '' : cmd.slice(third + 1);
    if ([...flags].some((f) => f !== 'g' && f !== 'p')) return this.error('unknown option for substitute');
    const global = flags.includes('g');
    const print = flags.includes('p');
    if (oldStr === '') {
      if (this.searchString === '') return this.error('no previous search string');
      oldStr = this.searchString;
    }
    this.searchString = oldStr;
    let lp = this.findLine(num1)!;
    let offset = 0;
    let didSub = false;
    let needPrint = false;
    while (num1 <= num2) {
      offset = lp.data.indexOf(oldStr, offset);
      const found = offset >= 0;
      if (found) {
        needPrint = print;
        didSub = this.dirty = true;
        lp.data = lp.data.slice(0, offset) + newStr + lp.data.slice(offset + oldStr.length);
        offset += newStr.length;
        if (global) continue;
      }
      if (needPrint) {
        this.printLines(num1, num1, false);
        needPrint = false;
      }
      // Busybox starts the next line's search where this line's substitution ended.
      if (!found) offset = 0;
      lp = lp.next;
      num1++;
    }
    if (!didSub) this.error(`no substitutions found for "${oldStr}"`);
  }

  private async doCommands(): Promise<void> {
    for (;;) {
      const line = this.readLine(this.prompt, commandSize);
      if (!line) return;
      let end = line.length;
      while (end > 0 && isSpace(line[end - 1])) end--;
      const buf = line.slice(0, end);
      if (this.curNum === 0 && this.lastNum > 0) {
        this.curNum = 1;
        this.curLine = this.lines.next;
      }
      const first = this.getNum(buf, skipSpace(buf, 0));
      if (!first) continue;
      let { have: have1, num: num1 } = first;
      let num2 = num1;
      let have2 = false;
      let at = skipSpace(buf, first.at);
      if (buf[at] === ',') {
        const second = this.getNum(buf, at + 1);
        if (!second) continue;
        if (!have1) num1 = 1;
        num2 = second.have ? second.num : this.lastNum;
        have1 = have2 = true;
        at = second.at;
      }
      if (!have1) num1 = this.curNum;
      if (!have2) num2 = num1;
      const rest = buf.slice(at + 1);
      const arg = rest.slice(skipSpace(rest, 0));
      switch (buf[at] ?? '') {
        case 'a':
          this.addLines(num1 + 1);
          break;
        case 'c':
          this.deleteLines(num1, num2);
          this.addLines(num1);
          break;
        case 'd':
          this.deleteLines(num1, num2);
          break;
        case 'f':
          if (rest !== '' && rest[0] !== ' ') this.error('bad file command');
          else if (arg !== '') this.fileName = arg;
          else this.out += this.fileName === undefined ? 'No file name\n' : `"${this.fileName}"\n`;
          break;
        case 'i':
          this.addLines(!have1 && this.lastNum === 0 ? 1 : num1);
          break;
        case 'k': {
          const mark = arg.charCodeAt(0) - 97;
          if (!(mark >= 0 && mark < 26) || arg.length > 1) this.error('bad mark name');
          else this.marks[mark] = num2;
          break;
        }
        case 'l':
          this.printLines(num1, num2, true);
          break;
        case 'p':
          this.printLines(num1, num2, false);
          break;
        case 'q': {
          if (have1 || arg !== '') {
            this.error('bad quit command');
            break;
          }
          if (!this.dirty) return;
          const answer = this.readLine('Really quit? ', 16);
          if (answer === undefined) return;
          if ((answer.charCodeAt(skipSpace(answer, 0)) | 0x20) === 0x79) return;
          break;
        }
        case 'r':
          if (rest !== '' && rest[0] !== ' ') this.error('bad read command');
          else if (arg === '') this.error('no file name');
          else if (!(await this.readLines(arg, (have1 ? num1 : this.lastNum) + 1))) this.fileName ??= arg;
          break;
        case 's':
          this.substitute(rest, num1, num2);
          break;
        case 'w': {
          if (rest !== '' && rest[0] !== ' ') {
            this.error('bad write command');
            break;
          }
          const file = arg || this.fileName;
          if (file === undefined) {
            this.error('no file name specified');
            break;
          }
          if (!have1) {
            num1 = 1;
            num2 = this.lastNum;
            this.dirty = false;
          }
          await this.writeLines(file, num1, num2);
          break;
        }
        case 'z':
          if (rest[0] === '-') this.printLines(this.curNum - 21, this.curNum, false);
          else if (rest[0] === '.') this.printLines(this.curNum - 11, this.curNum + 10, false);
          else this.printLines(this.curNum, this.curNum + 21, false);
          break;
        case '.':
          if (have1) this.error('no arguments allowed');
          else this.printLines(this.curNum, this.curNum, false);
          break;
        case '-':
          if (this.setCurNum(this.curNum - 1)) this.printLines(this.curNum, this.curNum, false);
          break;
        case '=':
          this.out += `${num1}\n`;
          break;
        case '':
          if (have1) this.printLines(num2, num2, false);
          else if (this.setCurNum(this.curNum + 1)) this.printLines(this.curNum, this.curNum, false);
          break;
        default:
          this.error('unimplemented command');
      }
    }
  }
}
