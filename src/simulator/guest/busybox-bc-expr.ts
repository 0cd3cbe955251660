import type { BcLexer, Token } from './busybox-bc-lexer.js';
import { CalcError } from './busybox-calc-num.js';

/** One instruction of bc's stack machine (busybox compiles each statement to bytecode the same way). */
export type Instr =
  | { op: 'const'; v: string }
  | { op: 'var' | 'elem' | 'array'; name: string }
  | { op: 'special'; which: 'scale' | 'ibase' | 'obase' | 'last' }
  | { op: 'bin'; o: string }
  | { op: 'neg' | 'not' | 'pop' | 'print' | 'printpop' | 'halt' | 'read' }
  | { op: 'str' | 'printstr'; v: string }
  | { op: 'assign'; o: string }
  | { op: 'incdec'; o: '++' | '--'; post: boolean }
  | { op: 'call'; name: string; n: number }
  | { op: 'builtin'; f: 'length' | 'sqrt' | 'scale' }
  | { op: 'jz' | 'jmp'; to: number }
  | { op: 'ret'; value: boolean };

const prec: Record<string, number> = {
  neg: 1, not: 1, '^': 2, '*': 3, '/': 3, '%': 3, '+': 4, '-': 4,
  '=': 5, '+=': 5, '-=': 5, '*=': 5, '/=': 5, '%=': 5, '^=': 5,
  '==': 6, '<=': 6, '>=': 6, '!=': 6, '<': 6, '>': 6, '&&': 7, '||': 7, 'pre++': 0, 'pre--': 0,
}; // prettier-ignore
const isAssign = (o: string): boolean => prec[o] === 5;
const rightAssoc = (o: string): boolean => o === '^' || isAssign(o) || o === 'neg' || o === 'not' || o.startsWith('pre');
const isRel = (o: string): boolean => prec[o] === 6;

type Frame =
  | { k: 'op'; o: string }
  | { k: '(' }
  | { k: 'call'; name: string; n: number }
  | { k: 'idx'; name: string }
  | { k: 'bi'; f: 'length' | 'sqrt' | 'scale' };

/** A parse error quoting the rest of the line from the current token, as busybox's `bc_error_at`. */
export const errAt = (lx: BcLexer, msg: string): CalcError => new CalcError(`${msg} at '${lx.rest()}'`);

/** Takes the token `t` or refuses with busybox's "bad token". */
function expect(lx: BcLexer, t: Token['t']): void {
  if (lx.tok.t !== t) throw errAt(lx, 'bad token');
  lx.next();
}

/**
 * Compiles an expression up to the first token that cannot continue it, with no recursion on the
 * input: busybox's shunting-yard, with calls, subscripts and builtins as frames on the same operator
 * stack. Says whether its last operator is an assignment (not printed) and whether it began with
 * `(` (printed anyway).
 */
export function compileExpr(lx: BcLexer, code: Instr[], rel: boolean, posix: (msg: string) => void): { assign: boolean; parenFirst: boolean } {
  const ops: Frame[] = [];
  const parenFirst = lx.tok.t === '(';
  let expectOperand = true;
  let ref = false;
  let nrel = 0;
  const popTo = (stop: (f: Frame) => boolean): Frame | undefined => {
    for (;;) {
      const f = ops[ops.length - 1];
      if (!f || stop(f)) return f;
      if (f.k !== 'op') throw errAt(lx, 'bad expression');
      code.push(opInstr(f.o));
      ops.pop();
    }
  };
  const operator = (o: string): void => {
    const r = prec[o]!;
    const left = !rightAssoc(o);
    for (;;) {
      const f = ops[ops.length - 1];
      if (f?.k !== 'op') break;
      const l = prec[f.o]!;
      if (l >= r && (l !== r || !left)) break;
      code.push(opInstr(f.o));
      ops.pop();
    }
    ops.push({ k: 'op', o });
  };
  const operand = (): void => {
    if (!expectOperand) throw errAt(lx, 'bad expression');
  };
  // busybox ends a subscript at whatever token ends its expression, and skips that token as if it were ']'.
  const closeIndex = (): boolean => {
    if (expectOperand) return false;
    let i = ops.length - 1;
    while (i >= 0 && ops[i]!.k === 'op') i--;
    const f = ops[i];
    if (f?.k !== 'idx') return false;
    popTo((x) => x.k !== 'op');
    ops.pop();
    code.push({ op: 'elem', name: f.name });
    ref = true;
    if (lx.tok.t !== 'eof') lx.next();
    return true;
  };
  loop: for (;;) {
    const t = lx.tok;
    switch (t.t) {
      case 'num':
        operand();
        code.push({ op: 'const', v: t.v });
        expectOperand = ref = false;
        lx.next();
        continue;
      case 'name': {
        operand();
        const next = lx.next();
        if (next.t === '(') {
          ops.push({ k: 'call', name: t.v, n: 0 });
          lx.next();
          continue;
        }
        if (next.t === '[') {
          if (lx.next().t === ']') {
            if (ops[ops.length - 1]?.k !== 'call') throw errAt(lx, 'bad expression');
            code.push({ op: 'array', name: t.v });
            lx.next();
            expectOperand = ref = false;
            continue;
          }
          ops.push({ k: 'idx', name: t.v });
          continue;
        }
        code.push({ op: 'var', name: t.v });
        expectOperand = false;
        ref = true;
        continue;
      }
      case 'kw':
        if (!['ibase', 'obase', 'last', 'scale', 'length', 'sqrt', 'read'].includes(t.v)) {
          if (closeIndex()) continue;
          break loop;
        }
        operand();
        if (t.v === 'length' || t.v === 'sqrt' || (t.v === 'scale' && lx.next().t === '(')) {
          if (t.v !== 'scale') {
            lx.next();
            if (lx.tok.t !== '(') throw errAt(lx, 'bad token');
          }
          ops.push({ k: 'bi', f: t.v as 'length' | 'sqrt' | 'scale' });
          lx.next();
          continue;
        }
        if (t.v === 'read') {
          lx.next();
          expect(lx, '(');
          expect(lx, ')');
          code.push({ op: 'read' });
          expectOperand = ref = false;
          continue;
        }
        if (t.v === 'ibase' || t.v === 'obase' || t.v === 'last' || t.v === 'scale') {
          code.push({ op: 'special', which: t.v });
          if (t.v !== 'scale') lx.next();
          expectOperand = false;
          ref = true;
          continue;
        }
        break loop;
      case '(':
        operand();
        ops.push({ k: '(' });
        lx.next();
        continue;
      case ')': {
        if (closeIndex()) continue;
        const top = ops[ops.length - 1];
        if (expectOperand && top?.k === 'call' && top.n === 0 && lx.last.t === '(') {
          ops.pop();
          code.push({ op: 'call', name: top.name, n: 0 });
        } else {
          if (expectOperand) throw errAt(lx, 'bad expression');
          const f = popTo((x) => x.k !== 'op');
          if (!f) break loop;
          ops.pop();
          if (f.k === 'call') code.push({ op: 'call', name: f.name, n: f.n + 1 });
          else if (f.k === 'bi') code.push({ op: 'builtin', f: f.f });
          else if (f.k !== '(') throw errAt(lx, 'bad expression');
        }
        expectOperand = ref = false;
        lx.next();
        continue;
      }
      case ']': {
        if (expectOperand) throw errAt(lx, 'bad expression');
        const f = popTo((x) => x.k !== 'op');
        if (f?.k !== 'idx') break loop;
        ops.pop();
        code.push({ op: 'elem', name: f.name });
        expectOperand = false;
        ref = true;
        lx.next();
        continue;
      }
      case ',': {
        if (closeIndex()) continue;
        if (expectOperand) throw errAt(lx, 'bad expression');
        const f = popTo((x) => x.k !== 'op');
        if (f?.k !== 'call') break loop;
        f.n++;
        expectOperand = true;
        lx.next();
        continue;
      }
      case 'op': {
        const o = t.v;
        if (o === '++' || o === '--') {
          if (!expectOperand && ref) {
            code.push({ op: 'incdec', o, post: true });
            ref = false;
          } else {
            const n = lx.next();
            if (n.t !== 'name' && !(n.t === 'kw' && ['ibase', 'obase', 'last', 'scale'].includes(n.v))) throw errAt(lx, 'bad token');
            ops.push({ k: 'op', o: `pre${o}` });
            continue;
          }
        } else if (o === '-' && expectOperand) {
          ops.push({ k: 'op', o: 'neg' });
        } else if (o === '!') {
          operand();
          ops.push({ k: 'op', o: 'not' });
        } else {
          if (isAssign(o) && (!ref || expectOperand)) throw errAt(lx, 'bad assignment: left side must be variable or array element');
          if (expectOperand) throw errAt(lx, 'bad expression');
          if (isRel(o)) nrel++;
          operator(o);
          expectOperand = true;
          ref = false;
        }
        lx.next();
        continue;
      }
      default:
        if (closeIndex()) continue;
        break loop;
    }
  }
  if (expectOperand) throw errAt(lx, 'bad expression');
  let assign = false;
  while (ops.length > 0) {
    const f = ops.pop()!;
    if (f.k !== 'op') throw errAt(lx, 'bad expression');
    assign = isAssign(f.o);
    code.push(opInstr(f.o));
  }
  if (!rel && nrel) posix('POSIX does not allow comparison operators outside if or loops');
  else if (rel && nrel > 1) posix('POSIX requires exactly one comparison operator per condition');
  return { assign, parenFirst };
}

function opInstr(o: string): Instr {
  if (o === 'neg' || o === 'not') return { op: o };
  if (o === 'pre++' || o === 'pre--') return { op: 'incdec', o: o.slice(3) as '++' | '--', post: false };
  if (isAssign(o)) return { op: 'assign', o };
  return { op: 'bin', o };
}
