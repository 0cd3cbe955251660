import { z } from 'zod';
import { ReflexError } from '../errors/reflex-error.js';
import { alertValue, type Alert } from './alert.js';

/**
 * A node of the routing tree, as in Alertmanager: an alert enters at the root, descends into the
 * first child whose matchers all hold (and on into further children whenever a matching child has
 * `continue: true`), and is sent by the deepest matching routes. Unset fields inherit from the parent.
 */
export interface RouteConfig {
  /** Receiver name. Required on the root. */
  receiver?: string;
  /** Field or label → value (or any of several values) the alert must have; e.g. `{ severity: ['warning', 'critical'] }`. */
  match?: Record<string, string | string[]>;
  /** Field or label → regular expression (anchored) its value must match; e.g. `{ instance: 'web-.*' }`. */
  matchRe?: Record<string, string>;
  /** Any other test, in TypeScript configuration. */
  filter?: (alert: Alert) => boolean;
  /** Keys whose values split alerts into groups (one message per group). Root default `['kind', 'project']`. */
  groupBy?: string[];
  /** How long a new group waits for more alerts before its first message. Root default 30 s. */
  groupWaitMs?: number;
  /** How long after a group's message its changes (new or resolved alerts) are sent. Root default 5 min. */
  groupIntervalMs?: number;
  /** How long before an unchanged, still-firing group is sent again. Root default 4 h. */
  repeatIntervalMs?: number;
  /** Keep looking at the following siblings after this route matched. Default false. */
  continue?: boolean;
  routes?: RouteConfig[];
}

/** A route an alert matched, with inherited settings filled in. `id` is its path in the tree ("0.2"). */
export interface MatchedRoute {
  id: string;
  receiver: string;
  groupBy: string[];
  groupWaitMs: number;
  groupIntervalMs: number;
  repeatIntervalMs: number;
}

const ms = z.number().int().min(0);
const routeSchema: z.ZodType<RouteConfig> = z.lazy(() =>
  z.strictObject({
    receiver: z.string().optional(),
    match: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
    matchRe: z.record(z.string(), z.string()).optional(),
    filter: z.custom<(alert: Alert) => boolean>((v) => typeof v === 'function').optional(),
    groupBy: z.array(z.string()).optional(),
    groupWaitMs: ms.optional(),
    groupIntervalMs: z.number().int().positive().optional(),
    repeatIntervalMs: z.number().int().positive().optional(),
    continue: z.boolean().optional(),
    routes: z.array(routeSchema).optional(),
  }),
);

interface CompiledRoute {
  settings: MatchedRoute;
  matches: (a: Alert) => boolean;
  continue: boolean;
  children: CompiledRoute[];
}

const rootDefaults = { groupBy: ['kind', 'project'], groupWaitMs: 30_000, groupIntervalMs: 300_000, repeatIntervalMs: 4 * 3_600_000 };

/** Decides which receivers get an alert and how it is grouped; see {@link RouteConfig}. */
export class Router {
  private readonly root: CompiledRoute;

  /** Validates the tree and that every receiver it names exists; throws CONFIG_INVALID. */
  constructor(
    config: RouteConfig,
    private readonly receivers: ReadonlySet<string>,
  ) {
    const parsed = routeSchema.safeParse(config);
    if (!parsed.success) throw new ReflexError('CONFIG_INVALID', `notification route: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    if (!config.receiver) throw new ReflexError('CONFIG_INVALID', 'notification route: the root route needs a receiver');
    this.root = compile(config, { id: '0', receiver: config.receiver, ...rootDefaults }, receivers);
  }

  /** The root route's settings sent to one named receiver instead (the notify action's `receiver` param). */
  direct(receiver: string): MatchedRoute {
    if (!this.receivers.has(receiver)) throw new ReflexError('CONFIG_INVALID', `unknown notification receiver "${receiver}"; known: ${[...this.receivers].join(', ')}`);
    return { ...this.root.settings, id: `direct:${receiver}`, receiver };
  }

  /** The routes an alert goes to; at least the root. */
  match(alert: Alert): MatchedRoute[] {
    return descend(this.root, alert) ?? [this.root.settings];
  }
}

function compile(cfg: RouteConfig, parent: MatchedRoute, receivers: ReadonlySet<string>): CompiledRoute {
  const settings: MatchedRoute = {
    id: parent.id,
    receiver: cfg.receiver ?? parent.receiver,
    groupBy: cfg.groupBy ?? parent.groupBy,
    groupWaitMs: cfg.groupWaitMs ?? parent.groupWaitMs,
    groupIntervalMs: cfg.groupIntervalMs ?? parent.groupIntervalMs,
    repeatIntervalMs: cfg.repeatIntervalMs ?? parent.repeatIntervalMs,
  };
  if (!receivers.has(settings.receiver)) throw new ReflexError('CONFIG_INVALID', `notification route ${settings.id}: unknown receiver "${settings.receiver}"`);
  const res = Object.entries(cfg.matchRe ?? {}).map(([k, re]) => {
    try {
      return [k, new RegExp(`^(?:${re})$`)] as const;
    } catch (err) {
      throw new ReflexError('CONFIG_INVALID', `notification route ${settings.id}: matchRe.${k} is not a regular expression: ${(err as Error).message}`);
    }
  });
  const matches = (a: Alert): boolean =>
    Object.entries(cfg.match ?? {}).every(([k, want]) => {
      const v = alertValue(a, k);
      return v !== undefined && (Array.isArray(want) ? want.includes(v) : want === v);
    }) &&
    res.every(([k, re]) => re.test(alertValue(a, k) ?? '')) &&
    (cfg.filter?.(a) ?? true);
  const children = (cfg.routes ?? []).map((c, i) => compile(c, { ...settings, id: `${settings.id}.${i}` }, receivers));
  return { settings, matches, continue: cfg.continue ?? false, children };
}

/** The deepest matching routes under `node`, or undefined when `node` itself does not match. */
function descend(node: CompiledRoute, alert: Alert): MatchedRoute[] | undefined {
  if (!node.matches(alert)) return undefined;
  const out: MatchedRoute[] = [];
  for (const child of node.children) {
    const found = descend(child, alert);
    if (!found) continue;
    out.push(...found);
    if (!child.continue) break;
  }
  return out.length ? out : [node.settings];
}
