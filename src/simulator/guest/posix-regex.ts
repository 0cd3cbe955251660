/**
 * A POSIX regular expression (regcomp(3) as glibc reads one in the C locale) as a JavaScript
 * RegExp: basic (BRE) or extended (ERE) syntax, with glibc's GNU extensions (`\+ \? \|` in a BRE,
 * `\w \W \s \S \b \B \< \> \` \'`), bracket expressions with `[:class:]`, `[.c.]` and `[=c=]`,
 * intervals, groups and back references; glibc's regerror words when it refuses one. Text is one
 * character per byte (latin1). The translation is a loop over the pattern with an explicit stack of
 * open groups, never recursion. A match is POSIX's leftmost-longest (`longest`); which text each
 * group holds in it is the one JavaScript's backtracking finds for that extent.
 */
export interface PosixRegex {
  /** The expression, matching anywhere (`g` flag: set lastIndex to search from there). */
  re: RegExp;
  /** The same with `^` never matching (regexec's REG_NOTBOL), for the matches after the first. */
  notBol: RegExp;
  /**
   * Whether JavaScript's first match may be shorter than POSIX's longest at the same place (the
   * expression has an alternation or a quantified group); `longest` then looks further.
   */
  ambiguous: boolean;
  /** The RegExps `longest` has made for this expression so far (it stops looking past `longestBudget`). */
  tries: number;
}

/** regcomp's options. */
export interface PosixFlags {
  /** REG_EXTENDED: ERE syntax (default: BRE). */
  extended?: boolean;
  /** REG_ICASE. */
  icase?: boolean;
}

/** glibc's regerror(3) texts. */
const regexErrors = {
  ECTYPE: 'Invalid character class name',
  ECOLLATE: 'Invalid collation character',
  EESCAPE: 'Trailing backslash',
  ESUBREG: 'Invalid back reference',
  EBRACK: 'Unmatched [, [^, [:, [., or [=',
  EPAREN: 'Unmatched ( or \\(',
  EBRACE: 'Unmatched \\{',
  BADBR: 'Invalid content of \\{\\}',
  ERANGE: 'Invalid range end',
  BADRPT: 'Invalid preceding regular expression',
  ESIZE: 'Regular expression too big',
} as const;

/** regcomp's refusal: `message` is regerror's text. */
export class PosixRegexError extends Error {
  override readonly name = 'PosixRegexError';
}

const classes: Record<string, string> = {
  alpha: 'A-Za-z',
  digit: '0-9',
  alnum: '0-9A-Za-z',
  upper: 'A-Z',
  lower: 'a-z',
  space: ' \\t\\n\\v\\f\\r',
  blank: ' \\t',
  punct: '!-\\/:-@\\[-`{-~',
  print: ' -~',
  graph: '!-~',
  cntrl: '\\x00-\\x1f\\x7f',
  xdigit: '0-9A-Fa-f',
};

/** A character as a JavaScript regex literal (inside or outside a class). */
const lit = (c: string): string => (/[A-Za-z0-9_]/.test(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The marker standing for `^` until the two RegExps are made. */
const bol = '\u0000BOL\u0000';

/** A piece of a sequence: its source, and whether it may take a quantifier (and has one). */
interface Piece {
  src: string;
  quantified: boolean;
  anchor: boolean;
}

/** An open group: the sequences of the alternatives before it, and its number. */
interface Frame {
  alternatives: string[];
  pieces: Piece[];
  number: number;
}

/**
 * Translates a POSIX regular expression. Throws PosixRegexError with glibc's message when regcomp
 * would refuse it.
 */
export function posixRegex(pattern: string, flags: PosixFlags = {}): PosixRegex {
  const { source, ambiguous } = translate(pattern, { ere: flags.extended ?? false, grep: false, groupBase: 0 });
  const f = `gs${flags.icase ? 'i' : ''}`;
  return { re: new RegExp(source.split(bol).join('^'), f), notBol: new RegExp(source.split(bol).join('(?!)'), f), ambiguous, tries: 0 };
}

/**
 * How far past JavaScript's match `longest` looks for a longer one, and how many places it tries
 * for one expression in all (each is a RegExp of its own): a bound on the time a long line takes.
 */
const longestReach = 256;
const longestBudget = 50_000;

/**
 * regexec's match where `m` (found by `re`, one of `regex`'s two) starts: the longest one there, as POSIX wants, where
 * JavaScript's backtracking took the first alternative that matched (up to `longestReach` further).
 */
export function longest(regex: PosixRegex, re: RegExp, s: string, m: RegExpExecArray): RegExpExecArray {
  const start = m.index;
  const shortest = start + m[0].length;
  for (let end = Math.min(s.length, shortest + longestReach); end > shortest && regex.tries < longestBudget; end--) {
    regex.tries++;
    const forced = new RegExp(`(?:${re.source})(?<=^[\\s\\S]{${end}})`, `${re.flags.replace('g', '')}y`);
    forced.lastIndex = start;
    const found = forced.exec(s);
    if (found) return found;
  }
  return m;
}

/**
 * The JavaScript source of busybox grep's patterns, one expression matching where any of them
 * does (each translated on its own, its groups and back references numbered after the ones
 * before); an empty list matches nothing. Throws PosixRegexError for the first one glibc refuses.
 * The syntax is the one busybox's grep compiles with (re_compile_pattern under glibc's
 * RE_SYNTAX_GREP, or RE_SYNTAX_EGREP with intervals), not regcomp's: a repetition operator that
 * starts an ERE is skipped and a malformed ERE interval is its characters; a BRE's leading `\{` is
 * a `{`, and a BRE may repeat a repetition (`a**`).
 */
export function grepSource(patterns: readonly string[], extended: boolean): string {
  if (patterns.length === 0) return '[^\\s\\S]';
  let groupBase = 0;
  const sources = patterns.map((p) => {
    const t = translate(p, { ere: extended, grep: true, groupBase });
    groupBase += t.groups;
    return t.source.split(bol).join('^');
  });
  return sources.length === 1 ? sources[0]! : sources.map((s) => `(?:${s})`).join('|');
}

/** How {@link translate} reads: ERE or BRE, grep's syntax ({@link grepSource}) or regcomp's, the number of the groups before this expression's. */
interface Syntax {
  ere: boolean;
  grep: boolean;
  groupBase: number;
}

/** The JavaScript source of a POSIX expression (with `bol` markers for its `^` anchors), and how many groups it has. */
function translate(p: string, { ere, grep, groupBase }: Syntax): { source: string; ambiguous: boolean; groups: number } {
  const stack: Frame[] = [];
  let alternatives: string[] = [];
  let pieces: Piece[] = [];
  let groups = 0;
  let ambiguous = false;
  const closed = new Set<number>();
  /**
   * Whether the position starts an expression (nothing before it in its branch, or an anchor: glibc
   * lets no anchor be repeated): a repetition operator here is literal (BRE), refused (regcomp's
   * ERE) or skipped (grep's ERE).
   */
  const atStart = (): boolean => pieces.length === 0 || pieces.at(-1)!.anchor;
  /** Whether the last piece was repeated just now: regcomp's BRE refuses a `*` or `\{` after that. */
  let repeated = false;
  const push = (src: string, anchor = false): void => {
    pieces.push({ src, quantified: false, anchor });
    repeated = false;
  };
  const quantify = (q: string): void => {
    const last = pieces.at(-1)!;
    if (last.src.startsWith('(')) ambiguous = true;
    if (last.quantified) last.src = `(?:${last.src})`;
    last.src += q;
    last.quantified = true;
    repeated = true;
  };
  /** A `*` or `\{` right after a repetition in regcomp's BRE (RE_CONTEXT_INVALID_DUP). */
  const repeatsRepetition = (): boolean => !ere && !grep && repeated;
  /**
   * Whether the token before was an operator grep's ERE skipped: glibc then parses the next token as
   * an expression, where a `)` is a character (RE_UNMATCHED_RIGHT_PAREN_ORD), so `(*)` leaves its
   * group open.
   */
  let skipped = false;
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    const afterSkip = skipped;
    skipped = false;
    if (c === '\\') {
      if (i + 1 >= p.length) throw new PosixRegexError(regexErrors.EESCAPE);
      const d = p[i + 1]!;
      i += 2;
      if (!ere && d === '(') {
        stack.push({ alternatives, pieces, number: ++groups });
        alternatives = [];
        pieces = [];
      } else if (!ere && d === ')') {
        if (stack.length === 0) throw new PosixRegexError(regexErrors.EPAREN);
        const group = closeGroup();
        push(group);
      } else if (!ere && d === '|') {
        alternatives.push(pieces.map((x) => x.src).join(''));
        pieces = [];
        ambiguous = true;
      } else if (!ere && d === '{') {
        if (atStart() && grep) push(lit(d));
        else if (atStart() || repeatsRepetition()) throw new PosixRegexError(regexErrors.BADRPT);
        else i = interval(i, '\\}');
      } else if (!ere && (d === '+' || d === '?')) {
        if (atStart()) push(lit(d));
        else quantify(d);
      } else if (/[1-9]/.test(d)) {
        if (!closed.has(Number(d))) throw new PosixRegexError(regexErrors.ESUBREG);
        push(`\\${Number(d) + groupBase}`);
      } else if (d === 'w') push('[A-Za-z0-9_]');
      else if (d === 'W') push('[^A-Za-z0-9_]');
      else if (d === 's') push('[ \\t\\n\\v\\f\\r]');
      else if (d === 'S') push('[^ \\t\\n\\v\\f\\r]');
      else if (d === 'b') push('\\b', true);
      else if (d === 'B') push('\\B', true);
      else if (d === '<') push('\\b(?=[A-Za-z0-9_])', true);
      else if (d === '>') push('\\b(?<=[A-Za-z0-9_])', true);
      else if (d === '`') push('(?<![\\s\\S])', true);
      else if (d === "'") push('(?![\\s\\S])', true);
      else push(lit(d));
      continue;
    }
    i++;
    if (c === '[') {
      i = bracket(i);
      continue;
    }
    if (c === '.') push('.');
    else if (c === '*' || (ere && (c === '+' || c === '?' || c === '{'))) {
      if (!atStart()) {
        if (c === '*' && repeatsRepetition()) throw new PosixRegexError(regexErrors.BADRPT);
        if (c === '{') i = interval(i, '}');
        else quantify(c);
      } else if (ere && !grep) throw new PosixRegexError(regexErrors.BADRPT);
      // grep's ERE skips an operator with nothing to repeat; a BRE's `*` there is itself.
      else if (ere) skipped = true;
      else push(lit(c));
    } else if (ere && c === '(') {
      stack.push({ alternatives, pieces, number: ++groups });
      alternatives = [];
      pieces = [];
    } else if (ere && c === ')' && stack.length > 0 && !afterSkip) push(closeGroup());
    else if (ere && c === '|') {
      alternatives.push(pieces.map((x) => x.src).join(''));
      pieces = [];
      ambiguous = true;
    } else if (c === '^' && (ere || pieces.length === 0)) push(bol, true);
    else if (c === '$' && (ere || i === p.length || p.startsWith('\\)', i) || p.startsWith('\\|', i))) push('$', true);
    else push(lit(c));
  }
  if (stack.length > 0) throw new PosixRegexError(regexErrors.EPAREN);
  alternatives.push(pieces.map((x) => x.src).join(''));
  return { source: alternatives.join('|'), ambiguous, groups };

  function closeGroup(): string {
    alternatives.push(pieces.map((x) => x.src).join(''));
    const inner = alternatives.join('|');
    const frame = stack.pop()!;
    closed.add(frame.number);
    repeated = false;
    alternatives = frame.alternatives;
    pieces = frame.pieces;
    return `(${inner})`;
  }

  /**
   * Reads an interval's `m,n` from `at` up to `end` (glibc's parse_dup_op and fetch_number);
   * returns where the pattern goes on. A malformed one in grep's ERE is its `{` as a character.
   */
  function interval(at: number, end: string): number {
    let k = at;
    type Stop = 'end' | 'close' | ',';
    /** A number up to the next `,` or close: -1 when there is none, -2 when anything else came; and what ended it. */
    const fetchNumber = (): [number, Stop] => {
      let num = -1;
      while (true) {
        if (k >= p.length) return [-2, 'end'];
        if (p.startsWith(end, k)) {
          k += end.length;
          return [num, 'close'];
        }
        const ch = p[k]!;
        k += ch === '\\' ? 2 : 1;
        if (ch === ',') return [num, ','];
        num = ch < '0' || ch > '9' || num === -2 ? -2 : num === -1 ? Number(ch) : Math.min(0x8000, num * 10 + Number(ch));
      }
    };
    let [lo, stop] = fetchNumber();
    let hi = 0;
    if (lo === -1) {
      if (stop !== ',') throw new PosixRegexError(regexErrors.BADBR);
      lo = 0;
    }
    if (lo !== -2 && stop === ',') [hi, stop] = fetchNumber();
    else if (lo !== -2) hi = lo;
    if (lo === -2 || hi === -2) {
      if (!(ere && grep)) throw new PosixRegexError(stop === 'end' ? regexErrors.EBRACE : regexErrors.BADBR);
      push(lit('{'));
      return at;
    }
    if ((hi !== -1 && lo > hi) || stop !== 'close') throw new PosixRegexError(regexErrors.BADBR);
    if ((hi === -1 ? lo : hi) > 0x7fff) throw new PosixRegexError(regexErrors.ESIZE);
    quantify(hi === -1 ? `{${lo},}` : hi === lo ? `{${lo}}` : `{${lo},${hi}}`);
    return k;
  }

  /** Reads a bracket expression after its `[`; returns where the pattern goes on. */
  function bracket(at: number): number {
    let k = at;
    let negate = false;
    if (p[k] === '^') {
      negate = true;
      k++;
    }
    const items: string[] = [];
    let first = true;
    while (true) {
      if (k >= p.length) throw new PosixRegexError(regexErrors.EBRACK);
      let c = p[k]!;
      if (c === ']' && !first) {
        k++;
        break;
      }
      first = false;
      let single: string | undefined;
      if (c === '[' && (p[k + 1] === ':' || p[k + 1] === '.' || p[k + 1] === '=')) {
        const kind = p[k + 1]!;
        const end = p.indexOf(`${kind}]`, k + 2);
        if (end < 0) throw new PosixRegexError(regexErrors.EBRACK);
        const name = p.slice(k + 2, end);
        k = end + 2;
        if (kind === ':') {
          if (!(name in classes)) throw new PosixRegexError(regexErrors.ECTYPE);
          items.push(classes[name]!);
          continue;
        }
        if (name.length !== 1) throw new PosixRegexError(regexErrors.ECOLLATE);
        single = name;
      } else {
        single = c;
        k++;
      }
      c = single;
      // A range: the character before a `-` that is not the last before `]`.
      if (p[k] === '-' && p[k + 1] !== ']' && k + 1 < p.length) {
        k++;
        let hi = p[k]!;
        if (hi === '[' && (p[k + 1] === '.' || p[k + 1] === '=')) {
          const kind = p[k + 1]!;
          const end = p.indexOf(`${kind}]`, k + 2);
          if (end < 0) throw new PosixRegexError(regexErrors.EBRACK);
          hi = p.slice(k + 2, end);
          if (hi.length !== 1) throw new PosixRegexError(regexErrors.ECOLLATE);
          k = end + 2;
        } else k++;
        if (hi.charCodeAt(0) < c.charCodeAt(0)) throw new PosixRegexError(regexErrors.ERANGE);
        items.push(`${lit(c)}-${lit(hi)}`);
        continue;
      }
      items.push(lit(c));
    }
    push(`[${negate ? '^' : ''}${items.join('')}]`);
    return k;
  }
}

// just-bash's grep builds its expressions in the bundle, which asks for this translation (its
// JavaScript source) by this name (patches/README.md 79, 91): glibc's `\+`, `\?`, `\w`, `\s`, `\<`
// in a basic expression, as busybox's grep takes them, each of several patterns on its own. A
// pattern glibc refuses throws PosixRegexError, which grep reports as `bad regex`.
(globalThis as Record<symbol, unknown>)[Symbol.for('reflex.posixRegex')] = (patterns: string | readonly string[], extended: boolean): string =>
  grepSource(typeof patterns === 'string' ? [patterns] : patterns, extended);
