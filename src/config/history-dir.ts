import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The state folder of a packaged install (the unit's `StateDirectory=reflex`, docs/install-debian.md). */
export const PACKAGED_STATE_DIR = '/var/lib/reflex';

/**
 * The folder of the `files` history store when the configuration names none (`history.dir`), the
 * same for `reflex run` and for the commands that read it on the same host:
 * - `$STATE_DIRECTORY/history` under systemd (`StateDirectory=reflex`: /var/lib/reflex/history);
 * - `$XDG_STATE_HOME/reflex/history` when XDG_STATE_HOME is set (a desktop session; the tests);
 * - /var/lib/reflex/history when /var/lib/reflex exists (a packaged install, read from an
 *   operator's shell);
 * - ~/.local/state/reflex/history otherwise (a developer's `reflex run`), never a system folder.
 * Each prefix is a sub-folder of it.
 */
export function defaultHistoryDir(env: NodeJS.ProcessEnv = process.env, exists: (path: string) => boolean = existsSync): string {
  // systemd may list several folders, colon-separated, when a unit names several.
  const state = env.STATE_DIRECTORY?.split(':')[0];
  if (state) return join(state, 'history');
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'reflex', 'history');
  if (exists(PACKAGED_STATE_DIR)) return join(PACKAGED_STATE_DIR, 'history');
  return join(homedir(), '.local', 'state', 'reflex', 'history');
}
