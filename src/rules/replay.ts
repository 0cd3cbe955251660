import type { InstanceClient } from '../client/client.js';
import { isApiStatus } from '../client/api-error.js';
import type { Instance } from '../client/instance.js';
import type { StoredAuditRecord } from '../audit/audit-log.js';
import { canonicalEventSchema, type CanonicalEvent } from '../events/canonical-event.js';
import { RuleEngine } from './engine.js';
import type { Rule } from './rule.js';

/** Per rule: what it would do now, next to what the audit log says was done. */
export interface ReplayRow {
  rule: string;
  /** "instance: action" per incident the rule would act on. */
  wouldDo: string[];
  /** "instance: action" per action the audit log records as queued by this rule. */
  didDo: string[];
}

/**
 * Replays the events recorded in an audit trail through rules, deciding without acting. `client`
 * reads the instances rules look at: one client, or one per target (by the event's target; an
 * event of a target not given is decided without its instance).
 */
export async function replayAudit(
  records: StoredAuditRecord[],
  rules: Rule[],
  client: InstanceClient | ((target: string) => InstanceClient | undefined),
): Promise<{ events: number; rows: ReplayRow[] }> {
  const clientFor = typeof client === 'function' ? client : () => client;
  const engine = new RuleEngine(rules);
  const rows = new Map<string, ReplayRow>(rules.map((r) => [r.name, { rule: r.name, wouldDo: [], didDo: [] }]));
  const instances = new Map<string, Instance | undefined>();
  let events = 0;
  for (const rec of records) {
    if (rec.type === 'action' && rec.rule && rec.summary.startsWith('queued ')) {
      const action = rec.summary.slice('queued '.length).split(' ')[0];
      row(rows, rec.rule).didDo.push(`${rec.instance}: ${action}`);
    }
    if (rec.type !== 'event') continue;
    const parsed = canonicalEventSchema.safeParse((rec as { event?: unknown }).event);
    if (!parsed.success) continue;
    events++;
    const event: CanonicalEvent = parsed.data;
    if (!engine.isRelevant(event)) continue;
    const name = 'instance' in event ? event.instance : undefined;
    const reader = clientFor(event.target);
    const instance = name && reader ? await readOnce(reader, instances, event.target, event.project, name) : undefined;
    for (const d of await engine.decide(event, instance)) {
      if (d.matched) for (const a of d.actions) row(rows, d.rule).wouldDo.push(`${name}: ${a.action}`);
    }
  }
  return { events, rows: [...rows.values()] };
}

function row(rows: Map<string, ReplayRow>, rule: string): ReplayRow {
  let r = rows.get(rule);
  if (!r) rows.set(rule, (r = { rule, wouldDo: [], didDo: [] }));
  return r;
}

/** The instance as it is now (replays cannot know its past config), read once per replay. */
async function readOnce(
  client: InstanceClient,
  cache: Map<string, Instance | undefined>,
  target: string,
  project: string,
  name: string,
): Promise<Instance | undefined> {
  const key = `${target} ${project}/${name}`;
  if (cache.has(key)) return cache.get(key);
  let value: Instance | undefined;
  try {
    value = (await client.withProject(project).getInstance(name)).value;
  } catch (err) {
    if (!isApiStatus(err, 404)) throw err;
  }
  cache.set(key, value);
  return value;
}
