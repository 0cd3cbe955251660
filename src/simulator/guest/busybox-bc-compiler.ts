import { compileExpr, errAt, type Instr } from './busybox-bc-expr.js';
import type { BcLexer, Token } from './busybox-bc-lexer.js';
import { CalcError, CalcQuit } from './busybox-calc-num.js';

/** A function as `define` makes it: parameters and autos (`[]` marks an array, `*` a reference). */
export interface BcFunction {
  params: string[];
  autos: string[];
  code: Instr[];
  isVoid: boolean;
}

const limitsText =
  'BC_BASE_MAX     = 999\nBC_DIM_MAX      = 2147483647\nBC_SCALE_MAX    = 4294967295\n' +
  'BC_STRING_MAX   = 4294967294\nMAX Exponent    = 999999999\nNumber of vars  = 999999999\n';

type Ctx =
  | { k: 'block' }
  | { k: 'func'; name: string; fn: BcFunction; outer: Instr[] }
  | { k: 'if'; jz: number }
  | { k: 'else'; jmp: number }
  | { k: 'loop'; cont: number; jz: number; breaks: number[] };

/**
 * bc's parser: one top-level statement or `define` at a time into bytecode, with no recursion on
 * the input (expressions by shunting-yard with calls and subscripts on the same operator stack;
 * nested statements on an explicit stack of open blocks, ifs and loops).
 */
export class BcCompiler {
  code: Instr[] = [];
  private stack: Ctx[] = [];

  constructor(
    readonly lx: BcLexer,
    private readonly posix: (msg: string) => void,
    private readonly out: { write(s: string): void },
    private readonly define: (name: string, fn: BcFunction) => void,
  ) {}

  private errAt(msg: string): CalcError {
    return errAt(this.lx, msg);
  }

  private expr(rel: boolean): { assign: boolean; parenFirst: boolean } {
    return compileExpr(this.lx, this.code, rel, this.posix);
  }

  private get tok(): Token {
    return this.lx.tok;
  }

  private expect(t: Token['t'], v?: string): void {
    if (this.tok.t !== t || (v !== undefined && this.tok.v !== v)) throw this.errAt('bad token');
    this.lx.next();
  }

  private emitExprStmt(): void {
    const { assign, parenFirst } = this.expr(false);
    if (parenFirst || !assign) this.code.push({ op: 'print' });
    else this.code.push({ op: 'pop' });
  }

  private startsExpr(tok: Token): boolean {
    if (tok.t === 'num' || tok.t === 'name' || tok.t === '(') return true;
    if (tok.t === 'op') return ['-', '!', '++', '--'].includes(tok.v);
    return tok.t === 'kw' && ['ibase', 'obase', 'last', 'scale', 'length', 'sqrt', 'read'].includes(tok.v);
  }

  private cond(): void {
    this.expect('(');
    this.expr(true);
    this.expect(')');
  }

  private bodyNext(after: string): void {
    if (this.tok.t === 'nl') {
      this.lx.next();
      if (this.tok.t === 'nl') throw new CalcError(`no statement after '${after}'`);
    }
    if (this.tok.t === 'eof') throw this.errAt('bad token');
  }

  private loopCtx(): Extract<Ctx, { k: 'loop' }> | undefined {
    for (let i = this.stack.length - 1; i >= 0; i--) {
      const c = this.stack[i]!;
      if (c.k === 'loop') return c;
      if (c.k === 'func') return undefined;
    }
    return undefined;
  }

  private inFunc(): boolean {
    return this.stack.some((c) => c.k === 'func');
  }

  /** Compiles one whole top-level statement (with everything nested in it) or one `define`. */
  statement(): void {
    for (;;) {
      if (this.opener()) continue;
      // A statement just ended: close the ifs and loops it was the body of.
      for (;;) {
        const top = this.stack[this.stack.length - 1];
        if (!top) return;
        if (top.k === 'if') {
          this.stack.pop();
          if (this.tok.t === 'kw' && this.tok.v === 'else') {
            const jmp = this.code.push({ op: 'jmp', to: -1 }) - 1;
            (this.code[top.jz] as { to: number }).to = this.code.length;
            this.stack.push({ k: 'else', jmp });
            this.lx.next();
            this.bodyNext('else');
            break;
          }
          (this.code[top.jz] as { to: number }).to = this.code.length;
          continue;
        }
        if (top.k === 'else') {
          this.stack.pop();
          (this.code[top.jmp] as { to: number }).to = this.code.length;
          continue;
        }
        if (top.k === 'loop') {
          this.stack.pop();
          this.code.push({ op: 'jmp', to: top.cont });
          for (const at of [top.jz, ...top.breaks]) (this.code[at] as { to: number }).to = this.code.length;
          continue;
        }
        // Inside a block: separators, then the next statement or the block's end (the input's end is a bad token).
        if (this.tok.t === 'eof') throw this.errAt('bad token');
        if (this.tok.t !== ';' && this.tok.t !== 'nl' && this.tok.t !== '}') throw this.errAt('bad statement terminator');
        while (this.tok.t === ';' || this.tok.t === 'nl') this.lx.next();
        if ((this.tok.t as string) === 'eof') throw this.errAt('bad token');
        if (this.tok.t !== '}') break;
        this.stack.pop();
        if (top.k === 'func') {
          this.code.push({ op: 'ret', value: false });
          this.code = top.outer;
        }
        this.lx.next();
      }
    }
  }

  /** Compiles an opener (`{`, if, while, for, define: true, the body follows) or a simple statement (false). */
  private opener(): boolean {
    const t = this.tok;
    const code = this.code;
    if (t.t === '{') {
      this.stack.push({ k: 'block' });
      this.lx.next();
      while (this.tok.t === ';' || this.tok.t === 'nl') this.lx.next();
      if (this.tok.t !== '}') return true;
      this.stack.pop();
      this.lx.next();
      return false;
    }
    if (t.t === 'kw' && (t.v === 'if' || t.v === 'while')) {
      this.lx.next();
      const start = code.length;
      this.cond();
      const jz = code.push({ op: 'jz', to: -1 }) - 1;
      this.stack.push(t.v === 'if' ? { k: 'if', jz } : { k: 'loop', cont: start, jz, breaks: [] });
      this.bodyNext(t.v);
      return true;
    }
    if (t.t === 'kw' && t.v === 'for') {
      this.lx.next();
      this.expect('(');
      if (this.tok.t !== ';') {
        this.expr(false);
        code.push({ op: 'pop' });
      } else this.posix("POSIX does not allow an empty init expression in 'for()'");
      this.expect(';');
      const condAt = code.length;
      if (this.tok.t !== ';') this.expr(true);
      else {
        this.posix("POSIX does not allow an empty condition expression in 'for()'");
        code.push({ op: 'const', v: '1' });
      }
      this.expect(';');
      const jz = code.push({ op: 'jz', to: -1 }) - 1;
      const toBody = code.push({ op: 'jmp', to: -1 }) - 1;
      const cont = code.length;
      if (this.tok.t !== ')') {
        this.expr(false);
        code.push({ op: 'pop' });
      } else this.posix("POSIX does not allow an empty update expression in 'for()'");
      this.expect(')');
      code.push({ op: 'jmp', to: condAt });
      (code[toBody] as { to: number }).to = code.length;
      this.stack.push({ k: 'loop', cont, jz, breaks: [] });
      this.bodyNext('for');
      return true;
    }
    if (t.t === 'kw' && t.v === 'define' && this.stack.length === 0) return this.defineHeader();
    this.simple();
    return false;
  }

  private defineHeader(): boolean {
    const bad = (): CalcError => this.errAt('bad function definition');
    let isVoid = false;
    this.lx.next();
    if (this.tok.t === 'name' && this.tok.v === 'void') {
      isVoid = this.lx.next().t === 'name';
      if (!isVoid) throw bad();
    }
    if (this.tok.t !== 'name') throw bad();
    const name = this.tok.v;
    if (this.lx.next().t !== '(') throw bad();
    const fn: BcFunction = { params: [], autos: [], code: [], isVoid };
    const seen = new Set<string>();
    const addName = (list: string[], n: string): void => {
      if (seen.has(n.replace('*', ''))) throw new CalcError('duplicate function parameter or auto name');
      seen.add(n.replace('*', ''));
      list.push(n);
    };
    this.lx.next();
    while ((this.tok.t as string) !== ')') {
      let star = '';
      if ((this.tok.t as string) === 'op' && this.tok.v === '*') {
        this.posix('POSIX does not allow references');
        star = '*';
        this.lx.next();
      }
      if ((this.tok.t as string) !== 'name') throw bad();
      let n = star + this.tok.v;
      if (this.lx.next().t === '[') {
        if (this.lx.next().t !== ']') throw bad();
        n += '[]';
        this.lx.next();
      } else if (star) throw this.errAt("vars can't be references");
      addName(fn.params, n);
      if ((this.tok.t as string) === ',') {
        if (this.lx.next().t === ')') throw bad();
      } else if ((this.tok.t as string) !== ')') throw bad();
    }
    if (this.lx.next().t === 'nl') {
      this.posix('POSIX requires the left brace be on the same line as the function header');
      this.lx.next();
    }
    if ((this.tok.t as string) !== '{') throw new CalcError('function { body } expected');
    this.lx.next();
    while ((this.tok.t as string) === 'nl') this.lx.next();
    if ((this.tok.t as string) === 'kw' && this.tok.v === 'auto') {
      this.lx.next();
      for (;;) {
        if ((this.tok.t as string) !== 'name') throw this.errAt("bad 'auto' syntax");
        let n = this.tok.v;
        if (this.lx.next().t === '[') {
          if (this.lx.next().t !== ']') throw this.errAt("bad 'auto' syntax");
          n += '[]';
          this.lx.next();
        }
        addName(fn.autos, n);
        if ((this.tok.t as string) !== ',') break;
        this.lx.next();
      }
      if ((this.tok.t as string) !== ';' && (this.tok.t as string) !== 'nl') throw this.errAt("bad 'auto' syntax");
    }
    this.define(name, fn);
    this.stack.push({ k: 'func', name, fn, outer: this.code });
    this.code = fn.code;
    while ((this.tok.t as string) === ';' || (this.tok.t as string) === 'nl') this.lx.next();
    if ((this.tok.t as string) !== '}') return true;
    const outer = (this.stack.pop() as { outer: Instr[] }).outer;
    fn.code.push({ op: 'ret', value: false });
    this.code = outer;
    this.lx.next();
    return false;
  }

  private simple(): void {
    const t = this.tok;
    const code = this.code;
    if (t.t === ';' || t.t === 'nl' || t.t === 'eof') return;
    if (this.startsExpr(t)) return this.emitExprStmt();
    if (t.t === 'str') {
      code.push({ op: 'printstr', v: t.v });
      this.lx.next();
      return;
    }
    if (t.t !== 'kw') throw this.errAt('bad token');
    switch (t.v) {
      case 'print':
        for (;;) {
          this.lx.next();
          if (this.tok.t === 'str') {
            code.push({ op: 'str', v: this.tok.v });
            this.lx.next();
          } else this.expr(false);
          code.push({ op: 'printpop' });
          if (this.tok.t !== ',') return;
        }
      case 'break':
      case 'continue': {
        const loop = this.loopCtx();
        if (!loop) throw this.errAt('bad token');
        const at = code.push({ op: 'jmp', to: loop.cont }) - 1;
        if (t.v === 'break') loop.breaks.push(at);
        this.lx.next();
        return;
      }
      case 'return': {
        if (!this.inFunc()) throw new CalcError("'return' not in a function");
        const next = this.lx.next();
        if (next.t === 'nl' || next.t === ';' || next.t === '}' || next.t === 'eof') {
          code.push({ op: 'ret', value: false });
          return;
        }
        this.expr(false);
        if (next.t !== '(' || this.lx.last.t !== ')') this.posix('POSIX requires parentheses around return expressions');
        code.push({ op: 'ret', value: true });
        return;
      }
      case 'quit':
        throw new CalcQuit();
      case 'halt':
        code.push({ op: 'halt' });
        this.lx.next();
        return;
      case 'limits':
        this.out.write(limitsText);
        this.lx.next();
        return;
      default:
        throw this.errAt('bad token');
    }
  }
}
