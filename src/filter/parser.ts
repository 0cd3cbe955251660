import type { FilterExpr, FilterOperator } from './ast.js';
import { filterKeywords, orderingOperators } from './ast.js';
import { FilterSyntaxError } from './filter-syntax-error.js';

/** How strictly the parser follows the seed versus the quirks of LXD 5.0.2 (notes §6, §11). */
export interface FilterParseOptions {
  /**
   * What to do with an operator other than eq/ne. 'reject' (default) raises FilterSyntaxError;
   * 'as-eq' treats it as eq, like LXD 5.0.2 does (`status gt 0` then matches nothing).
   */
  unknownOperators?: 'reject' | 'as-eq';
  /**
   * Reject a quoted value that contains no space, like LXD 5.0.2 ("unterminated quote").
   * Default false.
   */
  rejectQuotedWithoutSpace?: boolean;
  /**
   * The console's extended language: the ordering operators `gt`, `ge`, `lt`, `le` (numbers), and
   * free text: a word (or quoted text) not followed by an operator finds objects whose name
   * contains it, and words side by side must all match (`web db` is `web and db`). Default false:
   * rules, schedules and silences keep the language the daemon understands.
   */
  extended?: boolean;
}

/** Guards the recursive descent against stack exhaustion on hostile input. */
const maxNesting = 64;

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';

/**
 * Parses a filter expression into an AST. Throws only FilterSyntaxError, whatever the input.
 *
 * Grammar: `expr := term {(and|or) term}`, `term := not term | '(' expr ')' | field op value`.
 * A value is a run of non-space characters, or double-quoted text (which may hold spaces).
 * Closing parentheses directly after an unquoted value close groups; values that themselves end
 * with `)` must therefore be quoted (the printer does so).
 */
export function parseFilter(input: string, opts: FilterParseOptions = {}): FilterExpr {
  if (typeof input !== 'string') throw new FilterSyntaxError('filter must be a string', 0);
  const p = new Parser(input, opts);
  const expr = p.expression(0);
  p.skipSpace();
  if (p.pos < input.length) {
    throw new FilterSyntaxError(input[p.pos] === ')' ? 'unbalanced closing parenthesis' : `unexpected "${p.peekWord()}"`, p.pos);
  }
  return expr;
}

class Parser {
  pos = 0;
  /** Closing parentheses read glued to a value, not yet consumed by a group. */
  private pendingCloses = 0;

  constructor(
    private readonly src: string,
    private readonly opts: FilterParseOptions,
  ) {}

  skipSpace(): void {
    while (isSpace(this.src[this.pos])) this.pos++;
  }

  peekWord(): string {
    let end = this.pos;
    while (end < this.src.length && !isSpace(this.src[end])) end++;
    return this.src.slice(this.pos, end);
  }

  expression(depth: number): FilterExpr {
    let left = this.term(depth);
    for (;;) {
      if (this.pendingCloses > 0) return left;
      this.skipSpace();
      if (this.pos >= this.src.length || this.src[this.pos] === ')') return left;
      const at = this.pos;
      const word = this.readWord();
      if (word !== 'and' && word !== 'or') {
        if (!this.opts.extended) throw new FilterSyntaxError(`expected "and" or "or", got "${word}"`, at);
        // Free text side by side: every word must match.
        this.pos = at;
        left = { kind: 'and', left, right: this.term(depth) };
        continue;
      }
      const right = this.term(depth);
      left = { kind: word, left, right };
    }
  }

  private term(depth: number, nots = 0): FilterExpr {
    this.skipSpace();
    if (depth + nots > maxNesting) throw new FilterSyntaxError(`nesting deeper than ${maxNesting}`, this.pos);
    if (this.pos >= this.src.length) throw new FilterSyntaxError('expression ended early: expected a clause', this.pos);
    if (this.src[this.pos] === '(') {
      const open = this.pos;
      this.pos++;
      const inner = this.expression(depth + 1);
      this.closeGroup(open);
      return inner;
    }
    const at = this.pos;
    if (this.opts.extended && this.src[at] === '"') return { kind: 'text', text: this.value(depth) };
    const word = this.readWord();
    if (word === 'not') return { kind: 'not', expr: this.term(depth, nots + 1) };
    if (this.opts.extended && !filterKeywords.has(word) && !this.operatorFollows()) {
      this.pos = at;
      return { kind: 'text', text: this.value(depth) };
    }
    if (filterKeywords.has(word)) throw new FilterSyntaxError(`"${word}" cannot start a clause`, at);
    if (word.includes('"')) throw new FilterSyntaxError('a field name cannot contain a quote', at);
    if (word.includes('(') || word.includes(')')) throw new FilterSyntaxError('a field name cannot contain a parenthesis', at);
    return { kind: 'compare', field: word, op: this.operator(), value: this.value(depth) };
  }

  private closeGroup(open: number): void {
    if (this.pendingCloses > 0) {
      this.pendingCloses--;
      return;
    }
    this.skipSpace();
    if (this.src[this.pos] !== ')') throw new FilterSyntaxError('unclosed parenthesis', this.pos >= this.src.length ? this.src.length : open);
    this.pos++;
  }

  /** Whether the next word is an operator (a field and its comparison follow, not free text). */
  private operatorFollows(): boolean {
    const save = this.pos;
    this.skipSpace();
    const next = this.peekWord();
    this.pos = save;
    return next === 'eq' || next === 'ne' || orderingOperators.has(next);
  }

  private operator(): FilterOperator {
    this.skipSpace();
    const at = this.pos;
    if (at >= this.src.length) throw new FilterSyntaxError('expression ended early: expected an operator', at);
    const op = this.readWord();
    if (op === 'eq' || op === 'ne') return op;
    if (this.opts.extended && orderingOperators.has(op)) return op as FilterOperator;
    if (this.opts.unknownOperators === 'as-eq' && op.length > 0 && !op.includes('"')) return 'eq';
    throw new FilterSyntaxError(`unknown operator "${op}" (expected ${this.opts.extended ? 'eq, ne, gt, ge, lt or le' : 'eq or ne'})`, at);
  }

  private value(depth: number): string {
    this.skipSpace();
    const at = this.pos;
    if (at >= this.src.length) throw new FilterSyntaxError('expression ended early: expected a value', at);
    let value: string;
    let closes = 0;
    if (this.src[at] === '"') {
      const end = this.src.indexOf('"', at + 1);
      if (end < 0) throw new FilterSyntaxError('unterminated quote', at);
      value = this.src.slice(at + 1, end);
      if (this.opts.rejectQuotedWithoutSpace && !/\s/.test(value)) throw new FilterSyntaxError('unterminated quote', at);
      this.pos = end + 1;
      while (this.src[this.pos] === ')' && closes < depth) {
        this.pos++;
        closes++;
      }
      if (this.pos < this.src.length && !isSpace(this.src[this.pos])) throw new FilterSyntaxError('unexpected text after closing quote', this.pos);
    } else {
      value = this.readWord();
      if (value.includes('"')) throw new FilterSyntaxError('a quote inside an unquoted value', at);
      // `(name eq c1)`: closing parentheses glued to the value close groups, up to the open depth.
      while (closes < depth && value.endsWith(')')) {
        value = value.slice(0, -1);
        closes++;
      }
      if (value.length === 0) throw new FilterSyntaxError('expected a value before ")"', at);
    }
    this.pendingCloses = closes;
    return value;
  }

  private readWord(): string {
    const start = this.pos;
    while (this.pos < this.src.length && !isSpace(this.src[this.pos])) this.pos++;
    return this.src.slice(start, this.pos);
  }
}
