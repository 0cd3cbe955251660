import type { Logger } from 'pino';

let installed = false;

/**
 * Keeps one failing promise from taking the whole worker down: an unhandled rejection (a Redis
 * write failing in one lane while another waits on the daemon) is logged at error level with its
 * stack, and the process goes on; the job it belonged to fails and is retried by its queue.
 * Installed once per process.
 */
export function installProcessGuards(logger: Logger): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason instanceof Error ? reason : new Error(String(reason)) }, 'unhandled rejection (kept running)');
  });
}
