import type { ApiRevision } from '../../client/status-code.js';
import { compileFilter } from '../../filter/evaluator.js';
import { FilterSyntaxError } from '../../filter/filter-syntax-error.js';
import { parseFilter } from '../../filter/parser.js';
import { SimHttpError } from '../envelope.js';
import type { InstanceType, SimInstance } from '../instance-model.js';
import { operationResources } from '../operation-resources.js';
import type { CallRecord } from '../context.js';
import type { SimRequest } from '../router.js';

/** The collection an instance route was reached through. */
export interface InstanceFamily {
  /** Path segment: instances, or in the earlier revision containers / virtual-machines. */
  prefix: 'instances' | 'containers' | 'virtual-machines';
  /** The type the alias is restricted to. */
  type: InstanceType | undefined;
}

/** The families served by a revision (Incus-like later revision has no aliases). */
export function familiesFor(revision: ApiRevision): InstanceFamily[] {
  const all: InstanceFamily[] = [{ prefix: 'instances', type: undefined }];
  if (revision === 'earlier') all.push({ prefix: 'containers', type: 'container' }, { prefix: 'virtual-machines', type: 'virtual-machine' });
  return all;
}

/** `recursion` as 0, 1 or 2 (anything else counts as 0, like LXD's Atoi fallback). */
export function recursionOf(req: SimRequest): 0 | 1 | 2 {
  const n = Number(req.info.query.get('recursion') ?? '0');
  return n === 1 ? 1 : n >= 2 ? 2 : 0;
}

/**
 * The `filter` parameter as a predicate with LXD 5.0.2's semantics (anchored case-insensitive
 * regex, non-string fields never match, unknown operators act as eq, quoted values need a space).
 * A malformed filter is "Invalid filter: …": a 500 on LXD 5.0.2, a 400 on Incus 6.0, as observed.
 */
export function filterOf(req: SimRequest): ((obj: unknown) => boolean) | undefined {
  const text = req.info.query.get('filter');
  if (text === null || text.trim() === '') return undefined;
  try {
    return compileFilter(parseFilter(text, { unknownOperators: 'as-eq', rejectQuotedWithoutSpace: true }), { semantics: 'lxd' });
  } catch (err) {
    if (err instanceof FilterSyntaxError) throw new SimHttpError(req.ctx.opts.revision === 'later' ? 400 : 500, `Invalid filter: ${err.message}`);
    throw err;
  }
}

/** The instance named in the path, restricted to the family's type; 404 "Instance not found" otherwise. */
export function instanceOf(req: SimRequest, family: InstanceFamily): SimInstance {
  const inst = req.ctx.store.get(req.info.project, req.params.name!);
  if (family.type && inst.type !== family.type) throw new SimHttpError(404, 'Instance not found');
  // The request would be forwarded to the member holding the instance, which does not answer.
  if (inst.memberOffline) throw new SimHttpError(500, `Cluster member "${inst.location}" is offline`);
  return inst;
}

/** {@link operationResources} in the revision the request is served in. */
export function instanceResources(
  req: SimRequest,
  inst: Pick<SimInstance, 'name' | 'type' | 'project'>,
  suffix = '',
  kind: 'exec' | 'other' = 'other',
): Record<string, string[]> {
  return operationResources(req.ctx.opts.revision, inst, suffix, kind);
}

/** The JSON body as an object, or 400. */
export function bodyObject(req: SimRequest): Record<string, unknown> {
  const b = req.body;
  if (b === undefined || b === null || typeof b !== 'object' || Array.isArray(b)) throw new SimHttpError(400, 'Request body must be a JSON object');
  return b as Record<string, unknown>;
}

/** A string→string map from the body, or 400. */
export function stringMap(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new SimHttpError(400, `Invalid ${field}: must be an object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new SimHttpError(400, `Invalid ${field}: value of "${k}" must be a string`);
    out[k] = v;
  }
  return out;
}

/** A device map from the body, or 400. */
export function deviceMap(value: unknown): Record<string, Record<string, string>> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new SimHttpError(400, 'Invalid devices: must be an object');
  const out: Record<string, Record<string, string>> = {};
  for (const [k, v] of Object.entries(value)) out[k] = stringMap(v, `device "${k}"`) ?? {};
  return out;
}

/** Checks If-Match against the current ETag; 412 "ETag doesn't match" like LXD. Absent If-Match is not checked. */
export function checkIfMatch(req: SimRequest, current: string): void {
  const sent = req.headers['if-match'];
  if (sent === undefined) return;
  const client = String(sent).replace(/^"|"$/g, '');
  const server = current.replace(/^"|"$/g, '');
  if (client !== server) throw new SimHttpError(412, `ETag doesn't match: ${server} vs ${client}`);
}

/** Records a mutating call for the control API's counters and call history. */
export function countCall(req: SimRequest, inst: Pick<SimInstance, 'project' | 'name' | 'config' | 'statusCode'>, action: string): CallRecord {
  const agent = req.headers['user-agent'];
  return req.ctx.calls.count(`${inst.project}/${inst.name}`, action, {
    at: Date.now(),
    project: inst.project,
    name: inst.name,
    uuid: inst.config['volatile.uuid'] ?? '',
    statusBefore: inst.statusCode,
    agent: typeof agent === 'string' ? agent : '',
  })!;
}
