import { Option, type Command } from 'commander';
import { assigneePattern, maxNoteLength, type TriageChange } from '../../alerts/triage.js';
import { AuditLog } from '../../audit/audit-log.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { findIncident, triageIncident } from '../../http/console/incident-triage.js';
import { AlertUpdates } from '../../notify/alert-update.js';
import { connectRedis } from '../../redis/connect.js';
import { keySpace } from '../../redis/key-space.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { operatorName, printJson, timeValue, usageError } from '../option-values.js';

/**
 * `reflex incident ack|assign|note ID`: the console's triage from the shell, by the incident's
 * correlation id (an alert's, `reflex audit`'s): audited as the operator (origin `cli`) and put on
 * the incident's firing alerts, which their receivers get as an update.
 */
export function registerIncident(program: Command): void {
  const inc = program
    .command('incident')
    .description('triage an incident: acknowledge it, assign it, add a note (audited, sent to receivers as an update)');
  const step = (name: string, description: string, args: (c: Command) => Command, changeOf: (cmd: Command, ...args: string[]) => TriageChange) => {
    const c = withConnectionOptions(
      args(inc.command(name).description(description).argument('<id>', "the incident's correlation id (an alert's; reflex audit)")),
    )
      .addOption(
        new Option('--since <time>', 'look for the incident this far back (a duration, or an ISO time)')
          .argParser(timeValue)
          .default(undefined, '7d'),
      )
      .option('--json', 'print one JSON object {triaged, changed, alerts, triage}');
    c.action(async (id: string, ...rest: unknown[]) => {
      const cmd = rest.at(-1) as Command;
      const opts = cmd.opts();
      const change = changeOf(cmd, ...(rest.slice(0, -2) as string[]));
      const config = resolveConfig(opts);
      const keys = keySpace(config.prefix);
      const redis = await connectRedis(config.redisUrl);
      const updates = new AlertUpdates(redis, keys.notify);
      try {
        const audit = new AuditLog(redis, keys.audit, { maxRecords: config.auditMaxRecords, maxAgeMs: config.auditMaxAgeMs });
        const since = (opts.since as Date | undefined) ?? new Date(Date.now() - 7 * 86_400_000);
        const incident = await findIncident(audit, id, since);
        if (!incident) throw new ReflexError('INCIDENT_UNKNOWN', `no incident ${id} since ${since.toISOString()}: nothing recorded`);
        const done = await triageIncident({ audit, updates }, incident, change, { origin: 'cli', actor: operatorName() });
        if (opts.json) return printJson({ triaged: done.summary, changed: done.changed, alerts: done.alerts, triage: done.triage ?? null });
        process.stdout.write(`${done.summary}${done.changed ? `; ${done.alerts} firing alert(s) updated for their receivers` : ''}\n`);
      } finally {
        await updates.close();
        redis.disconnect();
      }
    });
  };
  step(
    'ack',
    'acknowledge an incident: you are on it',
    (c) => c,
    () => ({ ack: true }),
  );
  step(
    'assign',
    'assign an incident to a user',
    (c) => c.argument('<user>', 'who owns it from now on'),
    (cmd, user) => {
      if (!assigneePattern.test(user!)) usageError(cmd, `user "${user}": letters, digits, . _ @ - only`);
      return { assign: user! };
    },
  );
  step(
    'note',
    'add a note to an incident',
    (c) => c.argument('<text...>', 'the note'),
    (cmd, ...words) => {
      const note = (words.flat() as string[]).join(' ').trim();
      if (!note || note.length > maxNoteLength) usageError(cmd, `the note: 1 to ${maxNoteLength} characters`);
      return { note };
    },
  );
}
