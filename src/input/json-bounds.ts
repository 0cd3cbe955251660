/**
 * Bounds of JSON that comes from outside (an event frame, a webhook body, a console request, a
 * config file), checked before it is parsed or walked. `JSON.parse` itself is iterative in V8, but
 * `JSON.stringify`, zod and every recursive walk are not: a value nested some thousands deep
 * overflows the stack, and on the socket's read path that ends the process (every replica reads
 * the same frames). So depth and size are measured on the text, by one linear scan without
 * recursion, and a value too deep is never built.
 */

/** Deepest nesting of arrays and objects accepted by default (an event frame nests about 6 deep). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/**
 * Deepest nesting accepted in what the daemon answers (a response body, an operation frame): an
 * instance or a resources report nests about 8 deep; twice the default leaves room for what a
 * later API adds without letting a body too deep to walk through.
 */
export const DAEMON_JSON_MAX_DEPTH = 2 * DEFAULT_MAX_JSON_DEPTH;

/** Bounds of one JSON text. */
export interface JsonLimits {
  /** Deepest nesting of arrays and objects. Default {@link DEFAULT_MAX_JSON_DEPTH}. */
  maxDepth?: number;
  /** Largest text, in UTF-8 bytes. Default: no bound. */
  maxBytes?: number;
}

/** What the scan saw: the deepest nesting, and how many top-level values the text holds. */
export interface JsonShape {
  depth: number;
  /** Top-level values (1 for a single JSON value, 2 or more for `{…}\n{…}`, 0 for blank text). */
  values: number;
}

export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Measures a JSON text without parsing it: nesting depth (brackets outside strings; a string's
 * escapes are skipped) and the number of top-level values. Stops at the first bound crossed and
 * answers why, in words an operator can read ("nested deeper than 64 levels"). It does not check
 * the syntax: `JSON.parse` does, once the text is known to be safe to build.
 */
export function jsonShape(text: string, limits: JsonLimits = {}): { ok: true; shape: JsonShape } | { ok: false; problem: string } {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_JSON_DEPTH;
  if (limits.maxBytes !== undefined && text.length > limits.maxBytes / 3 && Buffer.byteLength(text) > limits.maxBytes)
    return { ok: false, problem: `larger than ${limits.maxBytes} bytes (${Buffer.byteLength(text)} bytes)` };
  let depth = 0;
  let deepest = 0;
  let values = 0;
  // Within a top-level scalar (a number, true…): its following characters do not start a new value.
  let inScalar = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      if (depth === 0 && !inScalar) values++;
      i = stringEnd(text, i);
      if (i < 0) return { ok: true, shape: { depth: deepest, values } }; // unterminated: JSON.parse says so
      inScalar = false;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 0 && !inScalar) values++;
      inScalar = false;
      if (++depth > deepest) {
        deepest = depth;
        if (depth > maxDepth) return { ok: false, problem: `nested deeper than ${maxDepth} levels` };
      }
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      // An unmatched closer is a syntax error JSON.parse names; it must not make the depth negative.
      if (depth > 0) depth--;
      inScalar = false;
      continue;
    }
    if (depth === 0) {
      if (isSpace(c)) inScalar = false;
      else if (!inScalar) {
        values++;
        inScalar = true;
      }
    }
  }
  return { ok: true, shape: { depth: deepest, values } };
}

/** Index of the quote closing the string opened at `open`; -1 when the text ends first. */
export function stringEnd(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/**
 * Parses a JSON text from outside once its bounds are checked: the value, or why not (too deep,
 * too large, or the parser's own message). Never throws.
 */
export function parseBoundedJson(text: string, limits: JsonLimits = {}): { ok: true; value: unknown } | { ok: false; problem: string } {
  const shape = jsonShape(text, limits);
  if (!shape.ok) return shape;
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, problem: `not JSON: ${(err as Error).message}` };
  }
}

/**
 * How deeply `value` nests arrays and objects, walked without recursion and given up at `stopAt`
 * (answered as `stopAt + 1`): for values a parser other than `JSON.parse` built (YAML), before
 * anything recursive walks them. A cycle (a YAML alias to its own ancestor) counts as too deep; a
 * node shared by aliases is walked once, which bounds the work.
 */
export function valueDepth(value: unknown, stopAt = DEFAULT_MAX_JSON_DEPTH): number {
  let deepest = 0;
  // Each node is pushed to be entered, and again (`leave`) to be taken off the path once its children are done.
  const stack: { v: unknown; depth: number; leave?: true }[] = [{ v: value, depth: 0 }];
  const onPath = new Set<object>();
  const done = new Set<object>();
  while (stack.length) {
    const { v, depth, leave } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (leave) {
      onPath.delete(v);
      done.add(v);
      continue;
    }
    if (onPath.has(v) || depth + 1 > stopAt) return stopAt + 1;
    if (done.has(v)) continue;
    deepest = Math.max(deepest, depth + 1);
    onPath.add(v);
    stack.push({ v, depth, leave: true });
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push({ v: child, depth: depth + 1 });
  }
  return deepest;
}
