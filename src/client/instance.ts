import { z } from 'zod';

/** The fields of an instance object Reflex relies on; everything else passes through untouched. */
export const instanceSchema = z.looseObject({
  name: z.string(),
  type: z.string().optional(),
  status: z.string(),
  status_code: z.number().int(),
  config: z.record(z.string(), z.string()).default({}),
  expanded_config: z.record(z.string(), z.string()).optional(),
  devices: z.record(z.string(), z.record(z.string(), z.string())).optional(),
  project: z.string().optional(),
  location: z.string().optional(),
  ephemeral: z.boolean().optional(),
});
export type Instance = z.infer<typeof instanceSchema>;

export const instanceStateSchema = z.looseObject({
  status: z.string(),
  status_code: z.number().int(),
  pid: z.number().int().optional(),
});
export type InstanceState = z.infer<typeof instanceStateSchema>;

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
