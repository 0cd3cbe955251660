import type { Command } from 'commander';
import { useColour } from '../../log/colour.js';
import { configFileOf, resolveConfig, withConnectionOptions } from '../config-options.js';
import { printJson } from '../option-values.js';

/** `reflex doctor`: checks Redis, the target (reachability, TLS pin, trust), events and rules; says what to fix. */
export function registerDoctor(program: Command): void {
  withConnectionOptions(program.command('doctor').description('check Redis, the target, its trust and TLS pin, the events stream and the rules'))
    .option('--json', 'print one JSON object {ok, checks: [{name, ok, warning, detail, fix}]}')
    .action(async (opts) => {
      const { runDoctor } = await import('../../doctor/doctor.js'); // pulls in the TypeScript compiler
      const checks = await runDoctor(resolveConfig(opts), { configFile: configFileOf(opts) });
      const ok = checks.every((c) => c.ok);
      if (!ok) process.exitCode = 1;
      if (opts.json)
        return printJson({
          ok,
          checks: checks.map((c) => ({ name: c.name, ok: c.ok, warning: Boolean(c.warning), detail: c.detail, fix: c.fix ?? null })),
        });
      const paint = useColour(process.stdout) ? (code: number, text: string) => `\x1b[${code}m${text}\x1b[0m` : (_: number, text: string) => text;
      for (const c of checks) {
        process.stdout.write(`${!c.ok ? paint(31, 'FAIL') : c.warning ? paint(33, 'warn') : paint(32, 'ok  ')} ${c.name.padEnd(7)} ${c.detail}\n`);
        if (c.fix) process.stdout.write(`     fix: ${c.fix}\n`);
      }
    });
}
