import type { ClusterMembers } from './cluster.js';
import type { EventHub } from './event-hub.js';
import type { FaultBook } from './faults.js';
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

/** Counts of mutating API calls received, per "project/name" and action. */
export class CallCounter {
  private readonly counts = new Map<string, Record<string, number>>();

  /** Records one call. */
  count(key: string, action: string): void {
    const c = this.counts.get(key) ?? {};
    c[action] = (c[action] ?? 0) + 1;
    this.counts.set(key, c);
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

  /** Forgets all counts. */
  reset(): void {
    this.counts.clear();
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
