/**
 * JSON with object keys sorted (by UTF-16 code units, at every depth) and no whitespace, so the
 * same record always serialises to the same bytes: the audit chain hashes these bytes, and a
 * verifier that parsed a record back (from an export, say) can recompute them exactly.
 * Values JSON cannot hold are treated as `JSON.stringify` treats them (undefined, functions and
 * symbols dropped from objects and `null` in arrays, non-finite numbers `null`); bigints become strings.
 */
export function canonicalJson(value: unknown): string {
  return serialise(value) ?? 'null';
}

function serialise(value: unknown): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      return JSON.stringify(value.toString());
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map((v) => serialise(v) ?? 'null').join(',')}]`;
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(obj).sort()) {
    const v = serialise(obj[key]);
    if (v !== undefined) parts.push(`${JSON.stringify(key)}:${v}`);
  }
  return `{${parts.join(',')}}`;
}
