/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]';

const sensitiveInName = /password|passwd|passphrase|secret|token|authorization|cookie|credential|apikey|privatekey/;
const sensitiveWords = new Set(['key', 'keys', 'pwd', 'pass', 'auth']);

const valuePatterns: [RegExp, string][] = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]{8,}=*/gi, `$1 ${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, `$1${REDACTED}@`],
  [/([?&][^=&\s#]*(?:token|secret|password|key|signature|sig|auth)[^=&\s#]*=)[^&\s#]+/gi, `$1${REDACTED}`],
  [/\b(password|passwd|secret|token|api[_-]?key)(\s*[=:]\s*)("?)[^\s"',;&]+/gi, `$1$2$3${REDACTED}`],
];

/**
 * Whether a field of this name holds a secret: it contains password, secret, token, authorization,
 * cookie, credential, api key or private key (any case, any separators), or its last word is
 * `key`, `pwd`, `pass` or `auth` (so `sshKey`, `user.ssh-key` and `basicAuth` are secret;
 * `keySpace`, `keyId` and `monkey` are not).
 */
export function isSensitiveName(name: string): boolean {
  const squashed = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (sensitiveInName.test(squashed)) return true;
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/);
  const last = words.filter(Boolean).pop();
  return last !== undefined && sensitiveWords.has(last);
}

/**
 * Removes secrets from a string: bearer/basic credentials, JWTs, PEM private keys, credentials in
 * URLs (`https://user:pw@host` → `https://[redacted]@host`), secret query parameters and
 * `password=…`-style pairs. Only the secret part is replaced, so summaries stay readable.
 */
export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of valuePatterns) out = out.replace(pattern, replacement);
  return out;
}

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
