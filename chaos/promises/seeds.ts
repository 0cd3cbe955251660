/**
 * Seeds of histories that broke a promise: every run of the promise checker runs them first, so
 * CI's short form keeps running them. docs/chaos.md says what each found and whether it is fixed;
 * test/chaos/promise-seeds.test.ts replays each one's minimal history.
 *
 * - 1041, 1046, 1056: the operator stops an instance, then an `instance-shutdown` without
 *   requestor arrives for it (forged, or stale): Reflex starts it (operator-decision). Minimal
 *   replay: `stop #1 +300ms; forged-shutdown #1 +300ms`. Open (issue #39, item 2).
 */
export const regressionSeeds: readonly number[] = [1041, 1046, 1056];
