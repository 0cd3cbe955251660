import { checkPromises, type Violation } from './promises/checker.js';
import { describeSteps, generateHistory, parseSteps, type Step } from './promises/history.js';
import { openSeeds, regressionSeeds, SHORT_FORM_FIRST_SEED } from './promises/seeds.js';
import { World } from './promises/world.js';
import type { ChaosOptions, ScenarioResult } from './support.js';

/** What `--random N --seed S` and `--replay "…"` ask of the promise checker. */
export interface RandomOptions {
  /** Histories to run. Default 50 short, 1 000 long. */
  histories?: number;
  /** The first seed; history i runs seed + i. Default: {@link SHORT_FORM_FIRST_SEED} short, from the clock (printed) long. */
  seed?: number;
  /** One given history (a printed replay) instead of random ones. */
  replay?: string;
  /**
   * The daemon: the simulator (default), or the test bed's real LXD or Incus, where the histories
   * leave out what needs the simulator (Error, socket cut, freeze, frames) and the regression seeds
   * (found on the simulator) are not run. Default 30 histories there.
   */
  target?: 'sim' | 'lxd' | 'incus';
}

/** How many re-runs a failing history's shrinking may take (each one is a whole history). */
const shrinkBudget = 16;

/**
 * The promise checker (docs/chaos.md): random histories of operator actions, crashes and faults on
 * one shared world, each checked against Reflex's promises once it settled. The regression seeds
 * run first, every time. A violation prints its seed and a minimal replay, shrunk by dropping
 * steps while the same promise still breaks.
 */
export function randomHistories(ro: RandomOptions = {}): (opts: ChaosOptions) => Promise<ScenarioResult> {
  return async (opts) => {
    const target = ro.target ?? 'sim';
    const real = target !== 'sim';
    const count = ro.histories ?? (real ? 30 : opts.short ? 50 : 1_000);
    // The short form (CI) runs its histories on two worlds side by side: a history waits on the
    // simulator, Redis and its settling far more than on the CPU. Each world is a simulator, a
    // Redis and two replicas of its own; a history runs whole on one of them.
    const worlds = await startWorlds(target, opts.short && !real && !ro.replay ? 2 : 1);
    const world = worlds[0]!;
    // The short form (CI, 2 shared cores, beside the scale suites) draws shorter histories and shrinks less: ≥ 50 in 7 min.
    const shape = { ...(opts.short ? { maxSteps: 8 } : {}), without: world.daemon.without };
    const budget = opts.short ? 4 : shrinkBudget;
    // Within the scenario's limit (run.ts): past this no history starts, and what was found is reported.
    const deadline = Date.now() + (opts.short ? 440_000 : 7_000_000);
    const first = ro.seed ?? (opts.short ? SHORT_FORM_FIRST_SEED : Date.now() % 1_000_000_000);
    const seeds = real ? [] : opts.short ? regressionSeeds : [...regressionSeeds, ...openSeeds];
    const runs: { seed: number | undefined; steps: Step[] }[] = ro.replay
      ? [{ seed: undefined, steps: parseSteps(ro.replay) }]
      : [
          ...seeds.map((seed) => ({ seed, steps: generateHistory(seed) })),
          ...Array.from({ length: count }, (_, i) => ({ seed: first + i, steps: generateHistory(first + i, shape) })),
        ];
    let ran = 0;
    let faults = 0;
    let steps = 0;
    const found: string[] = [];
    const failing: { seed: number | undefined; violations: Violation[]; replay: string }[] = [];
    const shrunk = new Set<string>();
    let next = 0;
    const fresh = () => `h${(next++).toString(36)}`;
    try {
      opts.log(
        `  on ${world.daemon.name}: ${ro.replay ? 'one replayed history' : `${seeds.length} regression seed(s), then seeds ${first}…${first + count - 1}`}`,
      );
      let taken = 0;
      // Each world takes the next history not yet taken, until none is left or time is up.
      const drive = async (world: World) => {
        while (taken < runs.length && Date.now() <= deadline) await one(world, runs[taken++]!);
      };
      const one = async (world: World, r: (typeof runs)[number]) => {
        const run = await world.run(fresh(), r.steps);
        ran++;
        faults += run.faults;
        steps += r.steps.length;
        const violations = checkPromises(run.observation);
        if (ran % 10 === 0) opts.log(`  ${ran} histories, ${faults} faults, ${failing.length} failing`);
        if (!violations.length) return;
        // One shrink per kind of failure (the promises it breaks): the next ones cost a history each, not 16.
        const kind = [...new Set(violations.map((v) => v.promise))].sort().join('+');
        const again = shrunk.has(kind);
        shrunk.add(kind);
        opts.log(`  seed ${r.seed ?? '(replay)'}: ${violations.length} violation(s)${again ? ` (${kind} already shrunk)` : '; shrinking'}`);
        for (const v of violations) opts.log(`    ${v.promise}: ${v.detail}`);
        // CHAOS_DEBUG=1: the replicas' logs and the whole observation of a failing history.
        if (process.env.CHAOS_DEBUG) world.dumpLogs(opts.log);
        if (process.env.CHAOS_DEBUG)
          opts.log(
            JSON.stringify(
              {
                ...run.observation,
                audit: run.observation.audit
                  .filter((a) => a.type !== 'event' || a.instance?.startsWith('h'))
                  .map((a) => `${a.at} ${a.type} ${a.instance} ${a.summary}`),
              },
              null,
              1,
            ),
          );
        opts.log(`    history: ${describeSteps(r.steps)}`);
        const minimal = again ? r.steps : await shrink(world, r.steps, violations, fresh, budget, deadline);
        failing.push({ seed: r.seed, violations, replay: describeSteps(minimal) });
      };
      await Promise.all(worlds.map(drive));
      if (taken < runs.length) found.push(`time budget spent: ${runs.length - taken} of ${runs.length} histories not run`);
    } finally {
      await Promise.all(worlds.map((w) => w.stop()));
    }
    found.unshift(`${ran} histories (${steps} steps, ${faults} faults injected), ${failing.length} with a violation`);
    for (const f of failing) {
      for (const v of f.violations) found.push(`seed ${f.seed ?? '(replay)'}: ${v.promise}: ${v.detail}`);
      found.push(`seed ${f.seed ?? '(replay)'}: replay: npm run chaos -- random --replay "${f.replay}"`);
    }
    // The short form (CI) reports what its histories find and fails only when the harness does:
    // violations still open (docs/chaos.md) recur in new draws and timings, so a failing CI would say
    // "known" rather than "broke again". Each fixed finding is a test of its own that fails CI
    // (test/chaos/promise-seeds.test.ts, its minimal replay); the long form fails on any violation.
    if (opts.short && failing.length)
      found.push(`${failing.length} history(ies) with a violation: reported, not failing the short form (open findings: docs/chaos.md)`);
    return {
      did: `${ran} random histories of operator actions, crashes${real ? '' : ', Error'} and faults on 3 instances each of ${world.daemon.name}, 2 replicas; seeds from ${first}`,
      found,
      ok: opts.short || failing.length === 0,
    };
  };
}

/** `count` worlds on `target`, started one after the other (a world that fails to start stops those before it). */
async function startWorlds(target: 'sim' | 'lxd' | 'incus', count: number): Promise<World[]> {
  const worlds: World[] = [];
  try {
    for (let i = 0; i < count; i++) worlds.push(await World.start(target));
  } catch (err) {
    await Promise.all(worlds.map((w) => w.stop()));
    throw err;
  }
  return worlds;
}

/**
 * Drops steps one at a time while the history still breaks one of the same promises (a greedy
 * pass of delta debugging), within {@link shrinkBudget} re-runs. Timing varies between runs, so a
 * step whose removal makes the violation vanish once is kept.
 */
async function shrink(world: World, steps: Step[], violations: Violation[], fresh: () => string, budget: number, deadline: number): Promise<Step[]> {
  const broken = new Set(violations.map((v) => v.promise));
  let current = steps;
  for (let i = current.length - 1; i >= 0 && budget > 0 && Date.now() < deadline; i--) {
    const without = current.filter((_, j) => j !== i);
    if (!without.length) break;
    budget--;
    const again = checkPromises((await world.run(fresh(), without)).observation);
    if (again.some((v) => broken.has(v.promise))) current = without;
  }
  return current;
}
