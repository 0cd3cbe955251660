import { Option, type Command } from 'commander';
import { createLogger } from '../../log/logger.js';
import { useColour } from '../../log/colour.js';
import { durationValue } from '../option-values.js';

/** `reflex demo`: the main job on the embedded default (simulator + private Redis + bundled rules). */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('watch Reflex heal a simulated fleet: no LXD needed (starts a private redis-server unless REDIS_URL is set)')
    .addOption(new Option('--duration <time>', 'how long to run, e.g. 40s, 2m, 1m30s').argParser(durationValue).default(40_000, '40s'))
    .option('--redis <url>', 'use this Redis instead of a private redis-server (env REDIS_URL)', process.env.REDIS_URL)
    .action(async (opts: { duration: number; redis?: string }) => {
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      process.once('SIGTERM', () => abort.abort());
      // Loaded on use: the demo brings the simulator, which `reflex run` does not need.
      const { runDemo } = await import('../../demo/demo.js');
      await runDemo({
        durationMs: opts.duration,
        redisUrl: opts.redis || undefined,
        colour: useColour(process.stdout),
        logger: createLogger('warn', { pretty: false }),
        signal: abort.signal,
      });
    });
}
