import { pino } from 'pino';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { parseConfig, type ConfigInput } from '../../src/config/config.js';
import { freePort, waitForMetric } from '../metrics/observability-bed.js';
import { redisUrl } from '../support/redis.js';

/**
 * An in-process Reflex with its console, as the console tests run it: the bundled rules, the run's
 * Redis, no periodic resync, a short lease, silent, on a free port; `over` on top (the targets,
 * tokens, receivers). Resolves once each target's event stream is connected and resynced.
 */
export async function startConsoleReflex(prefix: string, over: Partial<ConfigInput>): Promise<{ reflex: ReflexHandle; url: string }> {
  const reflex = await startReflex(
    parseConfig({
      redisUrl: redisUrl(),
      rulesDir: 'rules',
      prefix,
      resyncIntervalMs: 0,
      resyncGraceMs: 100,
      leaseTtlMs: 600,
      logLevel: 'silent',
      httpPort: await freePort(),
      ...over,
    }),
    pino({ level: 'silent' }),
  );
  const url = reflex.http!.url;
  for (const target of reflex.targets) await waitForMetric(url, 'reflex_stream_connected', { target }, (v) => v === 1);
  await waitForMetric(url, 'reflex_gaps_resynced_total', {}, (v) => v >= reflex.targets.length);
  return { reflex, url };
}
