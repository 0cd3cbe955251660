import { z } from 'zod';
import { routeFields, type RouteSettings } from '../config/notification-settings.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { Alert } from '../alerts/alert.js';
import { alertMatcher } from '../alerts/alert-matcher.js';

/**
 * A node of the routing tree (see {@link RouteSettings}), with what only TypeScript can give: a
 * `filter` function.
 */
export interface RouteConfig extends Omit<RouteSettings, 'routes'> {
  /** Any other test, in TypeScript configuration. */
  filter?: (alert: Alert) => boolean;
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

const routeSchema: z.ZodType<RouteConfig> = z.lazy(() =>
  z.strictObject({
    ...routeFields,
    filter: z.custom<(alert: Alert) => boolean>((v) => typeof v === 'function').optional(),
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
    if (!parsed.success)
      throw new ReflexError(
        'CONFIG_INVALID',
        `notification route: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    if (!config.receiver) throw new ReflexError('CONFIG_INVALID', 'notification route: the root route needs a receiver');
    this.root = compile(config, { id: '0', receiver: config.receiver, ...rootDefaults }, receivers);
  }

  /** The root route's settings sent to one named receiver instead (the notify action's `receiver` param). */
  direct(receiver: string): MatchedRoute {
    if (!this.receivers.has(receiver))
      throw new ReflexError('CONFIG_INVALID', `unknown notification receiver "${receiver}"; known: ${[...this.receivers].join(', ')}`);
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
  if (!receivers.has(settings.receiver))
    throw new ReflexError('CONFIG_INVALID', `notification route ${settings.id}: unknown receiver "${settings.receiver}"`);
  const matchers = alertMatcher(cfg.match, cfg.matchRe, `notification route ${settings.id}`);
  const matches = (a: Alert): boolean => matchers(a) && (cfg.filter?.(a) ?? true);
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
