import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { AuditLog } from '../../audit/audit-log.js';
import type { RedisConnection } from '../../redis/connect.js';

/** When failed sign-ins lock a source or a user out. */
export interface LockoutSettings {
  /** Failed sign-ins or wrong tokens from one address within `windowMs` that lock it out. Default 20. */
  perSource: number;
  /** Failed sign-ins naming one user within `windowMs` that lock the user out (from anywhere). Default 5. */
  perUser: number;
  /** The window failures are counted in. Default 15 min. */
  windowMs: number;
  /** How long a lock-out lasts. Default 15 min. */
  lockMs: number;
}

export const defaultLockout: LockoutSettings = { perSource: 20, perUser: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

/** What a failure was: a wrong token (bearer or `?token=`), a wrong name or password, a refused identity-provider sign-in. */
export type FailureKind = 'token' | 'password' | 'oidc';

/** The guard's metrics, on the process's registry (one set per registry). */
function countersOf(registry: Registry) {
  const counter = (name: string, help: string, labelNames: string[]) =>
    (registry.getSingleMetric(name) as Counter<string> | undefined) ?? new Counter({ name, help, labelNames, registers: [registry] });
  return {
    failures: counter('reflex_dashboard_auth_failures_total', 'Failed sign-ins and wrong tokens at the dashboard, by kind (token, password, oidc)', [
      'kind',
    ]),
    refused: counter(
      'reflex_dashboard_auth_refused_total',
      'Dashboard credentials refused before they were checked, by why (locked: the source or user is locked out; busy: too many checks at once)',
      ['why'],
    ),
    lockouts: counter('reflex_dashboard_lockouts_total', 'Dashboard lock-outs begun, by scope (source, user)', ['scope']),
  };
}

/**
 * Rate limit and lock-out of the dashboard's sign-ins. Failures are counted in Redis per source
 * address and per user name (shared by every replica); reaching a limit locks that source or user
 * out for `lockMs`, audited (`access`, `locked-out`) and logged once. A locked-out check is
 * refused before any token is compared or password hashed; this process remembers the locks it has
 * seen, so a flood from a locked source costs no Redis read either.
 */
export class LoginGuard {
  private readonly known = new Map<string, number>();
  private readonly counters;

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly settings: LockoutSettings,
    private readonly deps: { audit?: AuditLog; logger?: Logger; registry?: Registry; now?: () => number } = {},
  ) {
    this.counters = deps.registry ? countersOf(deps.registry) : undefined;
  }

  private get now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private lockKey(scope: 'source' | 'user', name: string): string {
    return `${this.prefix}:console:lock:${scope}:${name}`;
  }

  private failKey(scope: 'source' | 'user', name: string): string {
    return `${this.prefix}:console:fails:${scope}:${name}`;
  }

  /**
   * When the source (or the user, if named) is locked out: the time the lock ends, in ms since
   * the epoch; undefined when neither is.
   */
  async lockedUntil(source: string, user?: string): Promise<number | undefined> {
    const scopes: ['source' | 'user', string][] = [['source', source], ...(user ? [['user', user] as ['user', string]] : [])];
    const now = this.now;
    for (const [scope, name] of scopes) {
      const mine = this.known.get(`${scope}:${name}`);
      if (mine !== undefined && mine > now) return this.refused(mine);
    }
    for (const [scope, name] of scopes) {
      const until = Number(await this.redis.get(this.lockKey(scope, name)).catch(() => null));
      if (until > now) {
        this.known.set(`${scope}:${name}`, until);
        return this.refused(until);
      }
    }
    return undefined;
  }

  private refused(until: number): number {
    this.counters?.refused.inc({ why: 'locked' });
    return until;
  }

  /** Counts a check refused because too many were under way (nothing was compared). */
  busy(): void {
    this.counters?.refused.inc({ why: 'busy' });
  }

  /** Counts a failure from `source` (naming `user`, for a password); locks out what reached its limit. */
  async failed(source: string, kind: FailureKind, user?: string): Promise<void> {
    this.counters?.failures.inc({ kind });
    await this.count('source', source, this.settings.perSource, kind, user);
    if (user) await this.count('user', user, this.settings.perUser, kind, user, source);
  }

  /** A sign-in of `user` succeeded: its failures are forgotten (the source's stay counted). */
  async succeeded(user: string): Promise<void> {
    await this.redis.del(this.failKey('user', user)).catch(() => undefined);
  }

  private async count(scope: 'source' | 'user', name: string, limit: number, kind: FailureKind, user?: string, from?: string): Promise<void> {
    const key = this.failKey(scope, name);
    await this.redis.set(key, '0', 'PX', this.settings.windowMs, 'NX');
    const failures = await this.redis.incr(key);
    if (failures < limit) return;
    const until = this.now + this.settings.lockMs;
    // NX: the first replica to reach the limit locks, audits and logs; the others only learn of it.
    const locked = await this.redis.set(this.lockKey(scope, name), String(until), 'PX', this.settings.lockMs, 'NX');
    await this.redis.del(key);
    if (this.known.size > 10_000) for (const [k, end] of this.known) if (end <= this.now) this.known.delete(k);
    this.known.set(`${scope}:${name}`, until);
    if (locked !== 'OK') return;
    this.counters?.lockouts.inc({ scope });
    const what = scope === 'source' ? `source ${name}` : `user ${name}`;
    const summary = `${what} locked out for ${Math.round(this.settings.lockMs / 60_000)} min after ${failures} failed sign-ins (last: a wrong ${kind}${from ? ` from ${from}` : ''})`;
    this.deps.logger?.warn({ scope, name, failures, until: new Date(until).toISOString() }, `dashboard: ${summary}`);
    await this.deps.audit
      ?.append({
        type: 'access',
        correlationId: `lockout:${scope}:${name}:${until}`,
        summary,
        result: 'locked-out',
        scope,
        ...(user ? { actor: user } : {}),
        source: from ?? name,
        until: new Date(until).toISOString(),
      })
      .catch((err: unknown) => this.deps.logger?.error({ err }, 'dashboard: the lock-out could not be audited'));
  }
}
