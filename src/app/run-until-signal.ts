import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { startReflex } from './start-reflex.js';

/**
 * Starts Reflex with `config` and runs it until SIGTERM or SIGINT, then drains and stops it.
 * SIGHUP reloads this process's rules, schedules and receivers (never stops it; a refused reload
 * keeps the running set, and the log and audit say why).
 */
export async function runUntilSignal(config: Config, logger: Logger): Promise<void> {
  // Listening before anything is started or logged: a SIGHUP that arrives while Reflex starts
  // (systemctl reload right after start, or a caller that acts on the "reflex running" line at
  // once) must never take Node's default action, which ends the process.
  let handle: Awaited<ReturnType<typeof startReflex>> | undefined;
  let pending = false;
  let stopping = false;
  const reload = () => {
    if (stopping) return logger.info({ signal: 'SIGHUP' }, 'SIGHUP ignored: stopping');
    if (!handle) {
      pending = true;
      return logger.info({ signal: 'SIGHUP' }, 'SIGHUP while starting: the rules are reloaded once started');
    }
    if (!handle.reload) return logger.info({ signal: 'SIGHUP', role: config.role }, 'SIGHUP: nothing to reload (this role holds no rules)');
    // The outcome is logged and audited by the reload itself.
    handle.reload({ by: 'signal' }).catch((err: unknown) => logger.error({ err }, 'reload failed'));
  };
  process.on('SIGHUP', reload);
  try {
    handle = await startReflex(config, logger);
  } catch (err) {
    process.off('SIGHUP', reload);
    throw err;
  }
  const running = handle;
  logger.info({ ...(running.targets.length > 1 ? { targets: running.targets } : { target: running.target }), role: config.role }, 'reflex running');
  if (pending) reload();
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      stopping = true;
      logger.info({ signal }, 'stopping');
      running.stop().then(resolve, (err: unknown) => {
        logger.error({ err }, 'error while stopping');
        resolve();
      });
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
