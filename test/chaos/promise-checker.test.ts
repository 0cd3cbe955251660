import { describe, expect, it } from 'vitest';
import { checkPromises, type Observation, type PromiseName } from '../../chaos/promises/checker.js';
import { describeSteps, generateHistory, parseSteps } from '../../chaos/promises/history.js';
import type { StoredAuditRecord } from '../../src/audit/audit-record.js';
import type { CallRecord } from '../../src/simulator/context.js';

/**
 * The promise checker judged on histories written by hand: each promise broken once, the way the
 * daemon's call history and the audit would show it, and the same history kept, for contrast.
 */
const t0 = Date.parse('2026-12-01T10:00:00Z');
const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';

function call(at: number, action: string, statusBefore: number, agent = '', extra: Partial<CallRecord> = {}): CallRecord {
  return { at: t0 + at, project: 'default', name: 'h1-0', uuid: A, action, statusBefore, agent, result: 'success', ...extra };
}
const op = (step: string) => `reflex-chaos-operator/${step}`;

function audit(at: number, type: StoredAuditRecord['type'], fields: Record<string, unknown> = {}): StoredAuditRecord {
  return { id: `${t0 + at}-0`, type, at: new Date(t0 + at).toISOString(), correlationId: 'c', instance: 'h1-0', summary: type, ...fields };
}

function observation(o: Partial<Observation>): Observation {
  return { calls: [], incidents: [], silences: [], audit: [], frames: [], final: [{ name: 'h1-0', uuid: A, status: 103 }], died: [], gaps: [], ...o };
}

const broken = (o: Observation): PromiseName[] => checkPromises(o).map((v) => v.promise);
const crashAt = (at: number, uuid = A) => ({ at: t0 + at, kind: 'crash' as const, name: 'h1-0', uuid });

describe('the promise checker', () => {
  it('passes a crash healed once', () => {
    expect(broken(observation({ incidents: [crashAt(0)], calls: [call(100, 'start', 102)] }))).toEqual([]);
  });

  it("flags a start after the operator's stop (the decision undone)", () => {
    const calls = [call(0, 'stop', 103, op('stop')), call(500, 'start', 102)];
    expect(broken(observation({ incidents: [crashAt(-1000)], calls }))).toEqual(['operator-decision']);
  });

  it("counts a stop the daemon refused (the instance had just crashed) as the operator's decision", () => {
    const calls = [call(50, 'stop', 102, op('stop'), { result: 'failure' }), call(500, 'start', 102)];
    expect(broken(observation({ incidents: [crashAt(0)], calls }))).toEqual(['operator-decision']);
    const final = [{ name: 'h1-0', uuid: A, status: 102 }];
    expect(broken(observation({ incidents: [crashAt(0)], calls: calls.slice(0, 1), final }))).toEqual([]);
  });

  it('does not order calls closer than the slack of a daemon whose calls are stamped late (a real one)', () => {
    const calls = [call(0, 'stop', 103, op('recreate')), call(400, 'start', 102)];
    expect(broken(observation({ incidents: [crashAt(-1000)], calls, orderSlackMs: 500 }))).toEqual([]);
    expect(broken(observation({ incidents: [crashAt(-1000)], calls, orderSlackMs: 0 }))).toEqual(['operator-decision']);
  });

  it("takes an operator's stop landing within the re-check's race window before Reflex's start for a race, not a decision undone", () => {
    const calls = (gap: number) => [call(0, 'stop', 102, op('stop')), call(gap, 'start', 102)];
    expect(broken(observation({ incidents: [crashAt(-1000)], calls: calls(1) }))).toEqual([]);
    expect(broken(observation({ incidents: [crashAt(-1000)], calls: calls(300) }))).toEqual(['operator-decision']);
  });

  it('flags a start for a crash of an instance the operator had opted out', () => {
    const calls = [call(0, 'update', 103, op('opt-out')), call(2_000, 'start', 102)];
    expect(broken(observation({ incidents: [crashAt(1_000)], calls }))).toEqual(['operator-decision']);
  });

  it("does not count an opt-out the daemon refused (busy in a crash's stop hook): the config Reflex reads never changed", () => {
    const calls = [call(1_200, 'update', 102, op('opt-out'), { result: 'failure' }), call(2_000, 'start', 102)];
    expect(broken(observation({ incidents: [crashAt(1_000)], calls }))).toEqual([]);
  });

  it("does not count a re-create the daemon refused (busy in a crash's stop hook): the instance that crashed is still the one there", () => {
    const refused = { result: 'failure' as const };
    const calls = [
      call(1_200, 'delete', 102, op('recreate'), refused),
      call(1_210, 'create', 102, op('recreate'), refused),
      call(2_000, 'start', 102),
    ];
    expect(broken(observation({ incidents: [crashAt(1_000)], calls }))).toEqual([]);
  });

  it("takes an operator's refused stop followed by their refused start (a whole re-create sent into a crash's stop hook) as a wish that it runs: Reflex's start for the crash undoes nothing", () => {
    const refused = { result: 'failure' as const };
    const stop = call(1_200, 'stop', 102, op('recreate'), refused);
    const recreate = [call(1_210, 'delete', 102, op('recreate'), refused), call(1_220, 'create', 102, op('recreate'), refused)];
    const start = call(1_230, 'start', 102, op('recreate'), refused);
    const reflex = call(2_000, 'start', 102);
    expect(broken(observation({ incidents: [crashAt(1_000)], calls: [stop, ...recreate, start, reflex] }))).toEqual([]);
    expect(broken(observation({ incidents: [crashAt(1_000)], calls: [stop, ...recreate, reflex] }))).toEqual(['operator-decision']);
  });

  it("flags a start inside the operator's silence, but not one a heal asked for", () => {
    const silences = [{ at: t0, name: 'h1-0', until: t0 + 5_000 }];
    expect(broken(observation({ incidents: [crashAt(1_000)], silences, calls: [call(2_000, 'start', 102)] }))).toEqual(['operator-decision']);
    const heal = { at: t0 + 1_500, kind: 'heal' as const, name: 'h1-0', uuid: A };
    expect(broken(observation({ incidents: [crashAt(1_000), heal], silences, calls: [call(2_000, 'start', 102)] }))).toEqual([]);
  });

  it('flags a start of the re-created instance for the crash of the one deleted before it', () => {
    const calls = [
      call(100, 'delete', 102, op('recreate')),
      call(200, 'create', 102, op('recreate'), { uuid: B }),
      call(600, 'start', 102, '', { uuid: B }),
    ];
    const final = [{ name: 'h1-0', uuid: B, status: 103 }];
    expect(broken(observation({ incidents: [crashAt(0)], calls, final }))).toEqual(['identity']);
  });

  it('flags a second start for one crash, and not a start the daemon refused', () => {
    expect(broken(observation({ incidents: [crashAt(0)], calls: [call(100, 'start', 102), call(900, 'start', 102)] }))).toEqual(['once']);
    const refused = call(100, 'start', 102, '', { result: 'failure' });
    expect(broken(observation({ incidents: [crashAt(0)], calls: [refused, call(900, 'start', 102)] }))).toEqual([]);
  });

  it('flags a call no rule asks for (a stop of a running instance by Reflex)', () => {
    expect(broken(observation({ calls: [call(100, 'stop', 103)] }))).toEqual(['own-actions']);
  });

  it("takes Reflex's stop after an operator's stop that met its start in flight (refused) for the start given back, and one without it for a call no rule asks for", () => {
    const final = [{ name: 'h1-0', uuid: A, status: 102 }];
    const start = call(100, 'start', 102);
    const refused = call(150, 'stop', 102, op('stop'), { result: 'failure' });
    expect(broken(observation({ incidents: [crashAt(0)], calls: [start, refused, call(400, 'stop', 103)], final }))).toEqual([]);
    expect(broken(observation({ incidents: [crashAt(0)], calls: [start, call(400, 'stop', 103)], final }))).toEqual(['own-actions']);
    // The operator's stop after the crash and just before Reflex's start (within the re-check's race): given back too.
    const before = call(80, 'stop', 102, op('stop'), { result: 'failure' });
    expect(broken(observation({ incidents: [crashAt(0)], calls: [before, start, call(400, 'stop', 103)], final }))).toEqual([]);
    // A stop of the operator's before the incident asks nothing of a later start: Reflex's stop is its own.
    const earlier = call(-80, 'stop', 103, op('stop'));
    expect(broken(observation({ incidents: [crashAt(0)], calls: [earlier, start, call(400, 'stop', 103)], final }))).toContain('own-actions');
  });

  it('flags a crash left Stopped without an alert, and passes it with one', () => {
    const final = [{ name: 'h1-0', uuid: A, status: 102 }];
    expect(broken(observation({ incidents: [crashAt(0)], final }))).toEqual(['unknown-cause']);
    const alert = audit(800, 'alert', { kind: 'instance.unknown-stop', fingerprint: 'f1' });
    expect(broken(observation({ incidents: [crashAt(0)], final, audit: [alert] }))).toEqual([]);
  });

  it('asks nothing of a crash that came while the instance was opted out, opted in again after it', () => {
    const final = [{ name: 'h1-0', uuid: A, status: 102 }];
    const calls = [call(0, 'update', 103, op('opt-out')), call(2_000, 'update', 102, op('opt-in'))];
    expect(broken(observation({ incidents: [crashAt(1_000)], calls, final }))).toEqual([]);
    expect(broken(observation({ incidents: [crashAt(3_000)], calls, final }))).toEqual(['unknown-cause']);
  });

  it('flags a lifecycle frame without an audit record, unless it came while no replica wrote the stream', () => {
    const frames = [{ id: 'f-1', name: 'h1-0', action: 'instance-updated', at: t0 + 100 }];
    expect(broken(observation({ frames }))).toEqual(['no-loss']);
    expect(broken(observation({ frames, audit: [audit(150, 'event', { correlationId: 'f-1' })] }))).toEqual([]);
    expect(broken(observation({ frames, gaps: [{ from: t0, to: t0 + 3_000 }] }))).toEqual([]);
  });

  it('flags an alert still firing about an instance that is Running, or never existed', () => {
    const alert = audit(100, 'alert', { kind: 'action-failed', fingerprint: 'f1' });
    expect(broken(observation({ calls: [call(0, 'create', 102, op('setup'))], audit: [alert] }))).toEqual(['alerts-resolve']);
    const resolved = audit(900, 'alert', { kind: 'action-failed', fingerprint: 'f1', resolved: true });
    expect(broken(observation({ calls: [call(0, 'create', 102, op('setup'))], audit: [alert, resolved] }))).toEqual([]);
    const ghost = audit(100, 'alert', { kind: 'instance.crashed', fingerprint: 'f2', instance: 'h1-ghost' });
    expect(broken(observation({ audit: [ghost] }))).toEqual(['alerts-resolve']);
  });

  it('flags a replica that died by itself', () => {
    expect(broken(observation({ died: ['replica pid 1 exited (SIGSEGV)'] }))).toEqual(['alive']);
  });
});

describe('random histories', () => {
  it('are the same for the same seed, and differ between seeds', () => {
    expect(generateHistory(42)).toEqual(generateHistory(42));
    expect(generateHistory(42)).not.toEqual(generateHistory(43));
  });

  it('read back from their printed replay', () => {
    for (const seed of [1, 2, 3, 1_000]) expect(parseSteps(describeSteps(generateHistory(seed)))).toEqual(generateHistory(seed));
    expect(() => parseSteps('explode #0 +1ms')).toThrow(/not a step/);
  });

  it('leave out the kinds a bed cannot inject', () => {
    const kinds = new Set(
      Array.from({ length: 200 }, (_, s) => generateHistory(s, { without: ['error', 'daemon-freeze'] }))
        .flat()
        .map((s) => s.kind),
    );
    expect(kinds.has('error') || kinds.has('daemon-freeze')).toBe(false);
    expect(kinds.has('crash')).toBe(true);
  });
});
