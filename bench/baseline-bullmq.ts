import { Queue, Worker } from 'bullmq';
import { duplicateConnection } from '../src/redis/connect.js';
import { redisClient } from './support.js';
import { until } from '../test/support/wait.js';

/**
 * The bare-queue baseline of the storm benchmarks: `count` empty jobs added one `add` each (the
 * calls overlap, as a producer reading a socket would issue them) and processed by a default
 * BullMQ worker (concurrency 1, as Reflex's event worker). Returns jobs per second, first add to
 * last completion; `onProcessed` is called at the last completion (a CPU reading, bench/storm-cpu.ts).
 */
export async function bullmqAddProcess(url: string, count: number, opts: { onProcessed?: () => void } = {}): Promise<number> {
  const connection = redisClient(url);
  const name = `storm-${process.pid}-${Date.now()}`;
  const queue = new Queue(name, { connection, prefix: 'bench-baseline', defaultJobOptions: { removeOnComplete: { count: 100_000 } } });
  let done = 0;
  const worker = new Worker(name, async () => void done++, { connection: duplicateConnection(connection), prefix: 'bench-baseline' });
  await worker.waitUntilReady();
  const started = performance.now();
  await Promise.all(Array.from({ length: count }, () => queue.add('e', {})));
  await until(`${count} empty jobs processed`, () => done >= count, 120_000, 5);
  const seconds = (performance.now() - started) / 1000;
  // The measured span ends here: closing and emptying the queue is not the baseline's work.
  opts.onProcessed?.();
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return count / seconds;
}
