/**
 * A random history: what the operator, the guests and the world do to a few instances, one step
 * after another, drawn from a seed so that the same seed gives the same history.
 */

/** An operator's action through the daemon's API, the `reflex` CLI or its HTTP API. */
export const operatorSteps = ['stop', 'start', 'delete', 'recreate', 'rename', 'opt-out', 'opt-in', 'silence', 'heal'] as const;
/** What happens to a guest: it dies (`crash`, kill -9) or the daemon reports it in Error (112). */
export const incidentSteps = ['crash', 'error'] as const;
/** Faults of Reflex's world: Redis, the event socket, the daemon, a replica, the frames it reads. */
export const faultSteps = [
  'redis-pause',
  'redis-restart',
  'redis-full',
  'socket-cut',
  'daemon-freeze',
  'replica-kill',
  'bad-frame',
  'forged-shutdown',
] as const;

export type StepKind = (typeof operatorSteps)[number] | (typeof incidentSteps)[number] | (typeof faultSteps)[number];

/**
 * One step: its kind, the instance slot it is about (0 to slots-1; for `forged-shutdown` -1 is an
 * instance that never existed) and the pause after it, in ms.
 */
export interface Step {
  kind: StepKind;
  slot: number;
  gapMs: number;
}

/** How often each kind is drawn, relative to the others. */
const weights: Record<StepKind, number> = {
  crash: 6,
  error: 2,
  stop: 3,
  start: 2,
  delete: 1,
  recreate: 1,
  rename: 1,
  'opt-out': 1,
  'opt-in': 1,
  silence: 1,
  heal: 1,
  'redis-pause': 1,
  'redis-restart': 0.4,
  'redis-full': 0.7,
  'socket-cut': 1,
  'daemon-freeze': 1,
  'replica-kill': 0.4,
  'bad-frame': 1,
  'forged-shutdown': 1.5,
};

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The shape of the histories drawn. */
export interface HistoryShape {
  /** Instances per history. Default 3. */
  slots?: number;
  /** Steps per history, at least and at most. Default 4 and 10. */
  minSteps?: number;
  maxSteps?: number;
  /** Kinds left out (e.g. the faults a real daemon's bed cannot inject). Default none. */
  without?: readonly StepKind[];
}

/** The history of a seed. */
export function generateHistory(seed: number, shape: HistoryShape = {}): Step[] {
  const slots = shape.slots ?? 3;
  const min = shape.minSteps ?? 4;
  const max = shape.maxSteps ?? 10;
  const rand = prng(seed);
  const kinds = (Object.keys(weights) as StepKind[]).filter((k) => !shape.without?.includes(k));
  const total = kinds.reduce((sum, k) => sum + weights[k], 0);
  const length = min + Math.floor(rand() * (max - min + 1));
  const steps: Step[] = [];
  for (let i = 0; i < length; i++) {
    let pick = rand() * total;
    let kind = kinds[kinds.length - 1]!;
    for (const k of kinds) {
      pick -= weights[k];
      if (pick < 0) {
        kind = k;
        break;
      }
    }
    const slotDraw = Math.floor(rand() * (slots + 1));
    const slot = kind === 'forged-shutdown' && slotDraw === slots ? -1 : slotDraw % slots;
    // Mostly short gaps (steps overlap Reflex's work), sometimes long enough for it to finish.
    const gapMs = rand() < 0.7 ? Math.floor(rand() * 200) : 200 + Math.floor(rand() * 600);
    steps.push({ kind, slot, gapMs });
  }
  return steps;
}

/** One line per step, e.g. `crash #1, 120 ms`: the replay a failing history prints. */
export function describeSteps(steps: readonly Step[]): string {
  return steps.map((s) => `${s.kind}${s.slot === -1 ? ' ghost' : ` #${s.slot}`} +${s.gapMs}ms`).join('; ');
}

/** Parses {@link describeSteps}' output back into steps (a replay given on the command line). */
export function parseSteps(text: string): Step[] {
  const kinds = new Set<string>(Object.keys(weights));
  return text
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = /^([a-z-]+) (?:#(\d+)|ghost) \+(\d+)ms$/.exec(s);
      if (!m || !kinds.has(m[1]!)) throw new Error(`not a step: "${s}" (expected e.g. "crash #1 +120ms")`);
      return { kind: m[1] as StepKind, slot: m[2] === undefined ? -1 : Number(m[2]), gapMs: Number(m[3]) };
    });
}
