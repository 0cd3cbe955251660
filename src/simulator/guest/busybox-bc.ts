import type { Command, ExecResult } from 'just-bash';
import { BcCompiler, type BcFunction } from './busybox-bc-compiler.js';
import { compileExpr, errAt, type Instr } from './busybox-bc-expr.js';
import { bcLibrary } from './busybox-bc-library.js';
import { BcLexer } from './busybox-bc-lexer.js';
import * as N from './busybox-calc-num.js';
import { banner } from './busybox-getopt.js';
import { type ProgramHost } from './program-host.js';
import { bytesOutput } from './bytes-output.js';

const usage =
  `${banner}Usage: bc [-sqlw] [FILE]...\n\nArbitrary precision calculator\n\n` +
  '\t-q\tQuiet\n\t-l\tLoad standard library\n\t-s\tBe POSIX compatible\n\t-w\tWarn if extensions are used\n\n$BC_LINE_LENGTH changes output width\n';

type Val =
  | { k: 'n'; v: N.Num }
  | { k: 'var' | 'arr'; name: string }
  | { k: 'elem'; name: string; i: number }
  | { k: 'sp'; which: 'scale' | 'ibase' | 'obase' | 'last' }
  | { k: 'void' }
  | { k: 's'; v: string };

type Arr = Map<number, N.Num>;
interface Frame {
  code: Instr[];
  pc: number;
  fn?: BcFunction;
  base: number;
}

const one = N.fromInt(1);
const bool = (b: boolean): N.Num => (b ? one : N.zero);

/** bc's state and stack machine: variables and arrays as stacks of scopes, no recursion in the host. */
class BcMachine {
  scale = 0;
  ibase = 10;
  obase = 10;
  last: N.Num = N.zero;
  vars = new Map<string, N.Num[]>();
  arrays = new Map<string, Arr[]>();
  funcs = new Map<string, BcFunction>();
  stack: Val[] = [];
  /** Where read() takes its line: stdin's next one (the program's own input when stdin is the program). */
  readLine: () => string | undefined = () => undefined;

  constructor(readonly out: N.CalcOutput) {}

  private varScope(name: string): N.Num[] {
    let s = this.vars.get(name);
    if (!s) this.vars.set(name, (s = [N.zero]));
    return s;
  }

  arrScope(name: string): Arr[] {
    let s = this.arrays.get(name);
    if (!s) this.arrays.set(name, (s = [new Map()]));
    return s;
  }

  num(v: Val | undefined): N.Num {
    if (!v) throw new N.CalcError('stack has too few elements');
    switch (v.k) {
      case 'n':
        return v.v;
      case 'var':
        return this.varScope(v.name).at(-1)!;
      case 'elem':
        return this.arrScope(v.name).at(-1)!.get(v.i) ?? N.zero;
      case 'sp':
        return v.which === 'last' ? this.last : N.fromInt(this[v.which]);
      case 'void':
        return N.zero;
      default:
        throw new N.CalcError('variable is wrong type');
    }
  }

  private store(ref: Val, v: N.Num): void {
    if (ref.k === 'var') this.varScope(ref.name)[this.varScope(ref.name).length - 1] = v;
    else if (ref.k === 'elem') this.arrScope(ref.name).at(-1)!.set(ref.i, v);
    else if (ref.k === 'sp') {
      if (ref.which === 'last') this.last = v;
      else {
        const msg = { ibase: 'bad ibase; must be [2,16]', obase: 'bad obase; must be [2,999]', scale: 'bad scale; must be [0,4294967295]' }[
          ref.which
        ];
        const x = N.toUlong(v);
        if (ref.which !== 'scale' && x < 2) throw new N.CalcError(msg);
        if (x > { ibase: 36, obase: 999, scale: 4294967295 }[ref.which]) throw new N.CalcError(msg);
        this[ref.which] = x;
      }
    } else throw new N.CalcError('bad assignment: left side must be variable or array element');
  }

  private binary(o: string, a: N.Num, b: N.Num): N.Num {
    const s = this.scale;
    switch (o) {
      case '+':
        return N.add(a, b);
      case '-':
        return N.sub(a, b);
      case '*':
        return N.mul(a, b, s);
      case '/':
        return N.div(a, b, s);
      case '%':
        return N.mod(a, b, s);
      case '^':
        return N.power(a, b, s);
      case '&&':
        return bool(a.n !== 0n && b.n !== 0n);
      case '||':
        return bool(a.n !== 0n || b.n !== 0n);
    }
    const c = N.cmp(a, b);
    return bool({ '==': c === 0, '!=': c !== 0, '<': c < 0, '<=': c <= 0, '>': c > 0, '>=': c >= 0 }[o]!);
  }

  /** A value's number printed (with a newline: a statement's value; without: `print`'s), which becomes `last`. */
  private printNum(v: Val, newline: boolean): void {
    const n = this.num(v);
    this.out.printNum(n, this.obase, newline);
    this.last = n;
  }

  /** Runs code to its end (a top-level statement): calls push frames, returns pop them. */
  async run(main: Instr[], signal: AbortSignal | undefined): Promise<void> {
    const frames: Frame[] = [{ code: main, pc: 0, base: 0 }];
    const st = this.stack;
    let steps = 0;
    while (frames.length > 0) {
      const f = frames[frames.length - 1]!;
      const ins = f.code[f.pc++];
      if (++steps % N.stepsPerPause === 0) await N.pause(signal);
      if (!ins) {
        frames.pop();
        continue;
      }
      switch (ins.op) {
        case 'const':
          st.push({ k: 'n', v: N.parseNum(ins.v, this.ibase) });
          break;
        case 'str':
          st.push({ k: 's', v: ins.v });
          break;
        case 'var':
          st.push({ k: 'var', name: ins.name });
          break;
        case 'array':
          st.push({ k: 'arr', name: ins.name });
          break;
        case 'elem': {
          const i = N.toUlong(this.num(st.pop()));
          if (i > 2147483647) throw new N.CalcError('array too long; must be [1,2147483647]');
          st.push({ k: 'elem', name: ins.name, i });
          break;
        }
        case 'special':
          st.push({ k: 'sp', which: ins.which });
          break;
        case 'bin': {
          const b = this.num(st.pop());
          const a = this.num(st.pop());
          st.push({ k: 'n', v: this.binary(ins.o, a, b) });
          break;
        }
        case 'neg':
          st.push({ k: 'n', v: N.neg(this.num(st.pop())) });
          break;
        case 'not':
          st.push({ k: 'n', v: bool(this.num(st.pop()).n === 0n) });
          break;
        case 'assign': {
          const r = this.num(st.pop());
          const ref = st.pop()!;
          const v = ins.o === '=' ? r : this.binary(ins.o.slice(0, -1), this.num(ref), r);
          this.store(ref, v);
          st.push({ k: 'n', v });
          break;
        }
        case 'incdec': {
          const ref = st.pop()!;
          const old = this.num(ref);
          const v = ins.o === '++' ? N.add(old, one) : N.sub(old, one);
          this.store(ref, v);
          st.push({ k: 'n', v: ins.post ? old : v });
          break;
        }
        case 'builtin': {
          const v = this.num(st.pop());
          const r = ins.f === 'sqrt' ? N.sqrt(v, this.scale) : N.fromInt(ins.f === 'scale' ? v.s : N.lengthOf(v, true));
          st.push({ k: 'n', v: r });
          break;
        }
        case 'read':
          frames.push({ code: this.compileRead(), pc: 0, base: st.length });
          break;
        case 'pop':
          st.pop();
          break;
        case 'print': {
          const v = st.pop()!;
          if (v.k !== 'void') this.printNum(v, true);
          break;
        }
        case 'printpop': {
          const v = st.pop()!;
          if (v.k === 's') this.out.printString(v.v);
          else if (v.k !== 'void') this.printNum(v, false);
          break;
        }
        case 'printstr': {
          this.out.write(ins.v);
          const nl = ins.v.lastIndexOf('\n');
          this.out.nchars = nl < 0 ? this.out.nchars + ins.v.length : ins.v.length - nl - 1;
          break;
        }
        case 'jz':
          if (this.num(st.pop()).n === 0n) f.pc = ins.to;
          break;
        case 'jmp':
          f.pc = ins.to;
          break;
        case 'halt':
          throw new N.CalcQuit();
        case 'call':
          frames.push(this.call(ins.name, ins.n));
          break;
        case 'ret': {
          const v: Val = ins.value ? { k: 'n', v: this.num(st.pop()) } : f.fn?.isVoid ? { k: 'void' } : { k: 'n', v: N.zero };
          st.length = f.base;
          for (const name of [...f.fn!.params, ...f.fn!.autos]) {
            if (name.endsWith('[]')) this.arrScope(name.replace(/^\*|\[\]$/g, '')).pop();
            else this.varScope(name).pop();
          }
          frames.pop();
          st.push(v);
          break;
        }
      }
    }
  }

  /** read(): the next input line compiled as an expression, which runs as a frame and leaves its value. */
  private compileRead(): Instr[] {
    const line = this.readLine();
    if (line === undefined) throw new N.CalcBareError('bad expression');
    const lx = new BcLexer(`${line}\n`, undefined);
    const code: Instr[] = [];
    try {
      lx.next();
      compileExpr(lx, code, false, () => {});
      if (lx.tok.t !== 'nl' && lx.tok.t !== 'eof') throw errAt(lx, 'bad read() expression');
    } catch (e) {
      throw e instanceof N.CalcError ? new N.CalcBareError(e.message) : e;
    }
    return code;
  }

  private call(name: string, n: number): Frame {
    const fn = this.funcs.get(name);
    if (!fn) throw new N.CalcError('undefined function');
    if (n !== fn.params.length) throw new N.CalcError(`function has ${fn.params.length} parameters, but called with ${n}`);
    const args = this.stack.splice(this.stack.length - n, n);
    const bound: [string, N.Num | Arr][] = fn.params.map((p, i) => {
      const a = args[i]!;
      if (!p.endsWith('[]')) return [p, this.num(a)];
      if (a.k !== 'arr') throw new N.CalcError('variable is wrong type');
      const src = this.arrScope(a.name).at(-1)!;
      return [p, p.startsWith('*') ? src : new Map(src)];
    });
    for (const [p, v] of bound) {
      if (v instanceof Map) this.arrScope(p.replace(/^\*|\[\]$/g, '')).push(v);
      else this.varScope(p).push(v);
    }
    for (const a of fn.autos) {
      if (a.endsWith('[]')) this.arrScope(a.slice(0, -2)).push(new Map());
      else this.varScope(a).push(N.zero);
    }
    return { code: fn.code, pc: 0, fn, base: this.stack.length };
  }
}

/**
 * busybox's `bc` (its port of Gavin Howard's bc): `-l` loads the math library (s c a l e j, scale 20),
 * `-s` makes POSIX extensions errors and `-w` warnings, `-q` changes nothing off a terminal; the
 * FILE operands run in order, then stdin; statements run as each is read, so the output before an
 * error stays; an error says `bc: [FILE:LINE: ]MESSAGE` and ends bc with 1.
 */
export function bcCommand(host: ProgramHost): Command {
  return {
    name: 'bc',
    async execute(args, ctx): Promise<ExecResult> {
      if (args.length === 1 && args[0] === '--help') return { stdout: '', stderr: usage, exitCode: 0 };
      let flags = '';
      // BC_ENV_ARGS's files come first; its options are lost (busybox's second getopt32 overwrites them).
      const envFiles = (ctx.env.get('BC_ENV_ARGS') ?? '').split(/\s+/).filter((w) => w !== '' && !w.startsWith('-'));
      const files: string[] = [...envFiles];
      const argv = args;
      for (const [i, a] of argv.entries()) {
        if (a === '--') {
          files.push(...argv.slice(i + 1));
          break;
        }
        const long = { '--warn': 'w', '--standard': 's', '--quiet': 'q', '--mathlib': 'l', '--interactive': 'i', '--version': 'v' }[a];
        if (long) flags += long;
        else if (a.startsWith('-') && a.length > 1) {
          const bad = [...a.slice(1)].find((c) => !'wvsqli'.includes(c));
          if (bad) return { stdout: '', stderr: `bc: invalid option -- '${bad}'\n${usage}`, exitCode: 1 };
          flags += a.slice(1);
        } else files.push(a);
      }
      if (flags.includes('v')) {
        return {
          stdout: 'bc 1.35.0\nAdapted from https://github.com/gavinhoward/bc\nOriginal code (c) 2018 Gavin D. Howard and contributors\n',
          stderr: '',
          exitCode: 0,
        };
      }
      if (ctx.env.get('POSIXLY_CORRECT') !== undefined) flags += 's';
      const out = new N.CalcOutput(N.lineWidth(ctx.env.get('BC_LINE_LENGTH'), true));
      const vm = new BcMachine(out);
      let stderr = '';
      let lexer: BcLexer | undefined;
      let file: string | undefined;
      const where = (): string => (file !== undefined && lexer ? `${file}:${lexer.tok.line}: ` : '');
      const posixMsg = (msg: string): void => {
        if (flags.includes('s')) throw new N.CalcError(msg);
        if (flags.includes('w')) stderr += `bc: ${where()}${msg}\n`;
      };
      // read() takes stdin's lines: the ones after the program's own statement when stdin is the program.
      const stdin = new N.InputLines(String(ctx.stdin));
      vm.readLine = () => stdin.next();
      const runText = async (text: string, name: string | undefined, report: boolean): Promise<void> => {
        // Only -s and -w look at extensions (a message quotes the rest of its line: built only for them).
        const check = report && (flags.includes('s') || flags.includes('w')) ? posixMsg : undefined;
        const lx = new BcLexer(text, check);
        lexer = lx;
        file = name;
        const compiler = new BcCompiler(
          lx,
          (m) => report && posixMsg(m),
          out,
          (f, fn) => vm.funcs.set(f, fn),
        );
        lx.next();
        for (;;) {
          while (lx.tok.t === 'nl' || lx.tok.t === ';') lx.next();
          if (lx.tok.t === 'eof') return;
          compiler.code = [];
          compiler.statement();
          if ((lx.tok.t as string) !== ';' && (lx.tok.t as string) !== 'nl' && (lx.tok.t as string) !== 'eof')
            throw new N.CalcError(`bad statement terminator at '${lx.rest()}'`);
          await vm.run(compiler.code, ctx.signal);
        }
      };
      try {
        if (flags.includes('l')) await runText(bcLibrary, undefined, false);
        for (const name of files) await runText(await N.readProgramFile(host, ctx.cwd, name), name, true);
        vm.readLine = () => lexer?.takeLine();
        await runText(stdin.rest, undefined, true);
      } catch (e) {
        if (e instanceof N.CalcQuit) return bytesOutput(Buffer.from(out.text, 'latin1'), stderr);
        if (!(e instanceof N.CalcError)) throw e;
        const at = e instanceof N.CalcBareError ? '' : where();
        return bytesOutput(Buffer.from(out.text, 'latin1'), `${stderr}bc: ${at}${e.message}\n`, 1);
      }
      return bytesOutput(Buffer.from(out.text, 'latin1'), stderr);
    },
  };
}
