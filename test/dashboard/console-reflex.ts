import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigInput } from '../../src/config/config.js';
import type { Role } from '../../src/config/roles.js';
import { hashUserToken } from '../../src/http/dashboard-users.js';
import { freePort, waitForMetric } from '../metrics/observability-bed.js';
import { redisUrl } from '../support/redis.js';
import { startStack, type Stack, type StackOptions } from '../support/stack.js';

/** A stack whose Reflex serves its console, and the console's address. */
export type ConsoleStack = Stack & { url: string };

/**
 * A stack (test/support/stack.ts) whose Reflex serves the console as the console tests drive it: the
 * run's Redis (or `redisUrl`: one the test takes away), the bundled rules, on a free port; `config` on top (tokens, receivers). Resolves
 * once each target's event stream is connected and resynced.
 */
export async function startConsoleStack(
  options: Omit<StackOptions, 'redisUrl' | 'config'> & { config: Partial<ConfigInput>; redisUrl?: string },
): Promise<ConsoleStack> {
  const stack = await startStack({ redisUrl: redisUrl(), label: 'console', ...options, config: { httpPort: await freePort(), ...options.config } });
  try {
    const url = stack.reflex.http!.url;
    for (const target of stack.reflex.targets) await waitForMetric(url, 'reflex_stream_connected', { target }, (v) => v === 1);
    await waitForMetric(url, 'reflex_gaps_resynced_total', {}, (v) => v >= stack.reflex.targets.length);
    return { ...stack, url };
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

/** Writes a console users file (`NAME ROLE HASH` a line) for the users given as name → [role, token]; answers its path. */
export async function writeUsersFile(users: Record<string, [Role, string]>): Promise<string> {
  const file = join(mkdtempSync(join('.tmp', 'console-users-')), 'users');
  const lines = await Promise.all(Object.entries(users).map(async ([name, [role, token]]) => `${name} ${role} ${await hashUserToken(token)}`));
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}
