import { createHash } from 'node:crypto';
import type { RedisConnection } from '../redis/connect.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';

/** How long a probe's command is remembered on an instance after its last check. */
const ECHO_TTL_MS = 600_000;

const commandHash = (command: unknown[]) => createHash('sha1').update(JSON.stringify(command)).digest('hex').slice(0, 16);

/**
 * The `instance-exec` lifecycle events of probe checks: each check of an exec probe makes the
 * daemon announce the exec, with its command. They are the echo of Reflex's own probing, not news:
 * the events pipeline drops them (no audit record, no rule), as the audit keeps transitions only.
 * The runner marks each command it runs on an instance (refreshed once per `ECHO_TTL_MS / 2`); an
 * operator's exec of the very same command on that instance is dropped with them (docs/probes.md).
 */
export class ProbeEchoes {
  private readonly marked = new Map<string, number>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: KeySpace,
  ) {}

  /** Marks `command` as a probe's on the instance (a Redis write at most once per half TTL). */
  async mark(ref: InstanceRef, command: string[]): Promise<void> {
    const key = this.keys.probes.echo(ref, commandHash(command));
    const now = Date.now();
    if ((this.marked.get(key) ?? 0) > now - ECHO_TTL_MS / 2) return;
    await this.redis.set(key, '1', 'PX', ECHO_TTL_MS);
    this.marked.set(key, now);
  }
}

/** Whether an `instance-exec` event's command is one a probe runs on that instance. */
export async function isProbeEcho(
  redis: RedisConnection,
  keys: KeySpace,
  ref: InstanceRef,
  context: Record<string, unknown> | undefined,
): Promise<boolean> {
  const command = context?.command;
  if (!Array.isArray(command)) return false;
  return (await redis.exists(keys.probes.echo(ref, commandHash(command)))) === 1;
}
