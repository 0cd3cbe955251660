/**
 * Seeds of histories that broke a promise: every run of the promise checker runs them first, so
 * CI's short form keeps running them. docs/chaos.md says what each found and whether it is fixed;
 * test/chaos/promise-seeds.test.ts replays each one's minimal history.
 *
 * - 1041, 1046, 1056: the operator stops an instance, then an `instance-shutdown` without
 *   requestor arrives for it (forged, or stale): Reflex starts it (operator-decision). Minimal
 *   replay: `stop #1 +300ms; forged-shutdown #1 +300ms`. Fixed: a stop of an instance already down
 *   and not started since is contradicted (`already-down`, src/remediation/stop-confirmation.ts).
 *   1041 again under CI's load (docs/chaos.md 35): an action.failed alert firing while Running, a
 *   give-up raised after the operator's Running event. Fixed: a start refused while someone else's
 *   ran is a skip, and a give-up whose instance runs since the incident ends its alert.
 * - 179019817: a crash, and the operator's stop 15 ms after it, while the daemon's stop hook still
 *   runs (the stop is taken, 202, and its operation fails "The instance is already stopped", as on
 *   LXD 5.0.2 and Incus 6.0; the shutdown is not announced yet): Reflex started the instance about
 *   250 ms later (operator-decision). A stop sent after the announcement was honoured; one sent
 *   before it was taken for older than the incident. Minimal replay: `crash #0 +15ms; stop #0
 *   +300ms`. Fixed: the re-check at the moment of acting asks for the operator's last request since
 *   the instance last ran, as the stream showed its operation, refused or not
 *   (src/remediation/operator-requests.ts).
 * - 7002 (and 7149, 204 earlier): an alert "failed to start and never ran: The instance is already
 *   running" raised and never resolved while the instance runs (alerts-resolve): an operator's
 *   start refused because the instance already ran was taken for a failed launch. Fixed: a start
 *   refused "already running" is not a failed launch (src/events/intent.ts isFailedStart).
 * - 7273: a "found Stopped after a gap, cause unknown" alert left firing after the instance was
 *   deleted (alerts-resolve): it was an audit-only record beside the real alert, with no
 *   fingerprint for its end to name. Fixed: incident alerts are raised through Alerts (audited
 *   with their fingerprint) and their end is audited (src/notify/instance-alerts.ts).
 * - 100002: a crash alert left firing with the instance Running after a full Redis and an Error
 *   (alerts-resolve): the resolution Redis refused was dropped with a warning. Fixed: it fails the
 *   event job, whose retry resumes it.
 * - 140123, 140202 (docs/chaos.md 20): a replica killed right after its start of a crashed
 *   instance, before the queue heard the job end; the stalled job ran again 7 s later on the other
 *   replica and undid the operator's stop (operator-decision). Fixed: a job's end is recorded
 *   before the queue hears it, and a stalled copy ends as the first run did (src/remediation/act/inflight.ts);
 *   again under CI's load (35): a killed run that started the instance and left no end (its call
 *   unsettled). Fixed: such a run's start, found by last_used_at, is not made again (act/resume.ts).
 * - 530086, 500080 (22): the operator stops an instance and renames it, then a forged shutdown of
 *   the new name: Reflex started it (operator-decision). Fixed: a rename carries the tracker's entry
 *   and the operator's requests to the new name.
 * - 500216 (23): the operator stopped and renamed an instance while a socket cut and a full Redis
 *   hid it, then a forged shutdown of the new name: Reflex started it (operator-decision), or the
 *   frames went unaudited (no-loss). Fixed: a gap's resync refused by Redis is retried on the open
 *   stream instead of reconnecting (each reconnect was a gap of its own), and a rename lost in a
 *   gap is recognised by volatile.uuid and published (src/events/target-reader.ts, resync.ts).
 */
export const regressionSeeds: readonly number[] = [1041, 1046, 1056, 179019817, 7002, 7273, 100002, 140123, 140202, 530086, 500080, 500216];

/**
 * Seeds of violations found and not fixed yet (docs/chaos.md, "Violations found"): the long form
 * runs them after the regression seeds and reports what they find, as every history; the short
 * form (CI) leaves them out, so that it fails on what broke again, not on what is known. Once one
 * is fixed it moves to {@link regressionSeeds}.
 */
// 140000, 340041, 340214: found by an earlier stop's final long run (docs/chaos.md 21); 500192 (24)
// by the next; 700020 (24) by its final run. 860120 (34): two of its causes fixed, one path left
// (1 of 18 replays after the fixes: a crash, then a rename, both found only by a resync).
export const openSeeds: readonly number[] = [140000, 340041, 340214, 500192, 700020, 860120];

/**
 * The first seed of the short form's histories (CI): a fixed range, so that a run can be replayed
 * and a failure in CI is a change in Reflex, not a new draw. The long form draws from the clock.
 */
export const SHORT_FORM_FIRST_SEED = 20_000;
