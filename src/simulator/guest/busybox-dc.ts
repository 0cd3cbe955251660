import type { Command, ExecResult } from 'just-bash';
import * as N from './busybox-calc-num.js';
import { banner, getopt, isResult } from './busybox-getopt.js';
import { type ProgramHost } from './program-host.js';
import { bytesOutput } from './bytes-output.js';

const usageText =
  'Usage: dc [-x] [-eSCRIPT]... [-fFILE]... [FILE]...\n\n' +
  'Tiny RPN calculator. Operations:\nArithmetic: + - * / % ^\n~ - divide with remainder\n| - modular exponentiation\n' +
  'v - square root\np - print top of the stack without popping\nf - print entire stack\nk - pop the value and set precision\n' +
  "i - pop the value and set input radix\no - pop the value and set output radix\nExamples: dc -e'2 2 + p' -> 4, dc -e'8 8 * 2 2 + / p' -> 16\n";
const usage = `${banner}${usageText}`;

/** A dc token: a number (negated with `_`), a string, a command, a register command or a condition. */
type Tok =
  | { k: 'num'; v: string; neg: boolean }
  | { k: 'str'; v: string }
  | { k: 'cmd'; c: string }
  | { k: 'reg'; c: string; r: string }
  | { k: 'cond'; c: string; r: string; e?: string };

type Val = { k: 'n'; v: N.Num } | { k: 's'; v: string };

/** dc's lexer over one text; `line` is where the last token began (for `dc: FILE:LINE:`). */
class DcLexer {
  at = 0;
  line = 1;
  constructor(public text: string) {}

  /** `?`'s line: the one after the current one, taken out of the input. */
  takeLine(): string | undefined {
    const { line, text } = N.takeNextLine(this.text, this.at, false);
    this.text = text;
    return line;
  }

  private bad(msg: string, from: number): N.CalcError {
    const end = this.text.indexOf('\n', from);
    return new N.CalcError(`${msg} at '${this.text.slice(from, end < 0 ? undefined : end)}'`);
  }

  /** The next token, or undefined at the end (newlines and comments are skipped). */
  next(): Tok | undefined {
    const s = this.text;
    for (;;) {
      const c = s[this.at];
      if (c === undefined) return undefined;
      if (c === '\n') this.line++;
      if (' \t\v\f\r\n'.includes(c)) {
        this.at++;
        continue;
      }
      if (c === '#') {
        while (this.at < s.length && s[this.at] !== '\n') this.at++;
        continue;
      }
      const start = this.at++;
      if (/[0-9A-F]/.test(c) || (c === '.' && /[0-9]/.test(s[this.at] ?? ''))) return { k: 'num', v: this.number(start), neg: false };
      if (c === '_') {
        this.skipBlanks();
        const d = s[this.at];
        if (d === undefined || !(/[0-9A-F]/.test(d) || (d === '.' && /[0-9]/.test(s[this.at + 1] ?? '')))) throw this.bad('bad token', this.at);
        return { k: 'num', v: this.number(this.at++), neg: true };
      }
      if (c === '[') {
        let depth = 1;
        for (let i = this.at; i < s.length; i++) {
          if (s[i] === '[') depth++;
          if (s[i] === ']' && --depth === 0) {
            const v = s.slice(this.at, i);
            this.line += v.split('\n').length - 1;
            this.at = i + 1;
            return { k: 'str', v };
          }
        }
        throw new N.CalcError('unterminated string');
      }
      if ('sSlL:;'.includes(c)) return { k: 'reg', c, r: this.register(start) };
      if ('<>='.includes(c) || (c === '!' && ['<', '>', '='].includes(s[this.at] ?? ''))) {
        const op = c === '!' ? `!${s[this.at++]}` : c;
        const r = this.register(start);
        if (s[this.at] === 'e') {
          this.at++;
          return { k: 'cond', c: op, r, e: this.register(start) };
        }
        return { k: 'cond', c: op, r };
      }
      if ('+-*/%^~|vpnPfcdrRkKiIoOxqQzZXa?({GN'.includes(c)) return { k: 'cmd', c };
      if (c === 'e') throw this.bad('bad token', start);
      throw new N.CalcError(c === '\0' ? 'NUL character' : `bad character '${c}'`);
    }
  }

  private skipBlanks(): void {
    while (' \t\v\f\r'.includes(this.text[this.at] ?? 'x')) this.at++;
  }

  private register(start: number): string {
    const r = this.text[this.at];
    if (r === undefined) throw this.bad('bad token', start);
    if (r === '\n') this.line++;
    this.at++;
    return r;
  }

  private number(start: number): string {
    let dot = this.text[start] === '.';
    let v = this.text[start]!;
    for (;;) {
      const d = this.text[this.at];
      if (d === '\\' && this.text[this.at + 1] === '\n') {
        this.at += 2;
        this.line++;
        continue;
      }
      if (d === undefined || !(/[0-9A-F]/.test(d) || (d === '.' && !dot))) break;
      if (d === '.') dot = true;
      v += d;
      this.at++;
    }
    return v.endsWith('.') ? v.slice(0, -1) : v;
  }
}

/** dc's `P` of a number: its digits in base 256 as bytes, the fraction's too (a negative one refused). */
function byteStream(v: N.Num): string {
  if (v.n === 0n) return '\0';
  if (v.n < 0n) throw new N.CalcError('negative number');
  const unit = 10n ** BigInt(v.s);
  let int = v.n / unit;
  let frac = v.n % unit;
  let out = '';
  for (; int > 0n; int >>= 8n) out = String.fromCharCode(Number(int & 255n)) + out;
  for (let len = 1n; len.toString().length <= v.s; len *= 256n) {
    frac *= 256n;
    out += String.fromCharCode(Number(frac / unit));
    frac %= unit;
  }
  return out;
}

/** dc's machine: the stack, registers (each a stack, with an array beside it), scale and bases. */
class DcMachine {
  scale = 0;
  ibase = 10;
  obase = 10;
  stack: Val[] = [];
  regs = new Map<string, Val[]>();
  arrays = new Map<string, Map<number, Val>>();
  parsed = new Map<string, Tok[]>();
  /** Where `?` takes its line: stdin's next one (the program's own input when stdin is the program). */
  readLine: () => string | undefined = () => undefined;

  constructor(readonly out: N.CalcOutput) {}

  private pop(): Val {
    const v = this.stack.pop();
    if (!v) throw new N.CalcError('stack has too few elements');
    return v;
  }

  private need(n: number): void {
    if (this.stack.length < n) throw new N.CalcError('stack has too few elements');
  }

  /** The top of the stack, left there. */
  private top(): Val {
    this.need(1);
    return this.stack[this.stack.length - 1]!;
  }

  private num(v: Val): N.Num {
    if (v.k !== 'n') throw new N.CalcError('variable is wrong type');
    return v.v;
  }

  private reg(r: string): Val[] {
    let s = this.regs.get(r);
    if (!s) this.regs.set(r, (s = [{ k: 'n', v: N.zero }]));
    return s;
  }

  private printVal(v: Val, newline: boolean): void {
    if (v.k === 'n') return this.out.printNum(v.v, this.obase, newline);
    if (v.v === '') this.out.write('\0');
    this.out.printString(v.v);
    if (newline) {
      this.out.write('\n');
      this.out.nchars = 0;
    }
  }

  private binary(c: string): void {
    this.need(2);
    const b = this.num(this.stack[this.stack.length - 1]!);
    const a = this.num(this.stack[this.stack.length - 2]!);
    const s = this.scale;
    let r: N.Num;
    if (c === '~') {
      const q = N.div(a, b, s);
      this.stack.splice(-2, 2, { k: 'n', v: q }, { k: 'n', v: N.mod(a, b, s) });
      return;
    }
    if (c === '+') r = N.add(a, b);
    else if (c === '-') r = N.sub(a, b);
    else if (c === '*') r = N.mul(a, b, s);
    else if (c === '/') r = N.div(a, b, s);
    else if (c === '%') r = N.mod(a, b, s);
    else if (c === '^') r = N.power(a, b, s);
    else {
      const d = N.cmp(a, b);
      r = N.fromInt(({ '(': d > 0, '{': d >= 0, G: d === 0 } as Record<string, boolean>)[c] ? 1 : 0);
    }
    this.stack.splice(-2, 2, { k: 'n', v: r });
  }

  private modexp(): void {
    this.need(3);
    const [a, b, c] = this.stack.slice(-3).map((v) => this.num(v)) as [N.Num, N.Num, N.Num];
    for (const x of [a, b, c]) if (x.n % 10n ** BigInt(x.s) !== 0n) throw new N.CalcError('not an integer');
    const m = N.rescale(c, 0).n;
    if (m === 0n) throw new N.CalcError('divide by zero');
    let e = N.rescale(b, 0).n;
    if (e < 0n) throw new N.CalcError('negative number');
    let base = N.rescale(a, 0).n % m;
    let r = 1n % m;
    for (; e > 0n; e >>= 1n) {
      if (e & 1n) r = (r * base) % m;
      base = (base * base) % m;
    }
    this.stack.splice(-3, 3, { k: 'n', v: { n: r, s: 0 } });
  }

  /** Parses a macro whole before it runs (a parse error in it stops dc before any of it runs). */
  private tokens(text: string): Tok[] {
    let toks = this.parsed.get(text);
    if (!toks) {
      const lx = new DcLexer(text);
      toks = [];
      for (let t = lx.next(); t; t = lx.next()) toks.push(t);
      this.parsed.set(text, toks);
    }
    return toks;
  }

  /** Runs tokens from `next` (the top level's lexer, read one token at a time) and the macros they call. */
  async run(next: () => Tok | undefined, signal: AbortSignal | undefined): Promise<void> {
    const frames: { toks: Tok[]; pc: number }[] = [];
    let steps = 0;
    for (;;) {
      let t: Tok | undefined;
      if (frames.length > 0) {
        const f = frames[frames.length - 1]!;
        t = f.toks[f.pc++];
        if (!t) {
          frames.pop();
          continue;
        }
      } else {
        t = next();
        if (!t) return;
      }
      if (++steps % N.stepsPerPause === 0) await N.pause(signal);
      const levels = frames.length + 1;
      const exec = this.step(t, levels);
      if (typeof exec === 'string') frames.push({ toks: this.tokens(exec), pc: 0 });
      else if (exec > 0) {
        if (exec >= levels) throw new N.CalcQuit();
        frames.length -= exec;
      }
    }
  }

  /** One token: a macro to run (its text), levels to leave (q, Q), or 0. */
  private step(t: Tok, levels: number): string | number {
    const st = this.stack;
    if (t.k === 'num') {
      const v = N.parseNum(t.v, this.ibase);
      st.push({ k: 'n', v: t.neg ? N.neg(v) : v });
      return 0;
    }
    if (t.k === 'str') {
      st.push({ k: 's', v: t.v });
      return 0;
    }
    if (t.k === 'reg') {
      const regs = this.reg(t.r);
      if (t.c === 's') regs[regs.length - 1] = this.pop();
      else if (t.c === 'S') regs.push(this.pop());
      else if (t.c === 'l') st.push(regs[regs.length - 1]!);
      else if (t.c === 'L') {
        if (regs.length < 2) throw new N.CalcError('stack has too few elements');
        st.push(regs.pop()!);
      } else {
        let arr = this.arrays.get(t.r);
        if (!arr) this.arrays.set(t.r, (arr = new Map()));
        const i = N.toUlong(this.num(this.pop()));
        if (t.c === ':') arr.set(i, this.pop());
        else st.push(arr.get(i) ?? { k: 'n', v: N.zero });
      }
      return 0;
    }
    if (t.k === 'cond') {
      this.need(2);
      const b = this.num(this.pop());
      const a = this.num(this.pop());
      const d = N.cmp(a, b);
      const hit = { '<': d > 0, '>': d < 0, '=': d === 0, '!<': d <= 0, '!>': d >= 0, '!=': d !== 0 }[t.c];
      const r = hit ? t.r : t.e;
      if (r === undefined) return 0;
      const v = this.reg(r).at(-1)!;
      if (v.k !== 's') throw new N.CalcError('variable is wrong type');
      return v.v;
    }
    const c = t.c;
    switch (c) {
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
      case '^':
      case '~':
      case '(':
      case '{':
      case 'G':
        this.binary(c);
        return 0;
      case '|':
        this.modexp();
        return 0;
      case 'v':
        st.push({ k: 'n', v: N.sqrt(this.num(this.pop()), this.scale) });
        return 0;
      case 'N':
        st.push({ k: 'n', v: N.fromInt(this.num(this.pop()).n === 0n ? 1 : 0) });
        return 0;
      case 'p':
      case 'n':
        this.printVal(this.top(), true);
        return 0;
      case 'f':
        for (let i = st.length - 1; i >= 0; i--) this.printVal(st[i]!, true);
        return 0;
      case 'P': {
        const v = this.top();
        if (v.k === 's') this.out.write(v.v.split('\0')[0]!);
        else this.out.write(byteStream(v.v));
        return 0;
      }
      case 'c':
        st.length = 0;
        return 0;
      case 'd':
        st.push(this.top());
        return 0;
      case 'r':
        this.need(2);
        st.push(st.splice(-2, 1)[0]!);
        return 0;
      case 'R':
        this.pop();
        return 0;
      case 'z':
        st.push({ k: 'n', v: N.fromInt(st.length) });
        return 0;
      case 'Z':
      case 'X': {
        const v = this.pop();
        const r = v.k === 's' ? (c === 'Z' ? v.v.length : 0) : c === 'Z' ? N.lengthOf(v.v, false) : v.v.s;
        st.push({ k: 'n', v: N.fromInt(r) });
        return 0;
      }
      case 'k':
      case 'i':
      case 'o': {
        const x = N.toUlong(this.num(this.pop()));
        if (c === 'k') {
          if (x > 4294967295) throw new N.CalcError('bad scale; must be [0,4294967295]');
          this.scale = x;
        } else if (c === 'i') {
          if (x < 2 || x > 36) throw new N.CalcError('bad ibase; must be [2,16]');
          this.ibase = x;
        } else {
          if (x < 2 || x > 999) throw new N.CalcError('bad obase; must be [2,999]');
          this.obase = x;
        }
        return 0;
      }
      case 'K':
      case 'I':
      case 'O':
        st.push({ k: 'n', v: N.fromInt(c === 'K' ? this.scale : c === 'I' ? this.ibase : this.obase) });
        return 0;
      case 'a': {
        const v = this.pop();
        let ch: string;
        if (v.k === 's') ch = v.v.slice(0, 1);
        else {
          const m = N.mod(N.rescale(v.v, 0), N.fromInt(256), 0);
          ch = String.fromCharCode(N.toUlong(m));
        }
        st.push({ k: 's', v: ch });
        return 0;
      }
      case 'x': {
        const v = this.top();
        if (v.k !== 's') return 0;
        st.pop();
        return v.v;
      }
      case '?': {
        const line = this.readLine();
        return line === undefined ? 0 : line;
      }
      case 'q':
        if (levels <= 2) throw new N.CalcQuit();
        return 2;
      case 'Q': {
        const n = N.toUlong(this.num(this.pop()));
        if (levels < n) throw new N.CalcError('stack has too few elements');
        return n;
      }
    }
    throw new N.CalcError(`bad character '${c}'`);
  }
}

/**
 * busybox's `dc` (the one in its bc.c): -e SCRIPT and -f FILE run in the order given, then FILE
 * operands, stdin when there is neither; each token runs as it is read (a macro is read whole
 * first), so the output before an error stays; an error says `dc: [FILE:LINE: ]MESSAGE`, exit 1.
 */
export function dcCommand(host: ProgramHost): Command {
  return {
    name: 'dc',
    async execute(args, ctx): Promise<ExecResult> {
      if (args.length === 1 && args[0] === '--help') return { stdout: '', stderr: usage, exitCode: 0 };
      const out = new N.CalcOutput(N.lineWidth(ctx.env.get('DC_LINE_LENGTH'), false));
      const stdin = String(ctx.stdin);
      const jobs: { kind: 'e' | 'f'; v: string }[] = [];
      const p = getopt('dc', usageText, args, 'x', 'ef', null, {
        onOption: (o, v) => {
          if ((o === 'e' || o === 'f') && typeof v === 'string') jobs.push({ kind: o, v: o === 'e' ? Buffer.from(v, 'utf8').toString('latin1') : v });
          return undefined;
        },
      });
      if (isResult(p)) return p;
      const files = p.operands;
      const vm = new DcMachine(out);
      const stdinLines = new N.InputLines(stdin);
      vm.readLine = () => stdinLines.next();
      let lexer: DcLexer | undefined;
      let where = (): string => '';
      const runText = async (text: string, file: string | undefined): Promise<void> => {
        const lx = new DcLexer(text);
        lexer = lx;
        let line = 1;
        where = () => (file === undefined ? '' : `${file}:${line}: `);
        await vm.run(() => {
          const t = lx.next();
          line = lx.line;
          return t;
        }, ctx.signal);
      };
      const runFile = async (name: string): Promise<void> => runText(await N.readProgramFile(host, ctx.cwd, name), name);
      try {
        for (const job of jobs) await (job.kind === 'e' ? runText(job.v, undefined) : runFile(job.v));
        for (const name of files) await runFile(name);
        if (jobs.length + files.length === 0) {
          vm.readLine = () => lexer?.takeLine();
          await runText(stdin, undefined);
        }
      } catch (e) {
        if (e instanceof N.CalcQuit) return bytesOutput(Buffer.from(out.text, 'latin1'));
        if (!(e instanceof N.CalcError)) throw e;
        const at = e instanceof N.CalcBareError ? '' : where();
        return bytesOutput(Buffer.from(out.text, 'latin1'), `dc: ${at}${e.message}\n`, 1);
      }
      return bytesOutput(Buffer.from(out.text, 'latin1'));
    },
  };
}
