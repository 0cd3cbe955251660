import type { FilterComparison, FilterExpr } from './ast.js';

/**
 * How a comparison decides whether a field value equals the filter value.
 *
 * - 'lxd' (default): what LXD 5.0.2 does server-side (notes §6). The filter value is a regular
 *   expression, anchored at both ends and case-insensitive, so `name eq web-.*` and
 *   `status eq running` match. A value that is not a valid regex is compared as literal text,
 *   case-insensitively. Only string fields can match: a number, boolean, object or missing field
 *   makes the comparison false for `eq` *and* for `ne` (so `ephemeral eq false` matches nothing).
 * - 'exact': plain equality of text. Strings compare as-is (case-sensitive, no regex); numbers and
 *   booleans compare through their decimal / `true`/`false` text. Missing fields, objects and
 *   arrays are false for both `eq` and `ne`.
 *
 * In both, `not` inverts, and `and`/`or` combine as usual.
 */
export type FilterSemantics = 'lxd' | 'exact';

/** Options of evaluateFilter. */
export interface FilterEvaluateOptions {
  /** Comparison semantics; default 'lxd' so local evaluation agrees with the daemon's filtering. */
  semantics?: FilterSemantics;
}

/**
 * Evaluates an expression against a plain object (an instance, image or storage volume as JSON).
 * Field paths are resolved by resolveFilterField.
 */
export function evaluateFilter(expr: FilterExpr, obj: unknown, opts: FilterEvaluateOptions = {}): boolean {
  const semantics = opts.semantics ?? 'lxd';
  const walk = (e: FilterExpr): boolean => {
    switch (e.kind) {
      case 'compare':
        return compare(e, obj, semantics);
      case 'text':
        return textMatch(e.text, obj);
      case 'not':
        return !walk(e.expr);
      case 'and':
        return walk(e.left) && walk(e.right);
      case 'or':
        return walk(e.left) || walk(e.right);
    }
  };
  return walk(expr);
}

/** A predicate for Array.filter, compiling regexes once. */
export function compileFilter(expr: FilterExpr, opts: FilterEvaluateOptions = {}): (obj: unknown) => boolean {
  return (obj) => evaluateFilter(expr, obj, opts);
}

const regexCache = new Map<string, RegExp | null>();

/** Free text: the object's `name` contains the text, in any case. */
function textMatch(text: string, obj: unknown): boolean {
  const name = resolveFilterField(obj, 'name');
  return typeof name === 'string' && name.toLowerCase().includes(text.toLowerCase());
}

/** `gt`, `ge`, `lt`, `le`: both sides numbers (a numeric string counts); anything else is false. */
function order(c: FilterComparison, actual: unknown): boolean {
  const a = typeof actual === 'number' ? actual : typeof actual === 'string' && actual.trim() !== '' ? Number(actual) : NaN;
  const b = c.value.trim() === '' ? NaN : Number(c.value);
  if (Number.isNaN(a) || Number.isNaN(b)) return false;
  return c.op === 'gt' ? a > b : c.op === 'ge' ? a >= b : c.op === 'lt' ? a < b : a <= b;
}

function compare(c: FilterComparison, obj: unknown, semantics: FilterSemantics): boolean {
  const actual = resolveFilterField(obj, c.field);
  if (c.op !== 'eq' && c.op !== 'ne') return order(c, actual);
  let equal: boolean;
  if (semantics === 'lxd') {
    if (typeof actual !== 'string') return false;
    equal = lxdMatch(c.value, actual);
  } else {
    if (typeof actual === 'string') equal = actual === c.value;
    else if (typeof actual === 'number' || typeof actual === 'boolean') equal = String(actual) === c.value;
    else return false;
  }
  return c.op === 'ne' ? !equal : equal;
}

function lxdMatch(pattern: string, actual: string): boolean {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(`^(?:${pattern})$`, 'is');
    } catch {
      re = null;
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re ? re.test(actual) : pattern.toLowerCase() === actual.toLowerCase();
}

/**
 * Resolves a dotted field path in a plain object.
 *
 * Map keys may themselves contain dots (`config.user.reflex.autorestart` means
 * `obj.config["user.reflex.autorestart"]`), so at each level the longest run of path segments
 * that names an existing own key wins, then the rest is resolved below it. A segment that names no
 * key is also tried in snake_case, so the Go-style names of the seed's examples
 * (`Properties.os`, `UpdateSource.Protocol`) reach the JSON fields `properties` and
 * `update_source.protocol`. Returns undefined when nothing matches.
 */
export function resolveFilterField(obj: unknown, path: string): unknown {
  return resolve(obj, path.split('.'));
}

function resolve(obj: unknown, segments: string[]): unknown {
  if (segments.length === 0) return obj;
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  const record = obj as Record<string, unknown>;
  for (let n = segments.length; n >= 1; n--) {
    const key = segments.slice(0, n).join('.');
    for (const candidate of n === 1 ? [key, snakeCase(key)] : [key]) {
      if (Object.prototype.hasOwnProperty.call(record, candidate)) {
        const found = resolve(record[candidate], segments.slice(n));
        if (found !== undefined) return found;
      }
    }
  }
  return undefined;
}

function snakeCase(s: string): string {
  return s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}
