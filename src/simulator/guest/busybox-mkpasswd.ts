import { createHash, randomBytes } from 'node:crypto';
import type { Command } from 'just-bash';
import unixCrypt from 'unix-crypt-td-js';
import { encrypt as shaCrypt } from 'unixcrypt';

/** crypt(3)'s alphabet for salts and hashes. */
const alphabet = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const randomSalt = (length: number): string => [...randomBytes(length)].map((b) => alphabet[b & 63]).join('');

/** `n` characters of crypt's base 64 of `value`, low bits first. */
function to64(value: number, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++, value >>>= 6) out += alphabet[value & 63];
  return out;
}

/** The MD5-based crypt (`$1$`), as glibc and busybox compute it (no package keeps it on its own). */
function md5Crypt(password: string, salt: string): string {
  const pw = Buffer.from(password, 'utf8');
  const md5 = (...parts: (Buffer | string)[]): Buffer => {
    const h = createHash('md5');
    for (const p of parts) h.update(p);
    return h.digest();
  };
  const alt = md5(pw, salt, pw);
  const first = createHash('md5').update(pw).update(`$1$${salt}`);
  for (let left = pw.length; left > 0; left -= 16) first.update(alt.subarray(0, Math.min(left, 16)));
  for (let i = pw.length; i; i >>= 1) first.update(i & 1 ? Buffer.from([0]) : pw.subarray(0, 1));
  let final: Buffer = first.digest();
  for (let i = 0; i < 1000; i++) {
    final = md5(i & 1 ? pw : final, i % 3 ? salt : '', i % 7 ? pw : '', i & 1 ? final : pw);
  }
  const f = final;
  const groups: [number, number, number][] = [
    [0, 6, 12],
    [1, 7, 13],
    [2, 8, 14],
    [3, 9, 15],
    [4, 10, 5],
  ];
  const hash = groups.map(([a, b, c]) => to64((f[a]! << 16) | (f[b]! << 8) | f[c]!, 4)).join('') + to64(f[11]!, 2);
  return `$1$${salt}$${hash}`;
}

/**
 * busybox's `mkpasswd` (crypt(3) hashes: unixcrypt for `$5$`/`$6$`, unix-crypt-td-js for DES,
 * MD5's written here): `-m` picks by busybox's test of the name (`d…` DES, `sha5…` SHA-512, other
 * `sha…` SHA-256, anything else MD5; SHA-256 without `-m`), `-S` or the second operand is the salt
 * (else a random one), the password is the operand or stdin's first line (none: nothing, exit 0).
 */
export function mkpasswdCommand(): Command {
  return {
    name: 'mkpasswd',
    async execute(args, ctx) {
      let method = 'sha256';
      let salt: string | undefined;
      const operands: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-m') method = args[++i] ?? method;
        else if (a === '-S') salt = args[++i];
        else if (a === '-P') i++;
        else operands.push(a);
      }
      let password = operands[0];
      if (operands[1] !== undefined) salt = operands[1];
      if (password === undefined) {
        const input = String(ctx.stdin);
        if (input === '') return { stdout: '', stderr: '', exitCode: 0 };
        password = input.split('\n')[0]!;
      }
      let hash: string;
      if (method.startsWith('d')) hash = unixCrypt(password, salt ?? randomSalt(2));
      else if (method.startsWith('sha')) hash = shaCrypt(password, `$${method[3] === '5' ? 6 : 5}$${salt ?? randomSalt(16)}`);
      else hash = md5Crypt(password, (salt ?? randomSalt(8)).slice(0, 8));
      return { stdout: `${hash}\n`, stderr: '', exitCode: 0 };
    },
  };
}
