import { StatusCode } from '../../client/status-code.js';
import type { ProbeStatus } from '../../probes/probe-status.js';

/** What the fleet shows of an instance's probes: healthy, unhealthy, unknown; `none` when no probe state covers it. */
export type FleetHealth = 'healthy' | 'unhealthy' | 'unknown' | 'none';

/** One probe of a row, as the fleet page carries it (the full state is the timeline's). */
export interface RowProbe {
  probe: string;
  health: ProbeStatus['health'];
}

/** What {@link joinProbeHealth} needs of a row. */
export interface HealthRow {
  key: string;
  target: string;
  project: string;
  name: string;
  statusCode: number;
  health: FleetHealth;
  probes?: RowProbe[];
}

const worst: ProbeStatus['health'][] = ['unhealthy', 'unknown', 'healthy'];

/**
 * Sets each row's `health` and `probes` from the probe states (one read of the whole hash per
 * fleet snapshot) and answers the states per row key, for the instance's detail. A state belongs
 * to an instance identity (`volatile.uuid`): where the daemon's list gave the row's uuid, only the
 * states of that uuid are its (a predecessor's of the same name are not); without one, the states
 * last checked under its name. The health is the worst of its probes' (unhealthy, then unknown);
 * an instance that is not Running is not probed, and its last run's conclusion says nothing of
 * the next: `unknown`.
 */
export function joinProbeHealth(
  rows: Map<string, HealthRow>,
  uuids: Map<string, string | undefined>,
  states: ProbeStatus[],
): Map<string, ProbeStatus[]> {
  if (!states.length) return new Map();
  // A renamed instance keeps its uuid: its states are found by the uuid first, by the name they were last checked under else.
  const byUuid = new Map<string, string>();
  for (const [key, uuid] of uuids) {
    const row = rows.get(key);
    if (uuid && row) byUuid.set(`${row.target}|${row.project}|${uuid}`, key);
  }
  const byKey = new Map<string, ProbeStatus[]>();
  for (const s of states) {
    let key = byUuid.get(`${s.target}|${s.project}|${s.identity}`);
    if (!key) {
      key = `${s.target}|${s.project}/${s.instance}`;
      // The row's identity is known and is another: the state is a predecessor's (or a renamed instance's, found above).
      if (!rows.has(key) || (uuids.has(key) && s.identity !== (uuids.get(key) ?? s.instance))) continue;
    }
    const list = byKey.get(key) ?? [];
    list.push(s);
    byKey.set(key, list);
  }
  for (const [key, list] of byKey) {
    const row = rows.get(key)!;
    row.probes = list.map((s) => ({ probe: s.probe, health: s.health }));
    const health = worst.find((h) => list.some((s) => s.health === h)) ?? 'unknown';
    row.health = row.statusCode === StatusCode.Running ? health : 'unknown';
  }
  return byKey;
}
