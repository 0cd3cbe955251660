import { CalcError, takeNextLine } from './busybox-calc-num.js';

/** One bc token: its kind, its text, where it starts (for busybox's "at '…'") and its line. */
export interface Token {
  t: 'num' | 'name' | 'str' | 'op' | 'kw' | 'nl' | 'eof' | ';' | ',' | '(' | ')' | '[' | ']' | '{' | '}';
  v: string;
  pos: number;
  line: number;
}

const keywords = [
  'auto',
  'break',
  'continue',
  'define',
  'else',
  'for',
  'halt',
  'ibase',
  'obase',
  'if',
  'last',
  'length',
  'limits',
  'print',
  'quit',
  'read',
  'return',
  'scale',
  'sqrt',
  'while',
];
const nameChars = /[a-z0-9_]*/y;
const nonPosix = new Set(['continue', 'else', 'halt', 'last', 'limits', 'print', 'read']);
const ops = ['&&', '||', '++', '--', '+=', '-=', '*=', '/=', '%=', '^=', '==', '<=', '>=', '!=', '+', '-', '*', '/', '%', '^', '=', '<', '>', '!'];

/**
 * bc's lexer over one input text, a token at a time (busybox reads and runs a statement before it
 * lexes the next, so an error further on comes after the output before it). `posix`, given only
 * under `-s` or `-w`, is called with the extensions they report.
 */
export class BcLexer {
  private at = 0;
  line = 1;
  tok: Token = { t: 'nl', v: '', pos: 0, line: 1 };
  last: Token = this.tok;

  constructor(
    public text: string,
    private readonly posix: ((msg: string) => void) | undefined,
  ) {}

  /** The rest of the current token's line, as busybox quotes it in its errors. */
  rest(pos = this.tok.pos): string {
    const end = this.text.indexOf('\n', pos);
    return this.text.slice(pos, end < 0 ? this.text.length : end);
  }

  /** read()'s line: the one after the current token's, taken out of the input. */
  takeLine(): string | undefined {
    const { line, text } = takeNextLine(this.text, this.at, this.tok.t === 'nl');
    this.text = text;
    return line;
  }

  next(): Token {
    this.last = this.tok;
    this.tok = this.scan();
    return this.tok;
  }

  private scan(): Token {
    const s = this.text;
    for (;;) {
      const c = s[this.at];
      const pos = this.at;
      const line = this.line;
      const tok = (t: Token['t'], v: string): Token => ({ t, v, pos, line });
      if (c === undefined) return tok('eof', '');
      if (c === '\n') {
        this.at++;
        this.line++;
        return tok('nl', '\n');
      }
      if (c === ' ' || c === '\t' || c === '\r' || c === '\v' || c === '\f') {
        this.at++;
        continue;
      }
      if (c === '\\' && s[this.at + 1] === '\n') {
        this.at += 2;
        this.line++;
        continue;
      }
      if (c === '#') {
        this.posix?.("POSIX does not allow '#' script comments");
        while (this.at < s.length && s[this.at] !== '\n') this.at++;
        continue;
      }
      if (c === '/' && s[this.at + 1] === '*') {
        const end = s.indexOf('*/', this.at + 2);
        if (end < 0) throw new CalcError('unterminated comment');
        for (let i = this.at; i < end; i++) if (s[i] === '\n') this.line++;
        this.at = end + 2;
        continue;
      }
      if (c === '"') {
        const end = s.indexOf('"', this.at + 1);
        if (end < 0) throw new CalcError('unterminated string');
        const v = s.slice(this.at + 1, end);
        this.line += v.split('\n').length - 1;
        this.at = end + 1;
        return tok('str', v);
      }
      if (/[0-9A-Z]/.test(c) || (c === '.' && /[0-9]/.test(s[this.at + 1] ?? ''))) {
        let v = '';
        let dot = false;
        while (this.at < s.length) {
          const d = s[this.at]!;
          if (d === '\\' && s[this.at + 1] === '\n') {
            this.at += 2;
            this.line++;
            continue;
          }
          if (d === '.') {
            if (dot) break;
            dot = true;
          } else if (!/[0-9A-Z]/.test(d)) break;
          v += d;
          this.at++;
        }
        return tok('num', v.endsWith('.') ? v.slice(0, -1) : v);
      }
      if (c === '.') {
        this.at++;
        this.posix?.("POSIX does not allow '.' as 'last'");
        return tok('kw', 'last');
      }
      if (/[a-z]/.test(c)) {
        nameChars.lastIndex = this.at;
        const v = nameChars.exec(s)![0];
        this.at += v.length;
        if (keywords.includes(v)) {
          if (nonPosix.has(v)) this.posix?.(`POSIX does not allow the '${v}' keyword`);
          return tok('kw', v);
        }
        if (v.length > 1) this.posix?.(`POSIX only allows one character names; this is bad: '${this.rest(pos)}'`);
        return tok('name', v);
      }
      if ('()[]{},;'.includes(c)) {
        this.at++;
        return tok(c as Token['t'], c);
      }
      const op = ops.find((o) => s.startsWith(o, this.at));
      if (op === undefined || op === '&' || (c === '&' && op !== '&&')) throw new CalcError(c === '\0' ? 'NUL character' : `bad character '${c}'`);
      if (op === '!' || op === '&&' || op === '||') this.posix?.(`POSIX does not allow boolean operators; this is bad: ${op}`);
      this.at += op.length;
      return tok('op', op);
    }
  }
}
