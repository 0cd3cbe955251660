import { Bash, InMemoryFs } from 'just-bash';
import { ReflexError } from '../../errors/reflex-error.js';
import { fsError } from './fs-error.js';

/**
 * The guest's shell is just-bash with the project's patch (patches/just-bash+<version>.patch,
 * applied by patch-package when `npm install` runs the project's postinstall). Without it a file
 * the guest's filesystem refuses to open for a redirection (`echo x > /nosuch/f`) is an exception
 * that ends the whole exec instead of the command's error; so the simulator checks the patch's
 * behaviour once and refuses to start without it, saying how to apply it.
 */
let checked: Promise<void> | undefined;

export function assertShellPatched(): Promise<void> {
  checked ??= probe();
  return checked;
}

async function probe(): Promise<void> {
  const fs = new InMemoryFs();
  const refuse = async (path: string): Promise<void> => {
    throw fsError('ENOENT', path, 'open');
  };
  fs.writeFile = refuse;
  const outcome = await new Bash({ fs })
    .exec('echo x > /nosuch/f')
    .then((r) => r.stderr)
    .catch((err: unknown) => String(err));
  if (outcome.includes("can't create /nosuch/f: nonexistent directory")) return;
  checked = undefined;
  throw new ReflexError(
    'SIM_SHELL_UNPATCHED',
    `the simulator's shell library (just-bash) lacks the project's patch (patches/): run \`npx patch-package\` in the project (npm install runs it unless scripts are off); probe answered: ${outcome.trim()}`,
  );
}
