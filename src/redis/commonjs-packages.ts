import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';

/*
 * BullMQ and ioredis are CommonJS. An `import` of either makes Node read and lex the source of
 * each file they re-export, to learn their export names, before it runs them as `require` would:
 * for BullMQ's hundred files that doubled its cost (Node 20, CPU on a `reflex` command's start:
 * `import` 180 ms, `require` 85 ms; ioredis 85 ms and 49 ms). Their values are taken from here,
 * loaded with `require`; their types straight from the packages (`import type` loads nothing).
 * ioredis has a module of its own (ioredis-package.ts): a Redis connection loads no BullMQ.
 */
const load = createRequire(import.meta.url);
const bullmq = load('bullmq') as typeof BullMQ;

export const { Queue, Worker, Job, getNextMillis } = bullmq;
export type Queue = BullMQ.Queue;
export type Worker = BullMQ.Worker;
export type Job = BullMQ.Job;
