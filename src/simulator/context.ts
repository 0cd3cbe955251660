import type { ClusterMembers } from './cluster.js';
import type { EventHub } from './event-hub.js';
import type { FaultBook } from './faults.js';
import type { ConsoleSockets } from './exec/console-sockets.js';
import type { ExecSockets } from './exec/exec-sockets.js';
import type { ExecRecords } from './exec/exec-records.js';
import type { GuestNetwork } from './guest/guest-network.js';
import type { Guests } from './guest/guests.js';
import type { IdSource } from './ids.js';
import type { ImageAliases } from './image-aliases.js';
import type { ImageStore } from './image-store.js';
import type { NetworkStore } from './network-store.js';
import type { StoragePools } from './storage-pools.js';
import type { InstanceActions } from './instance-actions.js';
import type { InstanceStore } from './instance-store.js';
import type { LifecycleEmitter, Requestor } from './lifecycle.js';
import type { OperationRegistry } from './operations.js';
import type { ResolvedSimOptions } from './options.js';
import type { TrustStore } from './trust-store.js';

/**
 * One mutating API call as the daemon received it: when, on which instance (its name then and its
 * identity, `volatile.uuid`), what, the instance's status code when the call arrived, and the
 * caller's `User-Agent` (how a checker tells an operator's calls from Reflex's).
 */
export interface CallRecord {
  at: number;
  project: string;
  name: string;
  uuid: string;
  action: string;
  statusBefore: number;
  agent: string;
  /** How its operation ended, for a state change (start, stop, …), once it has. */
  result?: 'success' | 'failure';
}

/** Calls kept in the history; the oldest go first beyond it. */
const callHistoryLimit = 50_000;

/** Counts of mutating API calls received, per "project/name" and action, and their recent history. */
export class CallCounter {
  private readonly counts = new Map<string, Record<string, number>>();
  private readonly log: CallRecord[] = [];

  /** Records one call (in the history too when `record` is given, returned so its result can be added). */
  count(key: string, action: string, record?: Omit<CallRecord, 'action'>): CallRecord | undefined {
    const c = this.counts.get(key) ?? {};
    c[action] = (c[action] ?? 0) + 1;
    this.counts.set(key, c);
    if (!record) return undefined;
    const entry = { ...record, action };
    this.log.push(entry);
    if (this.log.length > callHistoryLimit) this.log.splice(0, this.log.length - callHistoryLimit);
    return entry;
  }

  /** The calls received since `since` (ms since the epoch), oldest first. */
  history(since = 0): CallRecord[] {
    return this.log.filter((r) => r.at >= since);
  }

  /** Calls for an instance ("name" in default or "project/name"), optionally for one action. */
  get(key: string, action?: string): number {
    const c = this.counts.get(key.includes('/') ? key : `default/${key}`) ?? {};
    return action === undefined ? Object.values(c).reduce((a, b) => a + b, 0) : (c[action] ?? 0);
  }

  /** Everything, as a plain object. */
  snapshot(): Record<string, Record<string, number>> {
    return Object.fromEntries([...this.counts].map(([k, v]) => [k, { ...v }]));
  }

  /** Forgets all counts and the history. */
  reset(): void {
    this.counts.clear();
    this.log.length = 0;
  }
}

/** Everything a handler can reach; one per simulator. */
export interface SimContext {
  opts: ResolvedSimOptions;
  ids: IdSource;
  store: InstanceStore;
  ops: OperationRegistry;
  hub: EventHub;
  lifecycle: LifecycleEmitter;
  faults: FaultBook;
  actions: InstanceActions;
  calls: CallCounter;
  trust: TrustStore;
  aliases: ImageAliases;
  /** Images: the built-in ones and those uploaded or published. */
  images: ImageStore;
  /** Managed networks (and the host's unmanaged interface). */
  networks: NetworkStore;
  /** Storage pools and their custom volumes. */
  pools: StoragePools;
  /** Websockets of exec operations. */
  execSockets: ExecSockets;
  /** Websockets of interactive console operations. */
  consoleSockets: ConsoleSockets;
  /** Each instance's filesystem and the shell exec runs in it. */
  guests: Guests;
  /** Each instance's address and HTTP endpoint. */
  guestNet: GuestNetwork;
  /** The output of exec requests made with `record-output`. */
  execRecords: ExecRecords;
  /** The HTTPS server certificate, when HTTPS is on. */
  serverTls: { cert: string; fingerprint: string; addresses: string[] } | undefined;
  /** The members, in cluster mode. */
  cluster: ClusterMembers | undefined;
  /** Whether the server is between a simulated daemon stop and start. */
  restarting: boolean;
  /** While the daemon is frozen: API requests wait for it to settle (a SIGSTOPped daemon). */
  frozen?: Promise<void> | undefined;
}

/** Identity and scope of one request. */
export interface RequestInfo {
  requestor: Requestor;
  trusted: boolean;
  /** SHA-256 fingerprint of the client certificate (HTTPS only). */
  fingerprint: string | undefined;
  project: string;
  allProjects: boolean;
  query: URLSearchParams;
  /** PEM of the client certificate presented over HTTPS. */
  clientCertPem: string | undefined;
}
