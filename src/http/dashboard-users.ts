import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ReflexError } from '../errors/reflex-error.js';

/** What a user of the dashboard may do: a viewer reads; an operator also acts (heal, release, retry, silence). */
export type DashboardRole = 'viewer' | 'operator';
export const dashboardRoles: readonly DashboardRole[] = ['viewer', 'operator'];

/** An authenticated user of the dashboard. */
export interface DashboardUser {
  name: string;
  role: DashboardRole;
}

interface UserEntry extends DashboardUser {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

const scrypt = (token: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(token, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));

/** scrypt's cost by default: N 2^15, r 8, p 1 (about 50 ms and 32 MiB per check; a verified token is remembered). */
const defaults = { N: 32_768, r: 8, p: 1 };

/** A token's hash as the users file holds it: `scrypt:N:r:p:SALT:HASH` (salt and hash base64, node:crypto's scrypt). */
export async function hashUserToken(token: string, salt: Buffer = randomBytes(16)): Promise<string> {
  const hash = await scrypt(token, salt, 32, { ...defaults, maxmem: 64 * 1024 * 1024 });
  return `scrypt:${defaults.N}:${defaults.r}:${defaults.p}:${salt.toString('base64')}:${hash.toString('base64')}`;
}

/**
 * Reads a users file: one user a line, `NAME ROLE scrypt:N:r:p:SALT:HASH`, `#` comments and blank
 * lines ignored. Throws CONFIG_INVALID naming the file and line of anything else.
 */
export function parseUsersFile(text: string, source: string): UserEntry[] {
  const users: UserEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const bad = (why: string) => new ReflexError('CONFIG_INVALID', `${source}:${i + 1}: ${why} (expected NAME ROLE scrypt:N:r:p:SALT:HASH)`);
    const [name, role, hashText, ...rest] = line.split(/\s+/);
    if (!name || !role || !hashText || rest.length) throw bad('three fields');
    if (!/^[A-Za-z0-9._@-]{1,100}$/.test(name)) throw bad(`user name "${name}": letters, digits, . _ @ - only`);
    if (!dashboardRoles.includes(role as DashboardRole)) throw bad(`role "${role}": viewer or operator`);
    const m = /^scrypt:(\d+):(\d+):(\d+):([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/.exec(hashText);
    if (!m) throw bad('the token hash');
    if (users.some((u) => u.name === name)) throw bad(`user "${name}" twice`);
    users.push({
      name,
      role: role as DashboardRole,
      N: Number(m[1]),
      r: Number(m[2]),
      p: Number(m[3]),
      salt: Buffer.from(m[4]!, 'base64'),
      hash: Buffer.from(m[5]!, 'base64'),
    });
  });
  return users;
}

/** The dashboard's users, from a users file (hashed tokens); checks a bearer token against them. */
export class DashboardUsers {
  /** sha256 of a token already verified → its user: scrypt runs once per token, not once per request. */
  private verified = new Map<string, DashboardUser>();

  constructor(private readonly users: UserEntry[]) {}

  /** Reads the users file at `path` (CONFIG_INVALID when it cannot be read or parsed). */
  static fromFile(path: string): DashboardUsers {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ReflexError('CONFIG_INVALID', `dashboardUsersFile: cannot read ${path}: ${(err as Error).message}`, { cause: err });
    }
    return new DashboardUsers(parseUsersFile(text, path));
  }

  /** Whether any user may act (the console then offers its actions). */
  get hasOperators(): boolean {
    return this.users.some((u) => u.role === 'operator');
  }

  /** The user whose token this is, or undefined. */
  async verify(token: string): Promise<DashboardUser | undefined> {
    const key = createHash('sha256').update(`reflex-user:${token}`).digest('hex');
    const known = this.verified.get(key);
    if (known) return known;
    for (const u of this.users) {
      const got = await scrypt(token, u.salt, u.hash.length, { N: u.N, r: u.r, p: u.p, maxmem: 256 * u.N * u.r + 1024 * 1024 });
      if (got.length === u.hash.length && timingSafeEqual(got, u.hash)) {
        const user = { name: u.name, role: u.role };
        if (this.verified.size > 1_000) this.verified.clear();
        this.verified.set(key, user);
        return user;
      }
    }
    return undefined;
  }
}
