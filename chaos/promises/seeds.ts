/**
 * Seeds of histories that broke a promise: every run of the promise checker runs them first, so
 * CI's short form keeps running them. docs/chaos.md says what each found and whether it is fixed;
 * test/chaos/promise-seeds.test.ts replays each one's minimal history.
 *
 * - 1041, 1046, 1056: the operator stops an instance, then an `instance-shutdown` without
 *   requestor arrives for it (forged, or stale): Reflex starts it (operator-decision). Minimal
 *   replay: `stop #1 +300ms; forged-shutdown #1 +300ms`. Fixed: a stop of an instance already down
 *   and not started since is contradicted (`already-down`, src/remediation/stop-confirmation.ts).
 * - 179019817: a crash, and the operator's stop 15 ms after it, while the daemon's stop hook still
 *   runs (the stop is refused, busy, and the shutdown not announced yet): Reflex starts the instance
 *   about 250 ms later (operator-decision). A stop sent after the announcement is honoured
 *   ("superseded … an operator's decision is never undone"); one sent before it is taken for older
 *   than the incident. Minimal replay: `crash #0 +15ms; stop #0 +300ms`. Open (the re-check at the
 *   moment of acting, src/remediation/).
 */
export const regressionSeeds: readonly number[] = [1041, 1046, 1056, 179019817];
