import { isSensitiveName, REDACTED, redactText } from '../log/redaction.js';

/**
 * A copy of `value`, ready to be stored where many can read it: every field whose name
 * {@link isSensitiveName} is replaced by `"[redacted]"` whatever it holds, and every string is
 * passed through {@link redactText}. Also turns the copy into plain JSON data: `toJSON()` is
 * applied (Dates become ISO strings), Errors keep name, message and code, bigints become strings,
 * functions and symbols are dropped, cycles and nesting deeper than 32 become markers.
 */
export function redact<T>(value: T): T {
  return copy(value, new WeakSet(), 0) as T;
}

function copy(value: unknown, seen: WeakSet<object>, depth: number): unknown {
  if (typeof value === 'string') return redactText(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return copy({ name: value.name, message: value.message, ...(code === undefined ? {} : { code }) }, seen, depth);
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return copy((value as { toJSON: () => unknown }).toJSON(), seen, depth);
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => copy(v, seen, depth + 1) ?? null);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (isSensitiveName(k)) {
        if (v !== undefined && v !== null && v !== '') out[k] = REDACTED;
        else out[k] = v;
        continue;
      }
      const c = copy(v, seen, depth + 1);
      if (c !== undefined) out[k] = c;
    }
    return out;
  } finally {
    // Only ancestors count as cycles: the same object twice in siblings is copied twice.
    seen.delete(value);
  }
}
