import { z } from 'zod';
import { StatusCode } from './status-code.js';

/**
 * The fields of an instance object Reflex relies on; everything else passes through untouched.
 * While a cluster member is unreachable, the listing still names its instances, as stubs with
 * `status: Error`, `config: null`, `devices: null`, `profiles: null` and no expanded config (LXD
 * 5.0.2): they parse, with an empty config ({@link isUnreachableStub}).
 */
export const instanceSchema = z.looseObject({
  name: z.string(),
  type: z.string().optional(),
  status: z.string(),
  status_code: z.number().int(),
  config: z
    .record(z.string(), z.string())
    .nullish()
    .transform((v) => v ?? {}),
  expanded_config: z.record(z.string(), z.string()).nullable().optional(),
  devices: z.record(z.string(), z.record(z.string(), z.string())).nullable().optional(),
  profiles: z.array(z.string()).nullable().optional(),
  project: z.string().optional(),
  location: z.string().optional(),
  ephemeral: z.boolean().optional(),
  /** When the instance was last started (daemon time; the zero time when never). */
  last_used_at: z.string().optional(),
});
export type Instance = z.infer<typeof instanceSchema>;

/**
 * Whether a listed instance is the stub of an unreachable cluster member (Error, `devices: null`,
 * no expanded config): its status is the member's, not the instance's. A real instance always
 * has a devices map, empty or not.
 */
export function isUnreachableStub(instance: Instance): boolean {
  return instance.status_code === StatusCode.Error && instance.devices === null;
}

export const instanceStateSchema = z.looseObject({
  status: z.string(),
  status_code: z.number().int(),
  pid: z.number().int().optional(),
});
export type InstanceState = z.infer<typeof instanceStateSchema>;

/** A snapshot object (`GET …/snapshots/<name>`, or an entry of recursion ≥ 1). */
export const snapshotSchema = z.looseObject({
  name: z.string(),
  created_at: z.string().optional(),
  /** `0001-01-01T00:00:00Z` when the snapshot never expires (LXD 5.0.2). */
  expires_at: z.string().nullable().optional(),
  stateful: z.boolean().optional(),
  config: z.record(z.string(), z.string()).optional(),
});
export type Snapshot = z.infer<typeof snapshotSchema>;

/** An instance at recursion 2: the object plus `state`, `snapshots` and `backups` (notes §6). */
export const instanceFullSchema = instanceSchema.extend({
  state: instanceStateSchema.nullable().optional(),
  snapshots: z.array(snapshotSchema).nullable().optional(),
  backups: z.array(z.unknown()).nullable().optional(),
});
export type InstanceFull = z.infer<typeof instanceFullSchema>;

/** Body of `PUT /1.0/instances/<name>/state`. */
export interface StateChange {
  action: 'start' | 'stop' | 'restart' | 'freeze' | 'unfreeze';
  /** Seconds to wait for a graceful stop; -1 waits forever (the daemon's default). */
  timeout?: number;
  force?: boolean;
  stateful?: boolean;
}

/** A value read together with its ETag, to be sent back as If-Match. */
export interface Versioned<T> {
  value: T;
  etag: string | undefined;
}

/** The last path segment of a resource URL (`/1.0/instances/c1?project=p` → `c1`), decoded. */
export function nameFromUrl(url: string): string {
  const path = url.split('?')[0] ?? url;
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}
