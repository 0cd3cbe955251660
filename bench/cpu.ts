import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/**
 * CPU and command counters of the processes a bench measures, read from Linux' /proc and from
 * Redis' INFO: what a process has used since it started, so a figure is the difference of two
 * readings around the measured span.
 */

/** Ticks per second of /proc/PID/stat's utime and stime (USER_HZ: 100 on every Linux Node runs on). */
const userHz = 100;

/** CPU seconds (user + system) a process has used so far; 0 once it is gone or off Linux. */
export function processCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    // After the command name (which may hold spaces and parentheses): utime and stime are the 12th and 13th fields.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / userHz;
  } catch {
    return 0;
  }
}

/** CPU seconds of this very process (Node's own counter: finer than /proc's ticks). */
export function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** The pid of the redis-server behind a connection (INFO server), for {@link processCpuSeconds}. */
export async function redisPid(redis: Pick<Redis, 'info'>): Promise<number> {
  const pid = Number(/^process_id:(\d+)/m.exec(await redis.info('server'))?.[1]);
  if (!pid) throw new Error('INFO server gave no process_id');
  return pid;
}

/** Commands Redis has processed so far, in all and per command (INFO stats and INFO commandstats). */
export interface CommandCount {
  total: number;
  byCommand: Map<string, number>;
}

/** Each reading is one INFO call, itself counted by Redis: callers subtract their own readings. */
export async function redisCommands(redis: Pick<Redis, 'info'>): Promise<CommandCount> {
  const text = await redis.info('all');
  const total = Number(/^total_commands_processed:(\d+)/m.exec(text)?.[1] ?? 0);
  const byCommand = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) byCommand.set(m[1]!, Number(m[2]));
  return { total, byCommand };
}

/** The commands run between two readings, most frequent first, without the readings' own INFO calls. */
export function commandsBetween(before: CommandCount, after: CommandCount): { total: number; top: [string, number][] } {
  const top: [string, number][] = [];
  for (const [cmd, n] of after.byCommand) {
    const d = n - (before.byCommand.get(cmd) ?? 0) - (cmd === 'info' ? 1 : 0);
    if (d > 0) top.push([cmd, d]);
  }
  return { total: after.total - before.total - 1, top: top.sort((a, b) => b[1] - a[1]) };
}
