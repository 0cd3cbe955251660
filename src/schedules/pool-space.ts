import { z } from 'zod';
import type { InstanceClient } from '../client/client.js';

const resourcesSchema = z.looseObject({ space: z.looseObject({ total: z.number(), used: z.number() }) });

/**
 * Free fraction (0–1) of a storage pool, from `GET /1.0/storage-pools/<pool>/resources`; undefined
 * when the server does not say (no such endpoint, a driver without the figures, a total of 0).
 * Retention then takes the new snapshot first, the safer order when space is not known to be short.
 */
export async function poolFreeRatio(client: InstanceClient, pool: string, opts: { signal?: AbortSignal } = {}): Promise<number | undefined> {
  try {
    const res = await client.transport.request('GET', `/1.0/storage-pools/${encodeURIComponent(pool)}/resources`, {
      signal: opts.signal,
      timeoutMs: 10_000,
    });
    if (res.kind !== 'sync') return undefined;
    const parsed = resourcesSchema.safeParse(res.envelope.metadata);
    if (!parsed.success || parsed.data.space.total <= 0) return undefined;
    return Math.max(0, 1 - parsed.data.space.used / parsed.data.space.total);
  } catch {
    return undefined;
  }
}
