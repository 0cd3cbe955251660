import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { Notifier } from '../notify/notifier.js';
import { chooseNotifyConfig, type NotifyConfig } from '../notify/notify-config.js';
import type { RunningScheduler } from '../schedules/scheduler.js';
import { RuleEngine, type RuleErrorSink } from './engine.js';
import { fromSources } from './package-entry.js';
import type { RuleErrors } from './rule-errors.js';
import type { RuleLoadError } from './rule-files.js';
import { loadRulesFolder, type RulesFolder } from './rules-folder.js';

/**
 * One load of a rules folder, used as one value: what the folder defines (rules, actions,
 * schedules, probes, receivers: {@link loadRulesFolder}), the rule engine over those rules and
 * the notification settings that apply. A reload replaces it whole.
 */
export interface RuleSetValue {
  loaded: RulesFolder;
  engine: RuleEngine;
  /** The receivers and routes in force (config file, REFLEX_NOTIFY or the folder); none: no notifications. */
  notify?: { settings: NotifyConfig; from: string };
  /** Every problem found: type errors (when type-checked) and files that failed to load. Any refuses the start and a reload. */
  errors: RuleLoadError[];
  /** 1 for the set loaded at start, +1 per reload taken. */
  generation: number;
}

/** Where a rule set is loaded from. */
export interface RuleSetSource {
  dir: string;
  /** The config file's `notifications` section (not re-read by a reload: the config file is read at start). */
  notifications?: NotifyConfig;
  /** How long a rule's `when` may take (the engine's option). */
  conditionTimeoutMs?: number;
  /**
   * Type-check the rule files (strict TypeScript, as `reflex rules check`) before loading them: a
   * type error is a load error with file:line:column. Default false here; `reflex run` sets it
   * from `typecheckRules` (default true).
   */
  typecheck?: boolean;
  /** Told of each rule callback (`when`) that throws or times out, and of each that answers (the engine's option). */
  ruleErrors?: RuleErrorSink;
  env?: NodeJS.ProcessEnv;
}

/**
 * Loads a rules folder into a {@link RuleSetValue}: the type-checker's problems (when asked) and
 * the folder's one load, their errors merged, a file reported once. A folder that does not
 * exist, or receivers defined in two places, throws (RULES_MISSING, CONFIG_INVALID).
 */
export async function loadRuleSet(source: RuleSetSource, generation = 1): Promise<RuleSetValue> {
  // Loaded only when asked for: the compiler is large, and a process that does not check never needs it.
  const checker = source.typecheck ? await import('./rule-checker.js') : undefined;
  // Compiled (an installation, dist/), in a child process: the compiler's memory leaves with it.
  // From the sources (the checkout's in-process tests), here: a child would load the compiler and
  // compile the checker through tsx at every start, where this process parses the declarations
  // once a minute for every Reflex a test file starts (the child is tested on its own, and by every
  // test that starts `reflex run`).
  const typed = (await (fromSources ? checker?.typeCheckRules(source.dir) : checker?.typeCheckRulesApart(source.dir))) ?? [];
  const loaded = await loadRulesFolder(source.dir);
  const errors = checker ? checker.withLoadErrors(typed, loaded.errors) : loaded.errors;
  const notify = chooseNotifyConfig({ config: source.notifications, rulesFolder: loaded.notifications, env: source.env });
  return {
    loaded,
    engine: new RuleEngine(loaded.rules, { conditionTimeoutMs: source.conditionTimeoutMs, errors: source.ruleErrors }),
    notify,
    errors,
    generation,
  };
}

/** A load error as one line: `file:line:column: message`. */
export function errorText(e: RuleLoadError): string {
  return `${[e.file, e.line, e.column].filter((x) => x !== undefined).join(':')}: ${e.message}`;
}

/**
 * A part that holds something derived from the rule set (the scheduler's schedules, the
 * notifier's receivers). `prepare` checks that the new set can be taken and builds what it needs
 * without changing anything, throwing (a ReflexError saying why) to refuse the reload; it returns
 * the step that puts it in place. That step's synchronous part runs in the same turn as the swap
 * of the rule set; what it awaits afterwards (Redis reconciling) follows.
 */
export interface RuleSetPart {
  name: string;
  prepare(next: RuleSetValue, current: RuleSetValue): { changes?: Record<string, unknown>; apply(): void | Promise<void> };
}

/** Who asked for a reload, as audited: `signal` (SIGHUP to this process) or `cli` (reflex rules reload). */
export interface ReloadRequest {
  by: 'signal' | 'cli';
  /** The request id of a CLI reload (every replica's record carries it). */
  requestId?: string;
}

/** What a reload did: taken (with counts and what changed) or refused (why, every error). */
export type ReloadOutcome =
  | { result: 'reloaded'; summary: string; rules: number; schedules: number; probes: number; receivers: number; changes: Record<string, unknown> }
  | { result: 'refused'; summary: string; errors: string[] };

/** Options of {@link RuleSet}. */
export interface RuleSetOptions extends RuleSetSource {
  audit: AuditLog;
  logger: Logger;
  /** This replica's name in audit records (`replica`). */
  replica: string;
}

const names = <T extends { name: string }>(list: readonly T[]) => list.map((x) => x.name);

/** What is in `after` and not in `before`, and the other way round. */
function delta(before: string[], after: string[]): { added: string[]; removed: string[] } {
  return { added: after.filter((n) => !before.includes(n)), removed: before.filter((n) => !after.includes(n)) };
}

/**
 * The rule set a process runs, reloadable without a restart. Readers take {@link current} at the
 * moment they use it and keep that value for the whole of one piece of work (an event, a
 * re-check), so a reload never shows them half the old set and half the new. {@link reload}
 * loads the folder fully into a new value and swaps it in with one assignment, or refuses and
 * keeps the running set: when any file fails its type-check (when asked) or fails to load, as
 * the start refuses such a folder (see {@link errorText} for the lines), when the new set would hold no rule and no schedule
 * while the running one holds some (an emptied folder is more likely a mistake, a checkout half
 * done, than a wish to stop; stop the process for that), or when a part refuses it (receivers
 * whose secret cannot be read). Reloads run one at a time. Each is logged and audited.
 */
export class RuleSet {
  private value: RuleSetValue;
  private readonly parts: RuleSetPart[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    initial: RuleSetValue,
    private readonly opts: RuleSetOptions,
  ) {
    this.value = initial;
  }

  /** The rule set in force now. */
  get current(): RuleSetValue {
    return this.value;
  }

  /** The rule engine in force now: read at the moment of use, a reload takes effect on the next. */
  readonly engine = (): RuleEngine => this.value.engine;

  /** The actions in force now: the built-ins and the folder's defineAction actions, swapped with the rules. */
  readonly actions = (): RulesFolder['actions'] => this.value.loaded.actions;

  /** Adds a part to prepare and apply at each reload. */
  attach(part: RuleSetPart): void {
    this.parts.push(part);
  }

  /** Loads the folder again and swaps the new set in, or refuses it and keeps the running one; never throws. */
  reload(request: ReloadRequest): Promise<ReloadOutcome> {
    const run = this.queue.then(() => this.reloadNow(request));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async reloadNow(request: ReloadRequest): Promise<ReloadOutcome> {
    const { logger, dir } = this.opts;
    const before = this.value;
    let next: RuleSetValue;
    try {
      next = await loadRuleSet(this.opts, before.generation + 1);
    } catch (err) {
      return this.refuse(request, `${(err as Error).message}`, [(err as Error).message]);
    }
    if (next.errors.length) {
      const errors = next.errors.map(errorText);
      return this.refuse(request, `${errors.length} problem(s) in ${resolve(dir)}: ${errors.join('; ')}`, errors);
    }
    if (
      next.loaded.rules.length === 0 &&
      next.loaded.schedules.length === 0 &&
      (before.loaded.rules.length > 0 || before.loaded.schedules.length > 0)
    ) {
      return this.refuse(
        request,
        `${resolve(dir)} holds no rule and no schedule now; an empty rule set is not taken by a reload (stop the process to stop its automation)`,
        [],
      );
    }
    const prepared: { name: string; changes?: Record<string, unknown>; apply(): void | Promise<void> }[] = [];
    try {
      for (const part of this.parts) prepared.push({ name: part.name, ...part.prepare(next, before) });
    } catch (err) {
      return this.refuse(request, (err as Error).message, [(err as Error).message]);
    }
    // The swap and every part's switch-over run in this one turn: nothing reads half of it.
    this.value = next;
    const applied = prepared.map((p) =>
      Promise.resolve()
        .then(() => p.apply())
        .then(
          () => undefined,
          (err: unknown) => `${p.name}: ${(err as Error).message}`,
        ),
    );
    const late = (await Promise.all(applied)).filter((x): x is string => x !== undefined);

    const changes: Record<string, unknown> = {
      rules: delta(names(before.loaded.rules), names(next.loaded.rules)),
      probes: delta(names(before.loaded.probes), names(next.loaded.probes)),
    };
    for (const p of prepared) if (p.changes) Object.assign(changes, p.changes);
    const receivers = next.notify?.settings.receivers.length ?? 0;
    const counts = `${next.loaded.rules.length} rule(s), ${next.loaded.schedules.length} schedule(s), ${next.loaded.probes.length} probe(s), ${receivers} receiver(s)`;
    const changed = Object.entries(changes)
      .map(([what, d]) => [what, d as { added?: string[]; removed?: string[]; changed?: string[] }] as const)
      .flatMap(([what, d]) => [
        ...(d.added ?? []).map((n) => `+${what.replace(/s$/, '')} ${n}`),
        ...(d.removed ?? []).map((n) => `-${what.replace(/s$/, '')} ${n}`),
        ...(d.changed ?? []).map((n) => `~${what.replace(/s$/, '')} ${n}`),
      ]);
    const summary = `rules reloaded (${request.by}): ${counts}${changed.length ? `; ${changed.join(', ')}` : '; no rule, schedule, probe or receiver added or removed'}${late.length ? `; but ${late.join('; ')}` : ''}`;
    logger[late.length ? 'error' : 'info']({ by: request.by, generation: next.generation, changes }, summary);
    await this.audited({ request, summary, result: 'reloaded', before, next, changes, problems: late });
    return {
      result: 'reloaded',
      summary,
      rules: next.loaded.rules.length,
      schedules: next.loaded.schedules.length,
      probes: next.loaded.probes.length,
      receivers,
      changes,
    };
  }

  private async refuse(request: ReloadRequest, why: string, errors: string[]): Promise<ReloadOutcome> {
    const summary = `rules reload refused (${request.by}); the previous rule set keeps running: ${why}`;
    this.opts.logger.error({ by: request.by, errors }, summary);
    await this.audited({ request, summary, result: 'refused', before: this.value, problems: errors });
    return { result: 'refused', summary, errors };
  }

  private async audited(r: {
    request: ReloadRequest;
    summary: string;
    result: 'reloaded' | 'refused';
    before: RuleSetValue;
    next?: RuleSetValue;
    changes?: Record<string, unknown>;
    problems: string[];
  }): Promise<void> {
    const counts = (v: RuleSetValue) => ({
      rules: v.loaded.rules.length,
      schedules: v.loaded.schedules.length,
      receivers: v.notify?.settings.receivers.length ?? 0,
    });
    await this.opts.audit
      .append({
        type: 'reload',
        correlationId: `reload:${r.request.requestId ?? `${this.opts.replica}:${Date.now()}`}`,
        summary: r.summary,
        result: r.result,
        by: r.request.by,
        replica: this.opts.replica,
        folder: resolve(this.opts.dir),
        before: counts(r.before),
        ...(r.next ? { after: counts(r.next) } : {}),
        ...(r.changes ? { changes: r.changes } : {}),
        ...(r.problems.length ? { errors: r.problems } : {}),
      })
      .catch((err: unknown) => this.opts.logger.error({ err }, 'reload not audited'));
  }
}

/**
 * The scheduler as a part of the rule set: a reload hands it the new schedules (ticks use them at
 * once; the job schedulers in Redis are reconciled after the swap). Changes are by name and fingerprint.
 */
export function schedulerPart(scheduler: Pick<RunningScheduler, 'reload'>): RuleSetPart {
  return {
    name: 'schedules',
    prepare(next, current) {
      const was = new Map(current.loaded.schedules.filter((s) => s.enabled).map((s) => [s.name, s.fingerprint]));
      const now = next.loaded.schedules.filter((s) => s.enabled);
      const changed = now.filter((s) => was.has(s.name) && was.get(s.name) !== s.fingerprint).map((s) => s.name);
      return { changes: { schedules: { ...delta([...was.keys()], names(now)), changed } }, apply: () => scheduler.reload(next.loaded.schedules) };
    },
  };
}

/**
 * The count of failing rule callbacks as a part of the rule set: new rules start with a clean
 * count, and the alert of a rule that kept failing resolves (the rule may be fixed now).
 */
export function ruleErrorsPart(ruleErrors: Pick<RuleErrors, 'reset'>): RuleSetPart {
  return { name: 'rule errors', prepare: () => ({ apply: () => ruleErrors.reset() }) };
}

/**
 * The notifier as a part of the rule set: a reload rebuilds the receivers and routes (re-reading
 * their secrets, so a rotated token is taken) and puts them in place with the swap. A process
 * started without receivers has no notifier to give new ones, and one started with them keeps
 * notifying: a reload that adds the first receivers or removes the last is refused (restart for that).
 */
export function notifierPart(notifier: Pick<Notifier, 'prepareReconfigure'> | undefined): RuleSetPart {
  return {
    name: 'receivers',
    prepare(next, current) {
      if (!notifier) {
        if (next.notify)
          throw new ReflexError(
            'CONFIG_INVALID',
            `notification receivers are defined now (${next.notify.from}) but this process started without any: restart it to start notifying`,
          );
        return { apply: () => undefined };
      }
      if (!next.notify)
        throw new ReflexError(
          'CONFIG_INVALID',
          'no notification receiver is defined any more but this process started with some: restart it to stop notifying',
        );
      const prepared = notifier.prepareReconfigure(next.notify.settings);
      return { changes: { receivers: delta(names(current.notify?.settings.receivers ?? []), prepared.receivers) }, apply: prepared.commit };
    },
  };
}
