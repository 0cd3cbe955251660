import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { roleAtLeast, roles, type Role } from '../config/roles.js';
import { ReflexError } from '../errors/reflex-error.js';

/** A dashboard user's role (config/roles.ts). */
export type DashboardRole = Role;

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

/**
 * Too many secrets are being checked at once: the check was refused before it cost anything (a
 * retry helps). It never leaves the HTTP layer, which answers 429.
 */
export class VerifyBusyError extends Error {
  constructor() {
    super('too many sign-ins are being checked at once: try again in a second');
    this.name = 'VerifyBusyError';
  }
}

const scrypt = (secret: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(secret, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));

/** scrypt's cost by default: N 2^15, r 8, p 1 (about 50 ms and 32 MiB per check; a verified token is remembered). */
const defaults = { N: 32_768, r: 8, p: 1 };

/** A secret's hash as the users file holds it: `scrypt:N:r:p:SALT:HASH` (salt and hash base64, node:crypto's scrypt). */
export async function hashUserToken(secret: string, salt: Buffer = randomBytes(16)): Promise<string> {
  const hash = await scrypt(secret, salt, 32, { ...defaults, maxmem: 64 * 1024 * 1024 });
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
    if (!roles.includes(role as DashboardRole)) throw bad(`role "${role}": viewer, operator or admin`);
    const m = /^scrypt:(\d+):(\d+):(\d+):([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/.exec(hashText);
    if (!m) throw bad('the token hash');
    const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
    // A cost beyond these would let a file's line take seconds and gigabytes per check.
    if (N < 2 || N > 1_048_576 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16)
      throw bad('the scrypt cost (N a power of 2 up to 2^20, r ≤ 32, p ≤ 16)');
    if (users.some((u) => u.name === name)) throw bad(`user "${name}" twice`);
    users.push({ name, role: role as DashboardRole, N, r, p, salt: Buffer.from(m[4]!, 'base64'), hash: Buffer.from(m[5]!, 'base64') });
  });
  return users;
}

/** Options of {@link DashboardUsers.fromFile}. */
export interface UsersFileOptions {
  /** Re-read the file when it changes (polled every `intervalMs`). Default false. */
  watch?: boolean;
  /** How often a watched file's stat is read. Default 1000 ms. */
  intervalMs?: number;
  /** Told of each reload: the users now, or why the file was refused (the previous users stay). */
  onReload?: (result: { users: number } | { error: Error }) => void;
}

/** scrypt checks run at once at most, and waiting: beyond them a check is refused (VerifyBusyError) before it costs anything. */
const maxRunning = 1;
const maxWaiting = 4;

/**
 * The dashboard's users, from a users file (hashed secrets); checks a bearer token or a name and
 * password against them. A watched file is re-read when it changes: a removed user's token and
 * sessions stop working at the next request, a changed role applies at once. A file that no longer
 * parses is refused and the previous users stay.
 */
export class DashboardUsers {
  /** sha256 of a token already verified → its user: scrypt runs once per token, not once per request. */
  private verified = new Map<string, DashboardUser>();
  private users: UserEntry[];
  private running = 0;
  private waiting: (() => void)[] = [];
  private stopWatching: () => void = () => undefined;

  constructor(users: UserEntry[]) {
    this.users = users;
  }

  /** Reads the users file at `path` (CONFIG_INVALID when it cannot be read or parsed), and with `watch` follows its changes. */
  static fromFile(path: string, opts: UsersFileOptions = {}): DashboardUsers {
    const read = () => {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (err) {
        throw new ReflexError('CONFIG_INVALID', `dashboardUsersFile: cannot read ${path}: ${(err as Error).message}`, { cause: err });
      }
      return parseUsersFile(text, path);
    };
    const users = new DashboardUsers(read());
    if (opts.watch) {
      const changed = (now: Stats, before: Stats) => {
        if (now.mtimeMs === before.mtimeMs && now.size === before.size && now.ino === before.ino) return;
        try {
          users.replace(read());
          opts.onReload?.({ users: users.users.length });
        } catch (err) {
          opts.onReload?.({ error: err as Error });
        }
      };
      watchFile(path, { interval: opts.intervalMs ?? 1_000, persistent: false }, changed);
      users.stopWatching = () => unwatchFile(path, changed);
    }
    return users;
  }

  /** Takes these users instead (a reloaded file): every token is checked again. */
  replace(users: UserEntry[]): void {
    this.users = users;
    this.verified.clear();
  }

  /** Stops following the file. */
  close(): void {
    this.stopWatching();
  }

  /** Whether any user may act (the console then offers its actions). */
  get hasOperators(): boolean {
    return this.users.some((u) => roleAtLeast(u.role, 'operator'));
  }

  /** Whether any user may change the queues. */
  get hasAdmins(): boolean {
    return this.users.some((u) => u.role === 'admin');
  }

  /** The names of the users who may act (operators and admins), in the file's order: whom an incident may be assigned to. */
  get actingNames(): string[] {
    return this.users.filter((u) => roleAtLeast(u.role, 'operator')).map((u) => u.name);
  }

  /** The user of this name in the file as it is now (its role now), or undefined when the file no longer has it. */
  lookup(name: string): DashboardUser | undefined {
    const u = this.users.find((e) => e.name === name);
    return u && { name: u.name, role: u.role };
  }

  /**
   * The user whose token this is, or undefined. Throws VerifyBusyError, before any hashing, when
   * too many checks are under way (50 wrong tokens at once cost 5 checks, not 50).
   */
  async verify(token: string): Promise<DashboardUser | undefined> {
    const key = createHash('sha256').update(`reflex-user:${token}`).digest('hex');
    const known = this.verified.get(key);
    if (known) return known;
    const users = this.users;
    for (const u of users) {
      if (await this.matches(u, token)) {
        const user = { name: u.name, role: u.role };
        // A reload while this check ran: what it found may be a removed user.
        if (this.users !== users) return this.lookup(u.name);
        if (this.verified.size > 1_000) this.verified.clear();
        this.verified.set(key, user);
        return user;
      }
    }
    return undefined;
  }

  /** The user `name` when `password` is theirs; one scrypt check (a dummy one for an unknown name, so timing does not tell). */
  async verifyPassword(name: string, password: string): Promise<DashboardUser | undefined> {
    const u = this.users.find((e) => e.name === name);
    const ok = await this.matches(u ?? dummy, password);
    return ok && u ? this.lookup(u.name) : undefined;
  }

  private async matches(u: UserEntry, secret: string): Promise<boolean> {
    await this.slot();
    try {
      const got = await scrypt(secret, u.salt, u.hash.length, { N: u.N, r: u.r, p: u.p, maxmem: 256 * u.N * u.r + 1024 * 1024 });
      return got.length === u.hash.length && timingSafeEqual(got, u.hash);
    } finally {
      // The slot passes to the next in line as it is, so no newcomer slips in between.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Waits for a turn to hash, or refuses at once when the queue is full. */
  private async slot(): Promise<void> {
    if (this.running < maxRunning) {
      this.running++;
      return;
    }
    if (this.waiting.length >= maxWaiting) throw new VerifyBusyError();
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
}

/** Checked for an unknown name, so a wrong name costs what a wrong password does. */
const dummy: UserEntry = { name: '', role: 'viewer', ...defaults, salt: Buffer.alloc(16), hash: randomBytes(32) };
