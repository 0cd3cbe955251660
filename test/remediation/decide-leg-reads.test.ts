import { Queue } from 'bullmq';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { InstanceClient } from '../../src/client/client.js';
import { StatusCode } from '../../src/client/status-code.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { keySpace } from '../../src/redis/key-space.js';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { EventProcessor } from '../../src/remediation/decide/event-processor.js';
import { PendingActions } from '../../src/remediation/pending-actions.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { loadRulesFolder } from '../../src/rules/rules-folder.js';
import { Silences } from '../../src/silences/silences.js';
import type { RunningSimulator } from '../../src/simulator/simulator.js';
import { crashEvent } from '../support/crash-event.js';
import { fileSimulator } from '../support/file-simulator.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { bundledRules, optIn, quickSimTimings } from '../support/stack.js';

/** A command the processor sent: its name and keys, and the commands answered before it left. */
interface Sent {
  name: string;
  args: string[];
  answeredBefore: Set<number>;
}

/**
 * A crash's decide leg sends the reads that do not need each other's answers together: the
 * record of Reflex's own operations beside the tracker's entry (both before settling), and the
 * silences the gate judges beside the event's archive and audit. Each pair leaves before either
 * answer is in, so each costs one round trip, not two.
 */
describe("a crash's decide leg (the event processor on the simulator)", () => {
  let sim: RunningSimulator;
  let client: InstanceClient;
  let target: string;
  const { redis, cleanups } = fileSimulator(quickSimTimings, (s) => ({ sim, client, target } = s));

  it('reads the own-operations record beside the tracker, and the silences beside the audit, and queues the restart', async () => {
    sim.controls.addInstance({ name: 'rounds-1', config: optIn });
    const keys = keySpace(uniquePrefix('decide-rounds'));
    const traced = redisClient();
    const queueConnection = redisClient();
    const actions = new Queue(keys.actionsQueue, { connection: queueConnection, prefix: keys.bullPrefix });
    cleanups.push(async () => {
      await actions.obliterate({ force: true });
      await actions.close();
      queueConnection.disconnect();
      traced.disconnect();
    });
    const sent: Sent[] = [];
    const answered = new Set<number>();
    const send = traced.sendCommand.bind(traced);
    traced.sendCommand = ((command: Parameters<typeof send>[0], ...rest: unknown[]) => {
      const i = sent.push({ name: command.name, args: command.args.map(String), answeredBefore: new Set(answered) }) - 1;
      void command.promise.then(
        () => answered.add(i),
        () => answered.add(i),
      );
      return (send as (...a: unknown[]) => unknown)(command, ...rest);
    }) as typeof traced.sendCommand;

    const audit = new AuditLog(traced, keys.audit);
    const tracker = new StateTracker(traced, keys);
    const ref = { target, project: 'default', instance: 'rounds-1' };
    await tracker.update(ref, StatusCode.Running, Date.now() - 5_000, { source: 'event', eventId: 'started-1', intent: 'self' });
    const { rules } = await loadRulesFolder(bundledRules);
    const processor = new EventProcessor({
      redis: traced,
      keys,
      client: () => client,
      tracker,
      ownOperations: new OwnOperations(traced, keys),
      audit,
      engine: new RuleEngine(rules),
      gate: new ActionGate(traced, keys, new Silences(traced, keys.silences)),
      actions,
      pending: new PendingActions(traced, keys, actions, { audit }),
      logger: pino({ level: 'silent' }),
      stopSettleMs: 200,
    });
    sim.controls.crash('rounds-1');
    sent.splice(0);
    answered.clear();
    const event = crashEvent(target, 'rounds-1');
    expect(await processor.process({ kind: 'synthetic', target, event, receivedAt: Date.now() })).toEqual(['processed']);
    expect(Object.values(await actions.getJobCounts('waiting', 'prioritized', 'delayed')).reduce((a, b) => a + b, 0)).toBe(1);

    const index = (what: string, match: (s: Sent) => boolean): number => {
      const i = sent.findIndex(match);
      expect(i, `${what} sent`).toBeGreaterThanOrEqual(0);
      return i;
    };
    const trackerRead = index("the tracker's entry", (s) => s.name === 'hget' && s.args[0] === keys.state(target));
    const ownRead = index('the own-operations record', (s) => s.name === 'hvals' && s.args[0] === keys.ownOperations(ref));
    const silencesRead = index('the silences', (s) => s.name === 'hvals' && s.args[0] === keys.silences);
    const auditWrite = index("the event's audit record", (s) => s.name === 'evalsha' && s.args.includes(keys.audit));
    expect(sent[ownRead]!.answeredBefore.has(trackerRead), 'the own-operations record read after the tracker answered').toBe(false);
    expect(sent[silencesRead]!.answeredBefore.has(auditWrite), "the silences read after the event's audit was written").toBe(false);
  });
});
