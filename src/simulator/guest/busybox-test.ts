import type { Command, ExecResult } from 'just-bash';

/** A token of busybox test's grammar (test.c's `check_operator`). */
type Token = 'EOI' | 'OPERAND' | 'UNOP' | 'BINOP' | 'NOT' | 'AND' | 'OR' | 'LPAREN' | 'RPAREN';

const unary = new Set(['-r', '-w', '-x', '-e', '-f', '-d', '-c', '-b', '-p', '-u', '-g', '-k', '-s', '-t', '-z', '-n', '-L', '-h', '-S', '-O', '-G']);
const binary = new Set(['=', '==', '!=', '<', '>', '-eq', '-ne', '-ge', '-gt', '-le', '-lt', '-nt', '-ot', '-ef']);
const numeric = new Set(['-eq', '-ne', '-ge', '-gt', '-le', '-lt']);
const others: Record<string, Token> = { '!': 'NOT', '-a': 'AND', '-o': 'OR', '(': 'LPAREN', ')': 'RPAREN' };

function tokenOf(word: string | undefined): Token {
  if (word === undefined) return 'EOI';
  if (unary.has(word)) return 'UNOP';
  if (binary.has(word)) return 'BINOP';
  return others[word] ?? 'OPERAND';
}

/** test.c's `syntax()`: the message, ending the evaluation (its longjmp). */
class TestSyntax extends Error {}
const syntax = (op: string | undefined, msg: string): never => {
  throw new TestSyntax(op ? `sh: ${op}: ${msg}` : `sh: ${msg}`);
};

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** test.c's `getn()`: strtoll base 10 over the whole word (blanks around it, a sign), else `out of range` or `bad number`. */
function getn(word: string): void {
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(word);
  if (m && (BigInt(m[1]!) < INT64_MIN || BigInt(m[1]!) > INT64_MAX)) syntax(word, 'out of range');
  if (!m || !/^[ \t\n\v\f\r]*$/.test(word.slice(m[0].length))) syntax(word, 'bad number');
}

/**
 * The syntax of a `test` (or `[` without its `]`) as busybox's test.c reads it: POSIX's special
 * cases for up to four arguments, then its grammar (`oexpr`, `aexpr`, `nexpr`, `primary`,
 * `binop`), the numbers of the integer comparisons read as it reads them, and an argument left
 * over. Answers the error busybox says (`sh: 2: unknown operand`, `sh: closing paren expected`,
 * `sh: argument expected`, `sh: X: bad number`), or undefined when the words are a test it
 * evaluates; the evaluation itself is just-bash's (patched, item 57). test.c recurses; for the
 * syntax alone the grammar is a chain of `!`s, operands and `-a`/`-o`, with `(` … `)` nesting,
 * so it is walked in a loop with a count of the open parentheses: no depth of words reaches the
 * stack. `p` is the word last read, as test.c's `args`.
 */
export function testSyntaxError(words: readonly string[]): string | undefined {
  let p = 0;
  const binop = (): void => {
    const first = words[p]!;
    const op = words[++p]!;
    const second = words[++p];
    if (second === undefined) syntax(words[p - 1], 'argument expected');
    if (numeric.has(op)) (getn(first), getn(second!));
  };
  /** test.c's `primary` but for `(`: a unary test, a binary one, or a lone operand. */
  const primary = (n: Token): void => {
    if (n === 'EOI') syntax(undefined, 'argument expected');
    const first = tokenOf(words[p]);
    const next = tokenOf(words[p + 1]);
    if (next !== 'EOI' && words[p + 2] !== undefined && next === 'BINOP') return binop();
    if (first === 'UNOP') {
      if (words[p + 1] === undefined) return;
      p++;
      if (words[p - 1] === '-t') getn(words[p]!);
      return;
    }
    if (next === 'BINOP') return binop();
  };
  /** test.c's `oexpr` from word `p`, its recursions as a loop: `nexpr` is `!`* then a primary or `( oexpr )`. */
  const oexpr = (): void => {
    let open = 0;
    let n = tokenOf(words[p]);
    for (;;) {
      // nexpr: a `!` with nothing after it stands alone ("! ARG may miss ARG").
      while (n === 'NOT' && words[p + 1] !== undefined) n = tokenOf(words[++p]);
      if (n === 'LPAREN') {
        open++;
        n = tokenOf(words[++p]);
        continue;
      }
      if (n !== 'NOT') primary(n);
      // aexpr's `-a`, oexpr's `-o`, then each `)` that closes what is open.
      for (;;) {
        const after = tokenOf(words[p + 1]);
        if (after === 'AND' || after === 'OR') {
          p += 2;
          n = tokenOf(words[p]);
          break;
        }
        if (open === 0) return;
        if (tokenOf(words[++p]) !== 'RPAREN') syntax(undefined, 'closing paren expected');
        open--;
      }
    }
  };
  try {
    // POSIX's cases for up to four arguments, before the grammar (test.c's `again` and `check_negate`).
    let a = 0;
    for (;;) {
      if (words[a] === undefined || words[a + 1] === undefined) return undefined;
      if (words[a + 2] === undefined) break;
      if (words[a + 3] === undefined && tokenOf(words[a + 1]) === 'BINOP') {
        p = a;
        binop();
        return undefined;
      }
      if (words[a + 4] !== undefined || words[a] !== '!') break;
      a++;
    }
    p = 0;
    oexpr();
    if (words[p] !== undefined && words[++p] !== undefined) return `sh: ${words[p]}: unknown operand`;
    return undefined;
  } catch (err) {
    if (err instanceof TestSyntax) return err.message;
    throw err;
  }
}

/**
 * `__reflex_test`, which the patched shell asks before it evaluates a `test` or `[` (its words, the
 * `]` taken off): busybox's syntax error, with 2, or 0 to go on.
 */
export const testSyntaxCommand: Command = {
  name: '__reflex_test',
  async execute(args): Promise<ExecResult> {
    const error = testSyntaxError(args);
    return error === undefined ? { stdout: '', stderr: '', exitCode: 0 } : { stdout: '', stderr: `${error}\n`, exitCode: 2 };
  },
};
