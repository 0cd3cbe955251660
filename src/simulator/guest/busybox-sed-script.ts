import { posixRegex, PosixRegexError, type PosixRegex } from './posix-regex.js';

/**
 * busybox 1.35's sed script parser (editors/sed.c: add_cmd, get_address, parse_cmd_args,
 * parse_subst_cmd and their helpers), ported line for line. Text is one character per byte
 * (latin1), as sed reads its script. The parser is a loop over each line with no recursion: `{` and
 * `}` are commands of their own, matched when the script runs.
 */

/** A fatal error of sed (bb_error_msg_and_die): its message without the `sed: ` and the newline. */
export class SedDie extends Error {
  override readonly name = 'SedDie';
}

/** A file a `w` command or an `s///w` flag writes, opened (truncated) when the script is read. */
export interface SedWFile {
  /** The name as the script gives it. */
  name: string;
  /** What has been written to it. */
  data: string[];
  /** The last character written (sw_last_char), for the newline puts_maybe_newline adds. */
  lastChar: string;
}

/** One command (sed_cmd_t). */
export interface SedCmd {
  cmd: string;
  begMatch?: PosixRegex;
  endMatch?: PosixRegex;
  subMatch?: PosixRegex;
  /** 0: none; -1: `$`; -2: a range already matched (dead). */
  begLine: number;
  begLineOrig: number;
  /** 0: one address; -1: `$`; -2-N: `+N`. */
  endLine: number;
  endLineOrig: number;
  swFile?: SedWFile;
  /** s: the replacement; a i c: the text; r w: the file name; : b t T: the label; y: the pairs. */
  string?: string;
  /** s: which match to replace (0: all). */
  whichMatch: number;
  invert: boolean;
  inMatch: boolean;
  subP: boolean;
}

/** Opens a `w` file for writing (truncating it); throws SedDie when it cannot. */
export type WOpener = (name: string) => Promise<SedWFile>;

const semicolonWhitespace = '; \n\r\t\v';
const isSpace = (c: string | undefined): boolean => c !== undefined && ' \t\n\v\f\r'.includes(c);
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** The script as busybox's sed keeps it while reading it: the commands, and the state they share. */
export class SedScript {
  readonly cmds: SedCmd[] = [];
  /** The regex an empty one (`//`, `s//x/`) stands for (G.previous_regex_ptr). */
  previousRegex?: PosixRegex;
  /** How many `-n` (and `#n`) were given. */
  beQuiet = 0;
  private addCmdLine?: string;

  constructor(
    private readonly extended: boolean,
    private readonly openW: WOpener,
  ) {}

  /** add_cmd_block: a script given with -e or as the operand; each of its lines is a line of the script. */
  async addBlock(text: string): Promise<void> {
    for (const line of text.split('\n')) await this.add(line);
  }

  /** add_cmd: one line of script, joined to the line before when that ended with an unescaped backslash. */
  async add(line: string): Promise<void> {
    let s = line;
    if (this.addCmdLine !== undefined) s = this.addCmdLine = `${this.addCmdLine}\n${s}`;
    let n = s.length;
    while (n && s[n - 1] === '\\') n--;
    if ((s.length - n) & 1) {
      this.addCmdLine = s.slice(0, -1);
      return;
    }
    let at = 0;
    while (at < s.length) {
      while (at < s.length && semicolonWhitespace.includes(s[at]!)) at++;
      if (at >= s.length) break;
      if (s[at] === '#') {
        if (s[at + 1] === 'n') this.beQuiet++;
        const eol = s.slice(at).search(/[\n\r]/);
        if (eol < 0) break;
        at += eol;
        continue;
      }
      const cmd: SedCmd = {
        cmd: '',
        begLine: 0,
        begLineOrig: 0,
        endLine: 0,
        endLineOrig: 0,
        whichMatch: 0,
        invert: false,
        inMatch: false,
        subP: false,
      };
      const beg = this.address(s, at);
      at += beg.length;
      cmd.begLine = cmd.begLineOrig = beg.line;
      cmd.begMatch = beg.regex;
      if (s[at] === ',') {
        at++;
        let idx: number;
        if (s[at] === '+' && isDigit(s[at + 1])) {
          const digits = /^\d+/.exec(s.slice(at + 1))![0];
          idx = Number(digits);
          cmd.endLine = -2 - idx;
          at += 1 + digits.length;
        } else {
          const end = this.address(s, at);
          at += end.length;
          cmd.endLine = end.line;
          cmd.endMatch = end.regex;
          idx = end.length - 1;
        }
        if (idx < 0) throw new SedDie('no address after comma');
        cmd.endLineOrig = cmd.endLine;
      }
      while (isSpace(s[at])) at++;
      if (s[at] === '!') {
        cmd.invert = true;
        at++;
        while (isSpace(s[at])) at++;
      }
      if (at >= s.length) throw new SedDie('missing command');
      cmd.cmd = s[at++]!;
      at = await this.args(cmd, s, at);
      this.cmds.push(cmd);
    }
    this.addCmdLine = undefined;
  }

  /** get_address: a line number, `$`, `/re/` or `\cREc` at `at`; its length (0: none). */
  private address(s: string, at: number): { length: number; line: number; regex?: PosixRegex } {
    const c = s[at];
    if (isDigit(c)) {
      const digits = /^\d+/.exec(s.slice(at))![0];
      return { length: digits.length, line: Number.parseInt(digits, 10) };
    }
    if (c === '$') return { length: 1, line: -1 };
    if (c !== '/' && c !== '\\') return { length: 0, line: 0 };
    let pos = at;
    let delimiter = '/';
    if (c === '\\') delimiter = s[++pos] ?? '';
    pos++;
    const next = nextDelimiter(delimiter, s, pos, true);
    let regex: PosixRegex;
    if (next !== 0) {
      regex = this.compile(copyParsingEscapes(s.slice(pos, pos + next)), false);
      this.previousRegex = regex;
    } else {
      if (!this.previousRegex) throw new SedDie('no previous regexp');
      regex = this.previousRegex;
    }
    return { length: pos + next + 1 - at, line: 0, regex };
  }

  /** xregcomp: the regex, or sed's death with regerror's words. */
  private compile(pattern: string, icase: boolean): PosixRegex {
    try {
      return posixRegex(pattern, { extended: this.extended, icase });
    } catch (e) {
      if (e instanceof PosixRegexError) throw new SedDie(`bad regex '${pattern}': ${e.message}`);
      throw e;
    }
  }

  /** parse_cmd_args: what follows the command letter; where the script goes on. */
  private async args(cmd: SedCmd, s: string, at: number): Promise<number> {
    const c = cmd.cmd;
    if (c === 's') return at + (await this.subst(cmd, s, at));
    if (c === 'a' || c === 'i' || c === 'c') {
      if (c !== 'c' && (cmd.endLine || cmd.endMatch)) throw new SedDie(`command '${c}' uses only one address`);
      while (at < s.length) {
        if (s[at] === '\n' || s[at] === '\\') {
          at++;
          break;
        }
        if (!isSpace(s[at])) break;
        at++;
      }
      cmd.string = parseEscapes(copyParsingEscapes(s.slice(at)), '', '');
      return s.length;
    }
    if (c === 'r' || c === 'w') {
      if (c === 'r' && (cmd.endLine || cmd.endMatch)) throw new SedDie(`command '${c}' uses only one address`);
      const file = fileName(s, at);
      cmd.string = file.name;
      if (c === 'w') cmd.swFile = await this.openW(file.name);
      return at + file.length;
    }
    if (c === ':' || c === 'b' || c === 't' || c === 'T') {
      while (isSpace(s[at])) at++;
      let end = at;
      while (end < s.length && !semicolonWhitespace.includes(s[end]!)) end++;
      if (end > at) cmd.string = s.slice(at, end);
      return end;
    }
    if (c === 'y') {
      const delimiter = s[at] ?? '';
      const parts = regexDelim(s, at);
      const match = parseEscapes(parts.match, delimiter, delimiter);
      const replace = parseEscapes(parts.replace, delimiter, delimiter);
      let pairs = '';
      for (let i = 0; i < match.length && i < replace.length; i++) pairs += match[i]! + replace[i]!;
      cmd.string = pairs;
      return at + parts.end + 1;
    }
    if (!'dDgGhHlnNpPqx={}'.includes(c)) throw new SedDie(`unsupported command ${c}`);
    return at;
  }

  /** parse_subst_cmd: `s/re/replacement/flags` from `at` (its delimiter); the length read. */
  private async subst(cmd: SedCmd, s: string, at: number): Promise<number> {
    let icase = false;
    const parts = regexDelim(s, at);
    const sub = s.slice(at);
    cmd.string = parts.replace;
    cmd.whichMatch = 1;
    let idx = parts.end;
    flags: while (++idx < sub.length) {
      const f = sub[idx]!;
      if (isDigit(f)) {
        const digits = /^\d+/.exec(sub.slice(idx))![0];
        if (parts.match[0] !== '^') cmd.whichMatch = Number(digits) >>> 0;
        idx += digits.length - 1;
        continue;
      }
      if (isSpace(f)) continue;
      switch (f) {
        case 'g':
          cmd.whichMatch = 0;
          break;
        case 'p':
          cmd.subP = true;
          break;
        case 'w': {
          const file = fileName(sub, idx + 1);
          idx += file.length;
          cmd.swFile = await this.openW(file.name);
          break;
        }
        case 'i':
        case 'I':
          icase = true;
          break;
        case '#':
          idx = sub.length;
          break flags;
        case ';':
        case '}':
          break flags;
        default:
          throw new SedDie('bad option in substitution expression');
      }
    }
    if (parts.match !== '') cmd.subMatch = this.compile(parts.match, icase);
    return Math.min(idx, sub.length);
  }
}

/**
 * parse_escapes: `\from` becomes `to`; with `to` empty, any `\c` becomes `c`. Other backslashes
 * are kept with the character after them.
 */
function parseEscapes(s: string, from: string, to: string): string {
  let d = '';
  let i = 0;
  while (i < s.length) {
    if (s[i] === '\\') {
      if (!to || s[i + 1] === from) {
        if (i + 1 >= s.length) return d;
        d += to || s[i + 1];
        i += 2;
        continue;
      }
      i++;
      d += '\\';
    }
    if (i >= s.length) return d;
    d += s[i++];
  }
  return d;
}

/** copy_parsing_escapes: `\n`, `\t` and `\r` as the characters. */
function copyParsingEscapes(s: string): string {
  let d = s;
  for (const [to, from] of [
    ['\n', 'n'],
    ['\t', 't'],
    ['\r', 'r'],
  ] as const)
    d = parseEscapes(d, from, to);
  return d;
}

/**
 * index_of_next_unescaped_regexp_delim: the index (from `at`) of the next `delimiter` not escaped
 * nor inside a bracket expression (when `brackets`).
 */
function nextDelimiter(delimiter: string, s: string, at: number, brackets: boolean): number {
  let bracket = brackets ? -1 : -2;
  let escaped = false;
  for (let idx = 0; at + idx < s.length; idx++) {
    const ch = s[at + idx]!;
    if (bracket >= 0) {
      if (ch === ']' && !(bracket === idx - 1 || (bracket === idx - 2 && s[at + idx - 1] === '^'))) bracket = -1;
    } else if (escaped) escaped = false;
    else if (ch === '\\') escaped = true;
    else if (bracket === -1 && ch === '[') bracket = idx;
    else if (ch === delimiter) return idx;
  }
  throw new SedDie(`unmatched '${delimiter}'`);
}

/** parse_regex_delim: the two parts of `/match/replace/` at `at`; `end` is the index (from `at`) of the third delimiter. */
function regexDelim(s: string, at: number): { match: string; replace: string; end: number } {
  if (at >= s.length) throw new SedDie('bad format in substitution expression');
  const delimiter = s[at]!;
  let pos = at + 1;
  let idx = nextDelimiter(delimiter, s, pos, true);
  const match = copyParsingEscapes(s.slice(pos, pos + idx));
  pos += idx + 1;
  idx = nextDelimiter(delimiter, s, pos, false);
  const replace = copyParsingEscapes(s.slice(pos, pos + idx));
  return { match, replace, end: pos - at + idx };
}

/** parse_file_cmd: the file name after `at` (blanks skipped, to the end of the line); the length read up to that end. */
function fileName(s: string, at: number): { name: string; length: number } {
  let start = at;
  while (isSpace(s[start])) start++;
  let eol = s.indexOf('\n', start);
  if (eol < 0) eol = s.length;
  if (eol === start) throw new SedDie('empty filename');
  // Lines glued together: busybox puts a backslash where the newline was.
  const name = eol < s.length ? `${s.slice(start, eol)}\\` : s.slice(start);
  return { name, length: eol - at };
}
