/**
 * JSON with object keys sorted (by UTF-16 code units, at every depth) and no whitespace, so the
 * same record always serialises to the same bytes: the audit chain hashes these bytes, and a
 * verifier that parsed a record back (from an export, say) can recompute them exactly.
 * Values JSON cannot hold are treated as `JSON.stringify` treats them (undefined, functions and
 * symbols dropped from objects and `null` in arrays, non-finite numbers `null`); bigints become strings.
 * Written without recursion: records read back from a file or an export are outside input, and
 * one nested some thousands deep must be reported by the verifier, not overflow its stack.
 */
export function canonicalJson(value: unknown): string {
  return serialise(value) ?? 'null';
}

/** A container being written: its pieces so far, and its members still to write. */
interface Open {
  parts: string[];
  array: boolean;
  /** Members still to write, last first (popped): [key, value]; an array's keys are ''. */
  todo: [string, unknown][];
  /** The key of the member being written. */
  key: string;
}

function serialise(root: unknown): string | undefined {
  const stack: Open[] = [];
  let value = root;
  for (;;) {
    const v = jsonOf(value);
    if (v !== null && typeof v === 'object') stack.push(opened(v));
    else {
      const done = scalar(v);
      if (!stack.length) return done;
      put(stack[stack.length - 1]!, done);
    }
    // The next member to write; each container whose members are all written is closed into its parent.
    for (;;) {
      const top = stack[stack.length - 1]!;
      const next = top.todo.pop();
      if (next) {
        top.key = next[0];
        value = next[1];
        break;
      }
      stack.pop();
      const closed = top.array ? `[${top.parts.join(',')}]` : `{${top.parts.join(',')}}`;
      if (!stack.length) return closed;
      put(stack[stack.length - 1]!, closed);
    }
  }
}

function put(into: Open, json: string | undefined): void {
  if (into.array) into.parts.push(json ?? 'null');
  else if (json !== undefined) into.parts.push(`${JSON.stringify(into.key)}:${json}`);
}

function opened(value: object): Open {
  if (Array.isArray(value)) return { parts: [], array: true, key: '', todo: value.map((v): [string, unknown] => ['', v]).reverse() };
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  return { parts: [], array: false, key: '', todo: keys.map((k): [string, unknown] => [k, obj[k]]).reverse() };
}

function scalar(value: unknown): string | undefined {
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
  return 'null';
}

function jsonOf(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON: () => unknown }).toJSON();
  }
  return value;
}
