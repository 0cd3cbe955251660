import { posix } from 'node:path';
import type { Command } from 'just-bash';
import type { ProgramHost } from './program-host.js';

/**
 * just-bash's `sed`, with busybox's `sed -i` on a file of several names (`ln`): busybox writes the
 * result to a new file and renames it over the name, so that name alone changes and stops being a
 * link of the others (just-bash writes into the file, which every name shows).
 */
export function sedCommand(host: ProgramHost): Command {
  return {
    name: 'sed',
    async execute(args, ctx) {
      if (!ctx.origCommand) return { stdout: '', stderr: 'sh: sed: not found\n', exitCode: 127 };
      if (args.some((a) => /^-[a-zA-Z]*i/.test(a) || a.startsWith('--in-place'))) {
        // The operands after the script (the first operand unless -e or -f gave it) are the files.
        let script = false;
        for (let k = 0; k < args.length; k++) {
          const a = args[k]!;
          if (/^-[a-zA-Z]*[ef]$/.test(a) || a === '--expression' || a === '--file') {
            script = true;
            k++;
          } else if (/^-[a-zA-Z]*[ef]/.test(a) || /^--(expression|file)=/.test(a)) script = true;
          else if (a.startsWith('-') && a !== '-') continue;
          else if (!script) script = true;
          else await host.fs.separate(posix.resolve(ctx.cwd, a));
        }
      }
      return ctx.origCommand(args);
    },
  };
}
