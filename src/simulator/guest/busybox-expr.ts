import type { Command, ExecResult } from 'just-bash';
import { longest, posixRegex, PosixRegexError } from './posix-regex.js';
import { bytesOutput } from './bytes-output.js';

/**
 * busybox 1.35's `expr` (coreutils/expr.c), as the test beds run it: 64-bit integers that wrap,
 * strtoll's reading of a number (leading blanks and a sign, clamped to the 64-bit range), strings
 * compared byte by byte when either side is not a number, `:` and `match` as an anchored POSIX
 * basic expression (glibc's regcomp: its GNU `\+ \? \|`; with a `\(…\)` the first group's text,
 * else the length of the match), and `quote`, `length` (bytes), `substr`, `index`. The result is
 * printed; the status is 1 when it is null (0 or empty), 2 with `expr: MESSAGE` on an error.
 *
 * The arguments are read without recursion (expr.c's descent over eval..eval7 becomes a loop with
 * a stack of pending operators): parentheses and keywords nest as deep as the command line goes.
 */

/** A value: an integer (64-bit) or a string of bytes (latin1, a character per byte). */
type Value = { int: bigint } | { str: string };

/** An expression's error: `expr: MESSAGE`, status 2. */
class ExprError extends Error {}

/** The binary operators, by how tightly they bind (eval's `|` loosest, eval5's `:` tightest). */
const binding: Record<string, number> = {
  '|': 1,
  '&': 2,
  '<': 3,
  '<=': 3,
  '=': 3,
  '==': 3,
  '!=': 3,
  '>=': 3,
  '>': 3,
  '+': 4,
  '-': 4,
  '*': 5,
  '/': 5,
  '%': 5,
  ':': 6,
};

/** The keywords eval6 reads before its operands, with how many each takes (`quote` takes the next word as it is). */
const keywords: Record<string, number> = { length: 1, match: 2, substr: 3, index: 2 };

const int64 = (n: bigint): bigint => BigInt.asIntN(64, n);
const str = (s: string): Value => ({ str: s });
const int = (n: bigint): Value => ({ int: int64(n) });
const text = (v: Value): string => ('str' in v ? v.str : String(v.int));

/** strtoll's whole-string reading (toarith): blanks, a sign, digits and nothing after; clamped to the 64-bit range. */
function arith(v: Value): bigint | undefined {
  if ('int' in v) return v.int;
  if (!/^[ \t\n\v\f\r]*[+-]?[0-9]+$/.test(v.str)) return undefined;
  const n = BigInt(v.str.trim());
  const max = 2n ** 63n - 1n;
  return n > max ? max : n < -max - 1n ? -max - 1n : n;
}

/** A null value: the integer 0, the empty string or `0`. */
const isNull = (v: Value): boolean => ('int' in v ? v.int === 0n : v.str === '' || v.str === '0');

/** `STRING : PATTERN`: an anchored match of a basic regular expression (docolon). */
function docolon(subject: Value, pattern: Value, warn: (message: string) => void): Value {
  const s = text(subject);
  const p = text(pattern);
  if (p.startsWith('^')) warn(`warning: '${p}': using '^' as the first character\nof a basic regular expression is not portable; it is ignored`);
  let regex;
  try {
    regex = posixRegex(p);
  } catch (err) {
    if (err instanceof PosixRegexError) throw new ExprError(`bad regex '${p}': ${err.message}`);
    throw err;
  }
  // How many `\(…\)` the expression has (re_nsub): the groups of a match of the empty string by it or nothing.
  const groups = new RegExp(`${regex.re.source}|`).exec('')!.length - 1;
  regex.re.lastIndex = 0;
  const found = regex.re.exec(s);
  if (!found || found.index !== 0) return groups > 0 ? str('') : int(0n);
  const m = longest(regex, regex.re, s, found);
  if (groups > 0 && m[1] !== undefined) return str(m[1]);
  return int(BigInt(m[0].length));
}

/** A binary operator on its two operands (eval..eval5). */
function binary(op: string, l: Value, r: Value, warn: (message: string) => void): Value {
  switch (op) {
    case '|':
      return isNull(l) ? r : l;
    case '&':
      return isNull(l) || isNull(r) ? int(0n) : l;
    case ':':
      return docolon(l, r, warn);
    case '+':
    case '-':
    case '*':
    case '/':
    case '%': {
      const [a, b] = [arith(l), arith(r)];
      if (a === undefined || b === undefined) throw new ExprError('non-numeric argument');
      if (op === '+') return int(a + b);
      if (op === '-') return int(a - b);
      if (op === '*') return int(a * b);
      if (b === 0n) throw new ExprError('division by zero');
      return int(op === '/' ? a / b : a % b);
    }
    default: {
      // A comparison: as integers when both read as ones, else as strings (strcoll in the C locale: bytes).
      const [a, b] = [arith(l), arith(r)];
      const [x, y] = a !== undefined && b !== undefined ? [a, b] : [text(l) < text(r) ? -1n : text(l) > text(r) ? 1n : 0n, 0n];
      const holds = { '<': x < y, '<=': x <= y, '=': x === y, '==': x === y, '!=': x !== y, '>=': x >= y, '>': x > y }[op]!;
      return int(holds ? 1n : 0n);
    }
  }
}

/** A keyword on its operands (eval6). */
function keyword(name: string, operands: Value[], warn: (message: string) => void): Value {
  const [a, b, c] = operands as [Value, Value, Value];
  switch (name) {
    case 'length':
      return int(BigInt(text(a).length));
    case 'match':
      return docolon(a, b, warn);
    case 'substr': {
      const s = text(a);
      const [from, length] = [arith(b), arith(c)];
      if (from === undefined || length === undefined || from > BigInt(s.length) || from <= 0n || length <= 0n) return str('');
      return str(s.slice(Number(from) - 1, Number(from - 1n + length)));
    }
    default: {
      // index: the first byte of the string that is one of the characters (strcspn), 0 for none.
      const s = text(a);
      const chars = text(b);
      const at = [...s].findIndex((ch) => chars.includes(ch));
      return int(BigInt(at < 0 ? 0 : at + 1));
    }
  }
}

/** What is pending while the arguments are read: an open parenthesis, a binary operator after its left operand, a keyword and the operands it has. */
type Pending = { paren: true } | { op: string; left: Value } | { keyword: string; operands: Value[] };

/** Evaluates expr's arguments (bytes as latin1 strings). */
function evaluate(args: string[], warn: (message: string) => void): Value {
  const stack: Pending[] = [];
  let i = 0;
  /** Applies the binary operators on top of the stack that bind at least as tightly as `level`, to `right`. */
  const reduce = (right: Value, level: number): Value => {
    let value = right;
    for (let top = stack.at(-1); top && 'op' in top && binding[top.op]! >= level; top = stack.at(-1)) {
      stack.pop();
      value = binary(top.op, top.left, value, warn);
    }
    return value;
  };
  for (;;) {
    // An operand (eval6, eval7): a keyword's operands, a parenthesised expression or a word.
    let operand: Value | undefined;
    while (operand === undefined) {
      const word = args[i++];
      if (word === undefined || word === ')') throw new ExprError('syntax error');
      if (word === '(') stack.push({ paren: true });
      else if (word === 'quote') {
        const quoted = args[i++];
        if (quoted === undefined) throw new ExprError('syntax error');
        operand = str(quoted);
      } else if (Object.hasOwn(keywords, word)) stack.push({ keyword: word, operands: [] });
      else operand = str(word);
    }
    // What follows an operand: it completes the keywords waiting for it, then an operator, a `)` or the end.
    for (;;) {
      const top = stack.at(-1);
      if (top && 'keyword' in top) {
        top.operands.push(operand);
        if (top.operands.length < keywords[top.keyword]!) break;
        stack.pop();
        operand = keyword(top.keyword, top.operands, warn);
        continue;
      }
      const word = args[i];
      if (word !== undefined && Object.hasOwn(binding, word)) {
        i++;
        stack.push({ op: word, left: reduce(operand, binding[word]!) });
        break;
      }
      operand = reduce(operand, 0);
      if (word === ')' && stack.at(-1) && 'paren' in stack.at(-1)!) {
        i++;
        stack.pop();
        continue;
      }
      // The end of the arguments, with no parenthesis open: the result. Anything else is a word where an operator belongs.
      if (word !== undefined || stack.length > 0) throw new ExprError('syntax error');
      return operand;
    }
  }
}

export function exprCommand(): Command {
  return {
    name: 'expr',
    async execute(args): Promise<ExecResult> {
      let stderr = '';
      const warn = (message: string): void => void (stderr += `expr: ${message}\n`);
      try {
        if (args.length === 0) throw new ExprError('too few arguments');
        const result = evaluate(
          args.map((a) => Buffer.from(a, 'utf8').toString('latin1')),
          warn,
        );
        // Its bytes as they are: `substr` and `:` can cut a character of UTF-8 in two.
        return bytesOutput(Buffer.from(`${text(result)}\n`, 'latin1'), stderr, isNull(result) ? 1 : 0);
      } catch (err) {
        if (!(err instanceof ExprError)) throw err;
        return { stdout: '', stderr: `${stderr}expr: ${err.message}\n`, exitCode: 2 };
      }
    },
  };
}
