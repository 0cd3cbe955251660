import type { InstanceClient } from '../client/client.js';
import type { AuditInput } from '../audit/audit-log.js';
import type { Operation } from '../client/operation.js';
import type { CanonicalEvent } from '../events/canonical-event.js';

/** What an action sees: the client, the instance it acts on, and how to record its calls. */
export interface ActionContext {
  client: InstanceClient;
  instance: string;
  params: Record<string, unknown>;
  /** When true the action must not send a mutating request; it records what it would do. */
  dryRun: boolean;
  /**
   * Sends a mutating request through the audit and self-marking path and waits for its operation;
   * returns it once finished (undefined in dry-run). Throws when the call or the operation fails.
   */
  call(description: { method: string; path: string; action: string }, send: () => Promise<Operation | void>): Promise<Operation | undefined>;
  audit(record: Omit<AuditInput, 'correlationId' | 'instance' | 'target'>): Promise<void>;
  /** The job being run: its rule, incident and, after a follow-up event, the chain that led to it. */
  job?: { rule: string; correlationId: string; target: string; project: string; location: string; chain: string[] };
  /**
   * Publishes a canonical event into the events queue under `jobId` (a second publish with the
   * same id is a no-op). Absent when this process has no events queue.
   */
  publish?(event: CanonicalEvent, jobId: string): Promise<void>;
}

/** The result of an action that did not throw. */
export interface ActionOutcome {
  result: 'done' | 'skipped' | 'dry-run';
  summary: string;
  operationId?: string;
}

/** An action in the registry. Throws ReflexError on failure; the retry policy lives in the executor. */
export interface Action {
  name: string;
  describe: string;
  run(ctx: ActionContext): Promise<ActionOutcome>;
}
