import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';
import type * as IORedis from 'ioredis';

/*
 * BullMQ and ioredis are CommonJS. An `import` of either makes Node read and lex the source of
 * each file they re-export, to learn their export names, before it runs them as `require` would:
 * for BullMQ's hundred files that doubled its cost (Node 20, CPU on a `reflex` command's start:
 * `import` 180 ms, `require` 85 ms; ioredis 85 ms and 49 ms). Their values are taken from here,
 * loaded with `require`; their types straight from the packages (`import type` loads nothing).
 */
const load = createRequire(import.meta.url);
const bullmq = load('bullmq') as typeof BullMQ;
const ioredis = load('ioredis') as typeof IORedis;

export const { Queue, Worker, Job, getNextMillis } = bullmq;
export type Queue = BullMQ.Queue;
export type Worker = BullMQ.Worker;
export type Job = BullMQ.Job;

export const { Redis, Cluster } = ioredis;
export type Redis = IORedis.Redis;
export type Cluster = IORedis.Cluster;
