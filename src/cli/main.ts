import { readFileSync } from 'node:fs';
import { Command } from 'commander';
/**
 * The version of the installed package. package.json sits two levels above this file both in the
 * checkout (src/cli/) and once compiled (dist/cli/).
 */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

type Register = (program: Command) => void;

/**
 * Each sub-command, in the order of the help, with the module that declares it (commands/<name>.ts,
 * which registers exactly that top-level command). A module is imported only when its command is
 * wanted: `reflex run` pulls in the whole worker (HTTP server, notifiers, Postgres, bull-board),
 * and `reflex rules check` or `reflex housekeeping plan` must not pay for loading it.
 */
const commandModules: [name: string, load: () => Promise<Register>][] = [
  ['demo', async () => (await import('./commands/demo.js')).registerDemo],
  ['run', async () => (await import('./commands/run.js')).registerRun],
  ['audit', async () => (await import('./commands/audit.js')).registerAudit],
  ['sim', async () => (await import('./commands/sim.js')).registerSim],
  ['rules', async () => (await import('./commands/rules.js')).registerRules],
  ['replay', async () => (await import('./commands/replay.js')).registerReplay],
  ['silence', async () => (await import('./commands/silence.js')).registerSilence],
  ['alerts', async () => (await import('./commands/alerts.js')).registerAlerts],
  ['quarantine', async () => (await import('./commands/quarantine.js')).registerQuarantine],
  ['probes', async () => (await import('./commands/probes.js')).registerProbes],
  ['dlq', async () => (await import('./commands/dlq.js')).registerDlq],
  ['heal', async () => (await import('./commands/heal.js')).registerHeal],
  ['incident', async () => (await import('./commands/incident.js')).registerIncident],
  ['approvals', async () => (await import('./commands/approval.js')).registerApprovals],
  ['approve', async () => (await import('./commands/approval.js')).registerApprove],
  ['deny', async () => (await import('./commands/approval.js')).registerDeny],
  ['housekeeping', async () => (await import('./commands/housekeeping.js')).registerHousekeeping],
  ['doctor', async () => (await import('./commands/doctor.js')).registerDoctor],
];

/**
 * Builds the `reflex` command line. Each sub-command lives in commands/<name>.ts and only wires.
 * Every usage error (unknown command or option, missing or bad value, conflicting options) is one
 * line on stderr and exit code 2 (entry.ts); the settings below are inherited by every sub-command.
 *
 * Given the command line, only the sub-command it names is loaded (the program has no options of
 * its own before a sub-command but `--version`, so that is `argv[2]`); anything else (`reflex`, `--help`, `help`,
 * a mistyped name that wants suggestions) loads them all, as does a call without `argv` (the
 * reference docs).
 */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
  const program = new Command('reflex')
    .description('Event-driven automation worker for LXD and Incus')
    .version(packageVersion(), '-V, --version', 'print the version of Reflex')
    .configureOutput({
      outputError: (text, write) =>
        write(
          `reflex: ${text
            .replace(/^error: /, '')
            .trim()
            .replaceAll('\n', ' ')}\n`,
        ),
    })
    .exitOverride();
  const first = argv?.[2];
  const named = commandModules.filter(([name]) => name === first);
  // `reflex --version` needs no sub-command at all.
  const wanted = first === '-V' || first === '--version' ? [] : named.length ? named : commandModules;
  for (const register of await Promise.all(wanted.map(([, load]) => load()))) register(program);
  return program;
}
