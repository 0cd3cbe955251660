/**
 * How Reflex hides secrets wherever it prints or stores text: logs, audit records, error messages,
 * `reflex doctor`, `--print-config`. Every folder masks through these functions; none has its own
 * pattern (a second copy drifts, and the first URL mask here leaked the tail of a password with an `@`).
 */

/** What a redacted secret is replaced with. */
export const REDACTED = '[redacted]';

const sensitiveInName = /password|passwd|passphrase|secret|token|authorization|cookie|credential|apikey|privatekey/;
const sensitiveWords = new Set(['key', 'keys', 'pwd', 'pass', 'auth']);

/**
 * Whether a field of this name holds a secret: it contains password, secret, token, authorization,
 * cookie, credential, api key or private key (any case, any separators), or its last word is
 * `key`, `pwd`, `pass` or `auth` (so `sshKey`, `user.ssh-key` and `basicAuth` are secret;
 * `keySpace`, `keyId` and `monkey` are not).
 */
export function isSensitiveName(name: string): boolean {
  let known = namesSeen.get(name);
  if (known === undefined) {
    // Field names repeat (every audit record has the same few dozen): each is worked out once.
    if (namesSeen.size >= 10_000) namesSeen.clear();
    namesSeen.set(name, (known = sensitiveName(name)));
  }
  return known;
}

const namesSeen = new Map<string, boolean>();

function sensitiveName(name: string): boolean {
  const squashed = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (sensitiveInName.test(squashed)) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  const last = words.filter(Boolean).pop();
  return last !== undefined && sensitiveWords.has(last);
}

const secretParam = /([?&;][^=&\s#]*(?:token|secret|password|passwd|pass|pwd|key|signature|sig|auth|credential)[^=&\s#]*=)[^&\s#]+/gi;

/**
 * A URL with its credentials hidden: everything between `scheme://` and the LAST `@` is the
 * userinfo (as the WHATWG parser reads `redis://:p@ss@host`, and whatever the password holds,
 * percent-encoded or not), so `redis://:p@ss@host:6379` → `redis://[redacted]@host:6379`. An `@`
 * later in the path or query hides more than needed, never less. Query parameters named like a
 * secret (`?token=…`, `&password=…`) are hidden too. With `hidePath`, everything after the
 * origin goes as well (webhook URLs carry their token in the path).
 */
export function redactUrl(url: string, opts: { hidePath?: boolean } = {}): string {
  const scheme = /^([a-z][a-z0-9+.-]*:\/\/)/i.exec(url);
  if (!scheme) return url.replace(secretParam, `$1${REDACTED}`);
  let rest = url.slice(scheme[1]!.length);
  const at = rest.lastIndexOf('@');
  const userinfo = at >= 0 ? `${REDACTED}@` : '';
  if (at >= 0) rest = rest.slice(at + 1);
  if (opts.hidePath) {
    const end = rest.search(/[/?#]/);
    if (end >= 0) rest = `${rest.slice(0, end)}/${REDACTED}`;
    return `${scheme[1]}${userinfo}${rest}`;
  }
  return `${scheme[1]}${userinfo}${rest.replace(secretParam, `$1${REDACTED}`)}`;
}

const urlInText = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

const valuePatterns: [RegExp, string][] = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]{8,}=*/gi, `$1 ${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\b(password|passwd|secret|token|api[_-]?key)(\s*[=:]\s*)("?)[^\s"',;&]+/gi, `$1$2$3${REDACTED}`],
];

/** What every pattern above needs to match: a text without any of these is returned as it is, unscanned. */
const mayHoldSecret = /:\/\/|-----BEGIN|bearer|basic|eyJ|passw|secret|token|api[_-]?key/i;

/**
 * Removes secrets from a string: bearer/basic credentials, JWTs, PEM private keys, credentials and
 * secret query parameters in URLs ({@link redactUrl}) and `password=…`-style pairs. Only the
 * secret part is replaced, so messages stay readable.
 */
export function redactText(text: string): string {
  if (!mayHoldSecret.test(text)) return text;
  let out = text.replace(urlInText, (url) => redactUrl(url));
  for (const [pattern, replacement] of valuePatterns) out = out.replace(pattern, replacement);
  return out;
}
