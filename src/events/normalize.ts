import { createHash } from 'node:crypto';
import { StatusCode } from '../client/status-code.js';
import type { CanonicalEvent, Intent, OperationStatusEvent } from './canonical-event.js';
import type { Frame, LifecycleFrame, OperationFrame } from './frame.js';
import { lifecycleIntent } from './intent.js';
import { parseSource } from './source.js';

/**
 * Instance status each lifecycle action announces. Restart on LXD emits only
 * `instance-restarted`, so it counts as a transition to Running (notes §2).
 */
const statusByAction: Record<string, number> = {
  'instance-started': StatusCode.Running,
  'instance-restarted': StatusCode.Running,
  'instance-resumed': StatusCode.Running,
  'instance-ready': StatusCode.Ready,
  'instance-shutdown': StatusCode.Stopped,
  'instance-stopped': StatusCode.Stopped,
  'instance-paused': StatusCode.Frozen,
};

/** Stable id of a daemon event: the same frame received twice gets the same id. */
export function frameId(target: string, frame: Frame): string {
  const key =
    frame.type === 'operation'
      ? `${frame.metadata.id}|${frame.metadata.status_code}|${frame.metadata.updated_at}|${frame.timestamp}`
      : `${frame.timestamp}|${JSON.stringify(frame.metadata)}`;
  return createHash('sha256').update(`${target}|${frame.type}|${key}`).digest('hex').slice(0, 32);
}

function lifecycle(frame: LifecycleFrame, target: string, id: string): CanonicalEvent {
  const md = frame.metadata;
  const fromSource = parseSource(md.source);
  const instance = md.name ?? fromSource.instance;
  const project = md.project ?? fromSource.project ?? frame.project ?? 'default';
  const common = { id, target, location: frame.location ?? 'none', project, timestamp: frame.timestamp, synthetic: false };
  const requestor = md.requestor ?? undefined;
  const to = statusByAction[md.action];
  const isSnapshot = md.source.includes('/snapshots/');
  if (to !== undefined && instance && !isSnapshot) {
    const intent: Intent = lifecycleIntent(md.action, requestor);
    return { kind: 'instance.status', ...common, instance, to, intent, action: md.action, ...(requestor ? { requestor } : {}) };
  }
  return {
    kind: 'lifecycle',
    ...common,
    action: md.action,
    source: md.source,
    ...(instance ? { instance } : {}),
    ...(md.context ? { context: md.context } : {}),
    ...(requestor ? { requestor } : {}),
  };
}

function operation(frame: OperationFrame, target: string, id: string): CanonicalEvent {
  const op = frame.metadata;
  return operationEvent(op, {
    id,
    target,
    location: frame.location ?? op.location ?? 'none',
    project: frame.project ?? 'default',
    timestamp: frame.timestamp,
    synthetic: false,
  });
}

/** An operation as its `operation.status` event: the instances it names, from either revision's resource key. */
export function operationEvent(
  op: OperationFrame['metadata'],
  common: { id: string; target: string; location: string; project: string; timestamp: string; synthetic: boolean },
): OperationStatusEvent {
  const paths = [...(op.resources?.instances ?? []), ...(op.resources?.containers ?? [])];
  const instances = [...new Set(paths.map((p) => parseSource(p).instance).filter((n): n is string => Boolean(n)))];
  return {
    kind: 'operation.status',
    ...common,
    operationId: op.id,
    to: op.status_code,
    class: op.class,
    description: op.description,
    err: op.err,
    instances,
  };
}

/** Turns a validated frame into a canonical event; logging frames yield nothing. */
export function normalizeFrame(frame: Frame, target: string): CanonicalEvent | undefined {
  const id = frameId(target, frame);
  if (frame.type === 'lifecycle') return lifecycle(frame, target, id);
  if (frame.type === 'operation') return operation(frame, target, id);
  return undefined;
}
