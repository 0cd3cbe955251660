import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';
import type { ProbeState } from './probe-state.js';

/** One probe of one instance as last checked, for `reflex probes status` and the console. */
export interface ProbeStatus {
  target: string;
  project: string;
  /** The instance's `volatile.uuid` (or its name when it has none): the identity the state belongs to. */
  identity: string;
  /** The instance's name at the last check. */
  instance: string;
  probe: string;
  health: ProbeState['health'];
  failures: number;
  successes: number;
  lastAt?: string;
  lastOutcome?: string;
  lastOutput?: string;
  changedAt?: string;
  /** The status the instance was last listed in when it was not Running (its health is then `unknown`). */
  notRunning?: string;
}

/** Every probe state kept in Redis (one hash), sorted by target, project, identity and probe. */
export async function readProbeStatus(redis: RedisConnection, keys: KeySpace): Promise<ProbeStatus[]> {
  const all = await redis.hgetall(keys.probes.state);
  const rows: ProbeStatus[] = [];
  for (const [id, raw] of Object.entries(all)) {
    // target|project|identity|probe; a target URL holds no "|".
    const [target, project, identity, probe] = id.split('|');
    if (!target || !project || !identity || !probe) continue;
    let s: ProbeState;
    try {
      s = JSON.parse(raw) as ProbeState;
    } catch {
      continue;
    }
    rows.push({
      target,
      project,
      identity,
      instance: s.instance ?? identity,
      probe,
      health: s.health,
      failures: s.failures,
      successes: s.successes,
      ...(s.lastAt ? { lastAt: new Date(s.lastAt).toISOString() } : {}),
      ...(s.lastOutcome ? { lastOutcome: s.lastOutcome } : {}),
      ...(s.lastOutput ? { lastOutput: s.lastOutput } : {}),
      ...(s.changedAt ? { changedAt: new Date(s.changedAt).toISOString() } : {}),
      ...(s.notRunning ? { notRunning: s.notRunning } : {}),
    });
  }
  return rows.sort((a, b) => `${a.target}|${a.project}|${a.identity}|${a.probe}`.localeCompare(`${b.target}|${b.project}|${b.identity}|${b.probe}`));
}
