import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';

/*
 * ioredis is CommonJS: loaded with `require`, as commonjs-packages.ts explains, and on its own, so
 * that a command which talks to Redis but runs no queue (`reflex housekeeping plan` before it
 * needs a job's state) does not load BullMQ's hundred and seventy files with it.
 */
const ioredis = createRequire(import.meta.url)('ioredis') as typeof IORedis;

export const { Redis, Cluster } = ioredis;
export type Redis = IORedis.Redis;
export type Cluster = IORedis.Cluster;
