import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { startReflex } from './start-reflex.js';

/** Starts Reflex with `config` and runs it until SIGTERM or SIGINT, then drains and stops it. */
export async function runUntilSignal(config: Config, logger: Logger): Promise<void> {
  const handle = await startReflex(config, logger);
  logger.info({ ...(handle.targets.length > 1 ? { targets: handle.targets } : { target: handle.target }), role: config.role }, 'reflex running');
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info({ signal }, 'stopping');
      handle.stop().then(resolve, (err: unknown) => {
        logger.error({ err }, 'error while stopping');
        resolve();
      });
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
