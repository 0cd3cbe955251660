import type { ApiRevision } from '../client/status-code.js';
import type { UtcSuffix } from './time.js';

/** How long simulated work takes, in milliseconds. Defaults are small but nonzero. */
export interface SimTimings {
  /** Start of a stopped instance (LXD ~135 ms). Default 100. */
  startMs: number;
  /** Graceful stop (`lxc stop`, guest shuts down; LXD ~1.5 s with a trapping init). Default 300. */
  stopMs: number;
  /** Forced stop (`lxc stop -f`, LXD ~600 ms). Default 60. */
  forceStopMs: number;
  /** Restart, graceful or forced. Default 300. */
  restartMs: number;
  /** Freeze or unfreeze. Default 5. */
  freezeMs: number;
  /** Create, update, rename, delete, snapshot operations. Default 20. */
  taskMs: number;
  /**
   * From the 202 of a create to its database step, when the instance becomes visible (with
   * `createVisibilityDelay`) and a refused creation fails its operation. Default 10.
   */
  createRecordMs: number;
  /**
   * Delay between an unrequested stop (crash, crash loop, failed start) and the stop hook that
   * emits `instance-shutdown`; during it the instance is busy with "stop" (LXD ~500-600 ms). Default 500.
   */
  stopHookMs: number;
  /** How long a failing start runs before its operation fails (LXD ~5 s). Default 200. */
  failedStartMs: number;
  /** Uptime of an instance in a crash loop before it exits again. Default 1000. */
  crashLoopUptimeMs: number;
  /** Retention of finished operations before they answer 404 (LXD 5 s). Default 5000. */
  operationRetentionMs: number;
}

/** Event-socket behaviour. */
export interface SimEventOptions {
  /** Interval of keepalive pings (payload "keepalive"); LXD 10 s. Default 10000. */
  pingIntervalMs: number;
  /** Unanswered pings tolerated before the socket is cut without a close frame; LXD 2. Default 2. */
  maxMissedPings: number;
  /** A frame not flushed within this time closes the socket (slow consumer); LXD 5 s. Default 5000. */
  writeDeadlineMs: number;
}

/** Cluster mode: instances live on members (docs/simulator.md, "Cluster mode"). */
export interface SimClusterOptions {
  /** Member names, e.g. ['m1', 'm2', 'm3']; the first answers requests. */
  members: string[];
  /**
   * Each member also answers on its own `https://127.0.0.1:<free port>` (its `url`), sharing the
   * one store and certificate; `RunningSimulator.memberListeners` takes them away and back.
   * Default false: the members' `url`s are `https://10.0.0.N:8443`, not listened on.
   */
  memberListeners?: boolean;
}

/** Options of startSimulator. */
export interface SimulatorOptions {
  /**
   * Where to listen: `unix:/path/to.sock` and/or `https://127.0.0.1:PORT` (port 0 picks one).
   * Default: a unix socket in a fresh temporary directory.
   */
  listen?: string[];
  /** API revision: 'earlier' (LXD 5.0-like, /1.0/containers, Cancelled) or 'later' (Incus-like). Default 'earlier'. */
  revision?: ApiRevision;
  /** Number of running containers to seed (named inst-00001…). Default 0. */
  instances?: number;
  /** Seed for deterministic ids; random when absent. */
  seed?: number;
  /** Extra projects besides `default`. */
  projects?: string[];
  /** Timings; see SimTimings for defaults. */
  timings?: Partial<SimTimings>;
  /** Event-socket behaviour; see SimEventOptions for defaults. */
  events?: Partial<SimEventOptions>;
  /**
   * How timestamps end: 'numeric' (`+00:00`), as the seed asks, or 'Z', what both daemons print on
   * a UTC host. Default 'numeric' in the earlier revision, 'Z' in the later one (as Incus writes them).
   */
  utcSuffix?: UtcSuffix;
  /**
   * How many creates make their instance visible only from the creation's database step
   * (`timings.createRecordMs` after the 202) rather than before the 202: on both daemons a GET
   * right after the 202 is sometimes 404, so code that does not wait for the create operation
   * fails here as it would there, sometimes. A share in [0, 1] (each create draws from its
   * operation id, so a seeded simulator repeats its draws), `true` for every create (the strict
   * form, for a test of that code path), `false` for none. Default: 0.6 in the earlier revision
   * (LXD 5.0.2: 404 in 11 of 18 GETs right after the 202 on the test bed), 0.7 in the later
   * (Incus 6.0.4: 21 of 30).
   */
  createVisibilityDelay?: boolean | number;
  /** PEM client certificates trusted on HTTPS from the start. */
  trustedCertificates?: string[];
  /**
   * Trust password (LXD's `core.trust_password`): an HTTPS client presenting it in
   * `POST /1.0/certificates` gets its certificate trusted (`lxc remote add … --password`).
   * Only in the earlier revision, as Incus dropped trust passwords. Default: none.
   */
  trustPassword?: string;
  /** Server certificate and key for HTTPS; a self-signed pair is generated when absent. */
  tls?: { cert: string; key: string };
  /** Simulate a cluster of these members; a standalone server when absent. */
  cluster?: SimClusterOptions;
  /**
   * The ports every running instance's HTTP endpoint listens on, on the instance's own loopback
   * address (docs/simulator.md, "Guest network"); probes set `port` to one. Default: one free port
   * chosen at start (`sim.guestPort`), since port 80 needs root.
   */
  guestPorts?: number[];
}

/** Options with every default filled in. */
export interface ResolvedSimOptions {
  listen: string[];
  revision: ApiRevision;
  instances: number;
  seed: number | undefined;
  projects: string[];
  timings: SimTimings;
  events: SimEventOptions;
  utcSuffix: UtcSuffix;
  /** The share of creates visible only from their database step (see SimulatorOptions). */
  createVisibilityDelay: number;
  trustedCertificates: string[];
  trustPassword: string | undefined;
  tls: { cert: string; key: string } | undefined;
  cluster: SimClusterOptions | undefined;
  guestPorts: number[] | undefined;
}

/** Default timings (see SimTimings). */
export const defaultTimings: SimTimings = {
  startMs: 100,
  stopMs: 300,
  forceStopMs: 60,
  restartMs: 300,
  freezeMs: 5,
  taskMs: 20,
  createRecordMs: 10,
  stopHookMs: 500,
  failedStartMs: 200,
  crashLoopUptimeMs: 1000,
  operationRetentionMs: 5000,
};

/** Default event-socket behaviour (that of LXD 5.0.2). */
export const defaultEventOptions: SimEventOptions = { pingIntervalMs: 10_000, maxMissedPings: 2, writeDeadlineMs: 5000 };

/** Fills in defaults; `defaultSocket` is used when no listen address is given. */
export function resolveOptions(opts: SimulatorOptions, defaultSocket: string): ResolvedSimOptions {
  const revision = opts.revision ?? 'earlier';
  return {
    listen: opts.listen && opts.listen.length > 0 ? opts.listen : [`unix:${defaultSocket}`],
    revision,
    instances: opts.instances ?? 0,
    seed: opts.seed,
    projects: ['default', ...(opts.projects ?? []).filter((p) => p !== 'default')],
    timings: { ...defaultTimings, ...opts.timings },
    events: { ...defaultEventOptions, ...opts.events },
    utcSuffix: opts.utcSuffix ?? (revision === 'later' ? 'Z' : 'numeric'),
    createVisibilityDelay: visibilityShare(opts.createVisibilityDelay, revision),
    trustedCertificates: opts.trustedCertificates ?? [],
    trustPassword: opts.trustPassword === '' ? undefined : opts.trustPassword,
    tls: opts.tls,
    cluster:
      opts.cluster && opts.cluster.members.length > 0
        ? { members: [...opts.cluster.members], memberListeners: opts.cluster.memberListeners ?? false }
        : undefined,
    guestPorts: opts.guestPorts && opts.guestPorts.length > 0 ? [...opts.guestPorts] : undefined,
  };
}

/** The share of delayed creates: `true` every one, `false` none, a number clamped to [0, 1], else the revision's measured share. */
function visibilityShare(opt: boolean | number | undefined, revision: ApiRevision): number {
  if (opt === true) return 1;
  if (opt === false) return 0;
  if (typeof opt === 'number' && Number.isFinite(opt)) return Math.min(1, Math.max(0, opt));
  return revision === 'later' ? 0.7 : 0.6;
}
