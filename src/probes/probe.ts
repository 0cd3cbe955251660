import { createHash } from 'node:crypto';
import { z } from 'zod';
import { readDuration } from '../config/duration.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { FilterExpr } from '../filter/ast.js';
import { parseFilter } from '../filter/parser.js';

/**
 * A health probe, after Kubernetes' liveness probe: a check run every `periodMs` on each instance
 * in scope, concluding `unhealthy` after `failureThreshold` failures in a row and `healthy` again
 * after `successThreshold` successes in a row. Only the transitions are events (`instance.health`),
 * for rules to act on. Declared in the rules folder (a file may default-export probes beside rules
 * and schedules); see rules/examples/probes.ts and docs/probes.md.
 */
export interface ProbeDefinition {
  /** Unique name: lowercase letters, digits and dashes. Rules match it (`on: { kind: 'instance.health', probe: [...] }`). */
  name: string;
  description?: string;
  /** Which instances are probed. Every field given must match; omitted, every instance of every project. */
  scope?: {
    /** The filter language with LXD semantics, evaluated on the instance: `config.user.role eq web`. */
    filter?: string;
    projects?: string[];
    /** Targets as configured. */
    targets?: string[];
  };
  /** `exec`: a command inside the instance through the daemon (exit 0 = healthy); `http`: a GET (200–399 = healthy); `tcp`: a connect. */
  kind: 'exec' | 'http' | 'tcp';
  /** exec: program and arguments, or one string run by `sh -c`. */
  command?: string[] | string;
  /** http: a path (`/healthz`, on the instance's address) or a full URL. */
  url?: string;
  /** http and tcp: the port on the instance's address. http default 80. */
  port?: number;
  /** http and tcp: the address to reach instead of the instance's own (from its state). */
  host?: string;
  /** How often the check runs. Default 10 000 ms (Kubernetes' 10 s); at least 100 ms. */
  periodMs?: number;
  /** How long one check may take before it counts as failed (the command killed). Default 1000 ms. */
  timeoutMs?: number;
  /** Failures in a row that make the instance unhealthy. Default 3. */
  failureThreshold?: number;
  /** Successes in a row that make an unhealthy instance healthy again. Default 1. */
  successThreshold?: number;
  /** How long after the instance (re)started the first check waits: the startup grace. Default 0. */
  initialDelayMs?: number;
  /**
   * The command that restarts the probed service, for the rules of the same file to run
   * (`{ action: 'exec', params: { command: probe.restartCommand } }`; a string runs through `sh -c`). Default none.
   */
  restartCommand?: string[] | string;
  /** Default true. */
  enabled?: boolean;
}

/** A validated probe, as the runner uses it. */
export interface Probe {
  kind: 'probe';
  name: string;
  description?: string;
  check: 'exec' | 'http' | 'tcp';
  command?: string[];
  url?: string;
  port?: number;
  host?: string;
  periodMs: number;
  timeoutMs: number;
  failureThreshold: number;
  successThreshold: number;
  initialDelayMs: number;
  restartCommand?: string[];
  enabled: boolean;
  projects?: string[];
  targets?: string[];
  scopeFilter?: FilterExpr;
  /** The scope's filter as written (`scope.filter`), for `reflex probes list`. */
  filter?: string;
  /** Where it came from: a file's `defineProbe`, or an instance's `user.reflex.probe.*` keys. */
  origin: 'file' | 'config';
  /** Hash of the definition, so a changed probe starts afresh. */
  fingerprint: string;
}

const positive = z.number().int().min(1);
const probeSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'use lowercase letters, digits and dashes'),
  description: z.string().optional(),
  scope: z
    .strictObject({
      filter: z.string().optional(),
      projects: z.array(z.string().min(1)).min(1).optional(),
      targets: z.array(z.string().min(1)).min(1).optional(),
    })
    .optional(),
  kind: z.enum(['exec', 'http', 'tcp']),
  command: z.union([z.string().min(1), z.array(z.string()).min(1)]).optional(),
  url: z.string().min(1).optional(),
  port: z.number().int().min(1).max(65_535).optional(),
  host: z.string().min(1).optional(),
  periodMs: z.number().int().min(100).optional(),
  timeoutMs: positive.optional(),
  failureThreshold: positive.max(1000).optional(),
  successThreshold: positive.max(1000).optional(),
  initialDelayMs: z.number().int().min(0).optional(),
  restartCommand: z.union([z.string().min(1), z.array(z.string()).min(1)]).optional(),
  enabled: z.boolean().optional(),
});

/** A command as written: one string runs through `sh -c`. */
const argv = (c: string[] | string | undefined): string[] | undefined => (typeof c === 'string' ? ['sh', '-c', c] : c);

function invalid(name: unknown, message: string): never {
  throw new ReflexError('RULE_INVALID', `invalid probe${typeof name === 'string' ? ` "${name}"` : ''}: ${message}`);
}

/** Fields every kind needs, and that the others may not have. */
function kindProblem(def: Pick<ProbeDefinition, 'kind' | 'command' | 'url' | 'port'>): string | undefined {
  if (def.kind === 'exec' && !def.command) return 'command: an exec probe needs a command';
  if (def.kind !== 'exec' && def.command) return `command: only exec probes run a command (this one is ${def.kind})`;
  if (def.kind === 'tcp' && def.port === undefined) return 'port: a tcp probe needs a port';
  if (def.kind !== 'http' && def.url) return `url: only http probes have a url (this one is ${def.kind})`;
  if (def.kind === 'exec' && def.port !== undefined) return 'port: an exec probe runs inside the instance and has no port';
  return undefined;
}

/** Validates a probe definition; throws RULE_INVALID naming each field at fault. */
export function defineProbe(def: ProbeDefinition): Probe {
  const parsed = probeSchema.safeParse(def);
  if (!parsed.success)
    invalid(def?.name, parsed.error.issues.map((i) => `${i.path.join('.') || '(probe)'}: ${i.message.replace(/^Invalid input: /, '')}`).join('; '));
  const problem = kindProblem(def);
  if (problem) invalid(def.name, problem);
  let scopeFilter: FilterExpr | undefined;
  if (def.scope?.filter) {
    try {
      scopeFilter = parseFilter(def.scope.filter);
    } catch (err) {
      invalid(def.name, `scope.filter: ${(err as Error).message}`);
    }
  }
  const periodMs = def.periodMs ?? 10_000;
  const timeoutMs = def.timeoutMs ?? 1_000;
  return {
    kind: 'probe',
    name: def.name,
    description: def.description,
    check: def.kind,
    command: argv(def.command),
    url: def.url,
    port: def.port,
    host: def.host,
    periodMs,
    timeoutMs,
    failureThreshold: def.failureThreshold ?? 3,
    successThreshold: def.successThreshold ?? 1,
    initialDelayMs: def.initialDelayMs ?? 0,
    restartCommand: argv(def.restartCommand),
    enabled: def.enabled ?? true,
    projects: def.scope?.projects,
    targets: def.scope?.targets,
    scopeFilter,
    ...(def.scope?.filter ? { filter: def.scope.filter } : {}),
    origin: 'file',
    fingerprint: createHash('sha256').update(JSON.stringify(def)).digest('hex').slice(0, 16),
  };
}

/** Whether a value is a probe made by {@link defineProbe} (by shape: a rule file's copy of Reflex may be another module instance). */
export function isProbe(value: unknown): value is Probe {
  return Boolean(value) && typeof value === 'object' && (value as Probe).kind === 'probe' && typeof (value as Probe).name === 'string';
}

/** The instance config keys of probes, under `user.reflex.probe`. */
export const probeConfigPrefix = 'user.reflex.probe';

/**
 * The bounds of an instance's own durations (`user.reflex.probe.period`, `.timeout`,
 * `.initial-delay`), in ms: a key outside them is a problem and left out. A period is at least
 * 250 ms (four checks a second of that one instance) and at most an hour.
 */
export const instanceBounds = {
  periodMs: [250, 3_600_000],
  timeoutMs: [100, 60_000],
  initialDelayMs: [0, 3_600_000],
} as const;

/** `250 ms`, `60 s`, `1 h`: a bound as the problems name it. */
function showMs(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 1_000 && ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

/**
 * The probes of one instance: those of the rules folder whose scope it is in, adjusted by its own
 * `user.reflex.probe.*` keys, plus the probe its keys define alone (named `config`). Keys:
 * `user.reflex.probe=off` (no probe at all), `.exec` (a command run by `sh -c`), `.http` (a path or
 * URL), `.tcp` (a port), `.period`, `.timeout`, `.initial-delay` (durations), `.failure-threshold`,
 * `.success-threshold`. A key whose value cannot
 * be read is reported in `problems` and left out, never guessed.
 */
export function probesOfConfig(config: Record<string, string>, probes: Probe[]): { probes: Probe[]; problems: string[] } {
  const key = (k: string) => config[`${probeConfigPrefix}.${k}`];
  if (['off', 'false', 'no', '0'].includes((config[probeConfigPrefix] ?? '').toLowerCase())) return { probes: [], problems: [] };
  const problems: string[] = [];
  const duration = (k: string, [min, max]: readonly [number, number]): number | undefined => {
    const text = key(k);
    if (text === undefined) return undefined;
    const ms = readDuration(text);
    if (ms !== undefined && ms >= min && ms <= max) return ms;
    problems.push(`${probeConfigPrefix}.${k}: "${text}" is not a duration from ${showMs(min)} to ${showMs(max)}`);
    return undefined;
  };
  const count = (k: string): number | undefined => {
    const text = key(k);
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1 || n > 1000) problems.push(`${probeConfigPrefix}.${k}: "${text}" is not a whole number from 1 to 1000`);
    return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : undefined;
  };
  const overrides = {
    periodMs: duration('period', instanceBounds.periodMs),
    timeoutMs: duration('timeout', instanceBounds.timeoutMs),
    initialDelayMs: duration('initial-delay', instanceBounds.initialDelayMs),
    failureThreshold: count('failure-threshold'),
    successThreshold: count('success-threshold'),
  };
  const set = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) as Partial<Probe>;
  const out = probes.map((p) => (Object.keys(set).length ? { ...p, ...set } : p));
  const own = configProbe(key('exec'), key('http'), key('tcp'), problems);
  if (own) out.push({ ...own, ...set });
  return { probes: out, problems };
}

function configProbe(exec: string | undefined, http: string | undefined, tcp: string | undefined, problems: string[]): Probe | undefined {
  const given = [exec && 'exec', http && 'http', tcp && 'tcp'].filter(Boolean);
  if (given.length === 0) return undefined;
  if (given.length > 1) {
    problems.push(`${probeConfigPrefix}: give one of .exec, .http and .tcp (got ${given.join(', ')})`);
    return undefined;
  }
  const base = {
    kind: 'probe' as const,
    name: 'config',
    periodMs: 10_000,
    timeoutMs: 1_000,
    failureThreshold: 3,
    successThreshold: 1,
    initialDelayMs: 0,
    enabled: true,
    origin: 'config' as const,
  };
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([exec, http, tcp]))
    .digest('hex')
    .slice(0, 16);
  if (exec) return { ...base, check: 'exec', command: ['sh', '-c', exec], fingerprint };
  if (http) return { ...base, check: 'http', url: http, fingerprint };
  const port = Number(tcp);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    problems.push(`${probeConfigPrefix}.tcp: "${tcp}" is not a port`);
    return undefined;
  }
  return { ...base, check: 'tcp', port, fingerprint };
}
