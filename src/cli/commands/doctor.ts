import type { Command } from 'commander';
import { resolveConfig, withConnectionOptions } from '../config-options.js';

/** `reflex doctor`: checks Redis, the target (reachability, TLS pin, trust), events and rules; says what to fix. */
export function registerDoctor(program: Command): void {
  withConnectionOptions(program.command('doctor').description('check Redis, the target, its trust and TLS pin, the events stream and the rules')).action(async (opts) => {
    const { runDoctor } = await import('../../doctor/doctor.js'); // pulls in the TypeScript compiler
    const checks = await runDoctor(resolveConfig(opts));
    for (const c of checks) {
      process.stdout.write(`${!c.ok ? 'FAIL' : c.warning ? 'warn' : 'ok  '} ${c.name.padEnd(7)} ${c.detail}\n`);
      if (c.fix) process.stdout.write(`     fix: ${c.fix}\n`);
    }
    if (checks.some((c) => !c.ok)) process.exitCode = 1;
  });
}
