import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { startReflex } from './start-reflex.js';

/**
 * Starts Reflex with `config` and runs it until SIGTERM or SIGINT, then drains and stops it.
 * SIGHUP reloads this process's rules, schedules and receivers (never stops it; a refused reload
 * keeps the running set, and the log and audit say why).
 */
export async function runUntilSignal(config: Config, logger: Logger): Promise<void> {
  const handle = await startReflex(config, logger);
  logger.info({ ...(handle.targets.length > 1 ? { targets: handle.targets } : { target: handle.target }), role: config.role }, 'reflex running');
  let stopping = false;
  const reload = () => {
    if (stopping) return logger.info({ signal: 'SIGHUP' }, 'SIGHUP ignored: stopping');
    if (!handle.reload) return logger.info({ signal: 'SIGHUP', role: config.role }, 'SIGHUP: nothing to reload (this role holds no rules)');
    // The outcome is logged and audited by the reload itself.
    handle.reload({ by: 'signal' }).catch((err: unknown) => logger.error({ err }, 'reload failed'));
  };
  process.on('SIGHUP', reload);
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      stopping = true;
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
