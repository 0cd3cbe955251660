import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrape, startObservabilityBed, valueOf, waitForMetric, type ObservabilityBed } from './observability-bed.js';
import { until } from '../support/wait.js';

const rule = 'restart-small-budget';
const exported = [
  'reflex_events_total',
  'reflex_ingest_lag_seconds',
  'reflex_stream_reconnects_total',
  'reflex_resyncs_total',
  'reflex_gaps_resynced_total',
  'reflex_resync_changes_total',
  'reflex_rule_decisions_total',
  'reflex_actions_total',
  'reflex_action_retries_total',
  'reflex_dlq_size',
  'reflex_quarantines_total',
  'reflex_storms_total',
  'reflex_lease_holder',
  'reflex_stream_connected',
  'reflex_queue_jobs',
  'reflex_ready',
  'reflex_queue_paused',
  'reflex_queue_workers',
  'reflex_ingest_buffered_frames',
];

describe('Prometheus metrics of a running Reflex (simulator, real Redis, scraped over HTTP)', () => {
  let bed: ObservabilityBed;
  let target: string;

  beforeAll(async () => {
    bed = await startObservabilityBed({
      rulesDir: 'test/fixtures/rules-crash-loop',
      instances: [{ name: 'web-1' }, { name: 'web-2' }, { name: 'web-3' }, { name: 'loop-1' }, { name: 'db-1' }, { name: 'batch-1', optIn: false }],
    });
    target = bed.reflex.target;
    await waitForMetric(bed.url, 'reflex_stream_connected', { target }, (v) => v === 1);
    // The first connect's resync sets the baseline; wait for it so later counts are the test's own.
    await waitForMetric(bed.url, 'reflex_gaps_resynced_total', {}, (v) => v >= 1);
  });

  afterAll(async () => {
    await bed?.stop();
  });

  it('exports every metric with a help text, on its own registry', async () => {
    const text = await (await fetch(`${bed.url}/metrics`)).text();
    for (const name of exported) expect(text, name).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
    expect(text).toMatch(/^reflex_process_cpu_seconds_total /m);
    expect(text).toMatch(/^reflex_nodejs_eventloop_lag_p99_seconds /m);
  });

  it('answers /healthz, and /readyz with each check when Redis, the stream and the workers are up', async () => {
    expect((await fetch(`${bed.url}/healthz`)).status).toBe(200);
    const res = await fetch(`${bed.url}/readyz`);
    const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean; detail: string }> };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.checks).toMatchObject({
      redis: { ok: true },
      subscriber: { ok: true, detail: 'lease holder, event stream connected' },
      workers: { ok: true },
    });
  });

  it('counts a crash as an event, a matched decision and an action done, and observes its ingest lag', async () => {
    const before = await scrape(bed.url);
    bed.sim.controls.crash('web-1');
    await waitForMetric(bed.url, 'reflex_actions_total', { action: 'start', outcome: 'done' }, (v) => v >= 1);
    const after = await scrape(bed.url);
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('reflex_events_total', { kind: 'instance.status' })).toBeGreaterThanOrEqual(1);
    expect(delta('reflex_rule_decisions_total', { rule, decision: 'matched' })).toBe(1);
    expect(delta('reflex_ingest_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'reflex_ingest_lag_seconds_sum')).toBeGreaterThan(0);
  });

  it('counts a crash of an instance that did not opt in as a skipped decision and no action', async () => {
    const actionsBefore = valueOf(await scrape(bed.url), 'reflex_actions_total');
    bed.sim.controls.crash('batch-1');
    await waitForMetric(bed.url, 'reflex_rule_decisions_total', { rule, decision: 'skipped' }, (v) => v >= 1);
    expect(valueOf(await scrape(bed.url), 'reflex_actions_total')).toBe(actionsBefore);
  });

  it('counts a dropped event socket as a reconnect, and the gap as resynced once the stream is back', async () => {
    const before = await scrape(bed.url);
    const grew = (name: string) => waitForMetric(bed.url, name, {}, (v) => v > valueOf(before, name));
    bed.sim.controls.dropEventSockets();
    const reconnects = await grew('reflex_stream_reconnects_total');
    const resynced = await grew('reflex_gaps_resynced_total');
    const connected = await waitForMetric(bed.url, 'reflex_stream_connected', { target }, (v) => v === 1);
    expect({
      reconnects: reconnects - valueOf(before, 'reflex_stream_reconnects_total'),
      resynced: resynced - valueOf(before, 'reflex_gaps_resynced_total'),
      connected,
    }).toEqual({ reconnects: 1, resynced: 1, connected: 1 });
  });

  it('counts a status change only a resync sees (Error 112 has no event) as a resync change', async () => {
    const before = await scrape(bed.url);
    bed.sim.controls.setError('db-1');
    await bed.reflex.resync();
    const after = await scrape(bed.url);
    expect(valueOf(after, 'reflex_resync_changes_total') - valueOf(before, 'reflex_resync_changes_total')).toBe(1);
    expect(valueOf(after, 'reflex_resyncs_total', { reason: 'manual' }) - valueOf(before, 'reflex_resyncs_total', { reason: 'manual' })).toBe(1);
  });

  it('counts starts refused as busy as retries, then the start that goes through as done', async () => {
    const before = await scrape(bed.url);
    bed.sim.controls.failNext('web-2', 2, 'Instance is busy running a "stop" operation');
    bed.sim.controls.crash('web-2');
    await waitForMetric(
      bed.url,
      'reflex_actions_total',
      { action: 'start', outcome: 'done' },
      (v) => v === valueOf(before, 'reflex_actions_total', { action: 'start', outcome: 'done' }) + 1,
    );
    const after = await scrape(bed.url);
    expect(
      valueOf(after, 'reflex_action_retries_total', { action: 'start' }) - valueOf(before, 'reflex_action_retries_total', { action: 'start' }),
    ).toBe(2);
    expect(
      valueOf(after, 'reflex_actions_total', { action: 'start', outcome: 'retrying' }) -
        valueOf(before, 'reflex_actions_total', { action: 'start', outcome: 'retrying' }),
    ).toBe(2);
  });

  it('counts an action that fails for good as failed, and shows it in the DLQ size', async () => {
    const before = await scrape(bed.url);
    expect(valueOf(before, 'reflex_dlq_size')).toBe(0);
    bed.sim.controls.failNext('web-3', 10, 'Injected failure');
    bed.sim.controls.crash('web-3');
    await waitForMetric(bed.url, 'reflex_dlq_size', {}, (v) => v === 1);
    const after = await scrape(bed.url);
    expect(
      valueOf(after, 'reflex_actions_total', { action: 'start', outcome: 'failed' }) -
        valueOf(before, 'reflex_actions_total', { action: 'start', outcome: 'failed' }),
    ).toBe(1);
    expect(valueOf(after, 'reflex_queue_jobs', { queue: 'actions', state: 'failed' })).toBe(1);
    bed.sim.controls.clearFaults('web-3');
  });

  it('counts one quarantine when an instance crash-loops past its budget, and suppressed decisions after it', async () => {
    const before = await scrape(bed.url);
    bed.sim.controls.crashLoop('loop-1', 300);
    bed.sim.controls.crash('loop-1');
    await waitForMetric(bed.url, 'reflex_quarantines_total', {}, (v) => v === valueOf(before, 'reflex_quarantines_total') + 1, 25_000);
    bed.sim.controls.crashLoop('loop-1', false);
    const after = await scrape(bed.url);
    expect(
      valueOf(after, 'reflex_rule_decisions_total', { rule, decision: 'suppressed' }) -
        valueOf(before, 'reflex_rule_decisions_total', { rule, decision: 'suppressed' }),
    ).toBeGreaterThanOrEqual(1);
  }, 40_000);

  it('reports the lease holder as 1 on the reading replica and 0 on a standby, and follows a takeover (buffered frames by role too)', async () => {
    const standby = await bed.replica({ role: 'subscriber' });
    const standbyUrl = standby.http!.url;
    await until(
      'the standby reading the stream',
      async () =>
        ((await (await fetch(`${standbyUrl}/readyz`)).json()) as { checks: Record<string, { detail: string }> }).checks.subscriber?.detail.includes(
          'event stream connected',
        ) === true,
      10_000,
    );
    expect(valueOf(await scrape(bed.url), 'reflex_lease_holder', { target })).toBe(1);
    expect(valueOf(await scrape(standbyUrl), 'reflex_lease_holder', { target })).toBe(0);
    const ready = (await (await fetch(`${standbyUrl}/readyz`)).json()) as { checks: Record<string, { ok: boolean; detail: string }> };
    expect(ready.checks.subscriber).toEqual({ ok: true, detail: 'standby (another replica holds the lease), event stream connected' });

    // Read at scrape time: one series per target, labelled with the role it has now (no stale one).
    const bufferedRoles = async (url: string) =>
      (await scrape(url)).filter((s) => s.name === 'reflex_ingest_buffered_frames' && s.labels.target === target).map((s) => s.labels.role);
    expect(await bufferedRoles(bed.url)).toEqual(['holder']);
    expect(await bufferedRoles(standbyUrl)).toEqual(['follower']);

    await bed.reflex.lease!.stop();
    await waitForMetric(bed.url, 'reflex_lease_holder', { target }, (v) => v === 0);
    await waitForMetric(standbyUrl, 'reflex_lease_holder', { target }, (v) => v === 1);
    expect(await bufferedRoles(bed.url)).toEqual(['follower']);
    expect(await bufferedRoles(standbyUrl)).toEqual(['holder']);
  });
});
