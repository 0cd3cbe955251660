import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import type { AuditInput } from '../audit/audit-record.js';
import type { z } from 'zod';
import type { CanonicalEvent } from '../events/canonical-event.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { AlertNotifier } from '../alerts/alerts.js';

/**
 * What an action sees: the client, the instance it acts on, its params (as its schema parsed them,
 * defaults applied), and how to record its calls.
 */
export interface ActionContext<P = Record<string, unknown>> {
  /**
   * The acting client: the only client an action gets. Reads go to the server; every mutating
   * request is checked against the instance's lock, marked as Reflex's own, audited with the path
   * sent, and its operation waited on within Reflex's bound. In dry-run its first mutating request
   * is audited and refused, which ends the action as a dry-run: an action needs no branch for it.
   */
  client: InstanceClient;
  instance: string;
  params: P;
  /**
   * A dry-run job: the client sends no mutating request. An action that acts other than through
   * the client (an HTTP call, an alert, an event) must not, and says what it would do.
   */
  dryRun: boolean;
  /**
   * The instance as the re-check read it under the instance's lock just before the action, when
   * no other operation touched it since the listing: an action may decide on its status instead
   * of reading it again. Absent when the action must read for itself.
   */
  observed?: Pick<Instance, 'status' | 'status_code'>;
  /** The acting client, with `record`'s fields in the audit record of each of its calls (a housekeeping step and its plan). */
  clientNoting(record: Record<string, unknown>): InstanceClient;
  audit(record: Omit<AuditInput, 'correlationId' | 'instance' | 'target'>): Promise<void>;
  /** The job being run: its rule, incident and, after a follow-up event, the chain that led to it. */
  job?: { rule: string; correlationId: string; target: string; project: string; location: string; chain: string[]; event?: CanonicalEvent };
  /**
   * Publishes a canonical event into the events queue under `jobId` (a second publish with the
   * same id is a no-op). Absent when this process has no events queue.
   */
  publish?(event: CanonicalEvent, jobId: string): Promise<void>;
  /**
   * The process's notifier (the `notify` action); absent when no receivers are configured. Typed by
   * what alerts call, not by the Notifier class: this interface is part of the rule contract, and
   * the class's declarations would bring BullMQ's and ioredis' (1.1 MB) into every rule check.
   */
  notifier?: AlertNotifier;
}

/** The result of an action that did not throw. */
export interface ActionOutcome {
  result: 'done' | 'skipped' | 'dry-run';
  summary: string;
  operationId?: string;
  /** The snapshot a housekeeping job made under a name it chose when it ran (it ran late), for the snapshot ledger. */
  snapshot?: string;
}

/**
 * An action in the registry (built-in, or user-defined with `defineAction`). Throws ReflexError on
 * failure; the retry policy lives in the executor. `P` is the type its params schema parses to.
 */
export interface Action<P = any> {
  name: string;
  describe: string;
  /**
   * The schema of its params: rules are checked against it when they load (a bad param is a load
   * error with file:line), and the executor parses a job's params with it again before running
   * (a job queued before a change of rules), so `run` sees them parsed, defaults applied.
   */
  params: z.ZodType<P, any>;
  /** Brings an instance back up: counts against the rule's crash-loop budget. Default false. */
  restarts?: boolean;
  /**
   * Acts on the instance, so it runs under the instance's lock and re-checks the rule before its
   * call. False for actions that only tell (notify) or publish (emit): they never wait on a lock.
   * Default true.
   */
  touchesInstance?: boolean;
  run(ctx: ActionContext<P>): Promise<ActionOutcome>;
}

/** Why params do not fit a schema, each field at fault named (`force: expected boolean, received string`); undefined when they fit. */
export function paramsProblem(schema: z.ZodType, params: unknown): string | undefined {
  const parsed = schema.safeParse(params);
  if (parsed.success) return undefined;
  return parsed.error.issues.map((i) => `${i.path.join('.') || '(params)'}: ${i.message}`).join('; ');
}

/** An action's params checked against its schema: CONFIG_INVALID naming each field at fault otherwise. */
export function actionParams<S extends z.ZodType>(action: string, schema: S, params: unknown): z.infer<S> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  throw new ReflexError('CONFIG_INVALID', `${action} params: ${paramsProblem(schema, params)}`);
}
