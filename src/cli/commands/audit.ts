import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { AuditLog, type StoredAuditRecord } from '../../audit/audit-log.js';
import { withFormerNames, type AuditQuery } from '../../audit/audit-query.js';
import { auditTypes, type AuditType } from '../../audit/audit-record.js';
import { verifyExport, type VerifyResult } from '../../audit/audit-verifier.js';
import type { AcrossResult } from '../../audit/history/history-reading.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { connectRedis } from '../../redis/connect.js';
import { openAuditReading } from '../audit-history.js';
import { configFileOf, resolveConfig, withStoreOptions } from '../config-options.js';
import { timeValue, wholeNumber } from '../option-values.js';

interface AuditOpts extends Record<string, unknown> {
  instance?: string;
  rule?: string;
  type?: AuditType[];
  since?: Date;
  until?: Date;
  last?: number;
  json?: boolean;
  follow?: boolean;
  out?: string;
  file?: string;
}

function line(r: StoredAuditRecord): string {
  const who = [r.instance, r.rule].filter(Boolean).join(' ');
  return `${r.at}  ${r.type.padEnd(8)} ${who.padEnd(30)} ${r.summary}`;
}

function typesArg(text: string): AuditType[] {
  const types = text.split(',').map((t) => t.trim());
  const bad = types.find((t) => !(auditTypes as readonly string[]).includes(t));
  if (bad !== undefined) throw new InvalidArgumentError(`unknown type "${bad}"; one of ${auditTypes.join(', ')}`);
  return types as AuditType[];
}

function queryOf(o: AuditOpts): AuditQuery {
  return { instance: o.instance, rule: o.rule, type: o.type, since: o.since, until: o.until };
}

/** Runs `run` on the audit trail of the configuration `reflex run` reads (file, environment, flags): its history store and Redis. */
async function withLog<T>(o: AuditOpts, run: (log: AuditLog) => Promise<T>): Promise<T> {
  const config = resolveConfig(o);
  const redis = await connectRedis(config.redisUrl);
  const reading = openAuditReading(config, redis, configFileOf(o));
  try {
    return await run(reading.log);
  } finally {
    redis.disconnect();
    await reading.close();
  }
}

async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

async function print(o: AuditOpts): Promise<void> {
  await withLog(o, async (log) => {
    const show = (r: StoredAuditRecord) => write(process.stdout, `${o.json ? JSON.stringify(r) : line(r)}\n`);
    // The snapshot id splits history from following, so no record is printed twice or missed.
    const endId = o.follow ? await log.lastId() : undefined;
    const query = await withFormerNames((q) => log.records(q), queryOf(o));
    for (const r of await log.read({ ...query, endId, count: o.last })) await show(r);
    if (!o.follow) return;
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      for await (const r of log.follow(query, { afterId: endId, signal: stop.signal })) await show(r);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  });
}

async function exportJsonl(o: AuditOpts): Promise<void> {
  const out = o.out ? createWriteStream(o.out) : process.stdout;
  // A file that cannot be opened fails here, once, instead of as an unhandled stream error.
  if (o.out) await once(out, 'open');
  let n = 0;
  await withLog(o, async (log) => {
    for await (const r of log.records(await withFormerNames((q) => log.records(q), queryOf(o)))) {
      await write(out, `${JSON.stringify(r)}\n`);
      n++;
    }
  });
  if (o.out) {
    out.end();
    await once(out, 'finish');
    process.stdout.write(`exported ${n} records to ${o.out}\n`);
  }
}

async function verify(o: AuditOpts): Promise<void> {
  const result: VerifyResult | AcrossResult = o.file
    ? await verifyExport(createInterface({ input: createReadStream(o.file), crlfDelay: Infinity }))
    : await withLog(o, (log) => log.verify());
  if (o.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (!result.ok) process.exitCode = 1;
    return;
  }
  if (!result.ok) {
    throw new ReflexError(
      'AUDIT_CHAIN_BROKEN',
      `audit chain broken at record ${result.badId}: ${result.reason} (${result.records} records before it verified)`,
    );
  }
  const span = result.records
    ? ` (${result.firstId} to ${result.headId}; head hash ${result.headHash}${result.anchorId ? `; trimmed by retention, anchored at ${result.anchorId}` : ''})`
    : '';
  const store =
    'store' in result && result.store
      ? `; ${result.store.records} of them in the ${result.store.kind} history store${result.store.headId ? ` (up to ${result.store.headId})` : ''}, the rest in Redis`
      : '';
  process.stdout.write(`verified ${result.records} records${span}${store}\n`);
}

/**
 * `reflex audit`: prints the audit trail oldest first (or follows it), `audit verify` checks the
 * hash chain, `audit export` writes JSONL. The filter and connection options belong to `audit` and
 * apply to its sub-commands too.
 */
export function registerAudit(program: Command): void {
  const audit = withStoreOptions(
    program.command('audit').description('print the audit log, oldest first; see also `audit verify` and `audit export`'),
  )
    .addOption(
      new Option(
        '--history <store>',
        "the history store read with Redis, instead of the configuration's history.store (env REFLEX_HISTORY_STORE; default files)",
      ).choices(['files', 'postgres', 'none']),
    )
    .option(
      '--history-dir <dir>',
      "folder of the files history store, instead of the configuration's history.dir (env REFLEX_HISTORY_DIR; implies --history files)",
    )
    .option(
      '--instance <name>',
      'only records about this instance, and about the instances that bore this name, under every name they had (renames keep volatile.uuid)',
    )
    .option('--rule <name>', 'only records about this rule')
    .option('--type <types>', `only records of these types (comma-separated: ${auditTypes.join(', ')})`, typesArg)
    .option('--since <when>', 'only records since a duration ago (15m, 1h30m, 7d) or an ISO timestamp', timeValue)
    .option('--until <when>', 'only records up to a duration ago or an ISO timestamp', timeValue)
    .option('--last <n>', 'only the newest n matching records', wholeNumber(1))
    .option('--json', 'JSON Lines: one record object per line (a stream, also with --follow)')
    .option('-f, --follow', 'keep printing new records until interrupted')
    .action((_opts, cmd: Command) => print(cmd.optsWithGlobals<AuditOpts>()));
  audit
    .command('verify')
    .description('check the hash chain, across the history store and Redis; exit 1 naming the first record altered, deleted or inserted')
    .option('--file <file.jsonl>', 'verify an export instead of the live log')
    .action((_opts, cmd: Command) => verify(cmd.optsWithGlobals<AuditOpts>()));
  audit
    .command('export')
    .description('write records as JSON lines with their chain fields (id, prev, hash), oldest first')
    .option('--out <file.jsonl>', 'write to this file instead of stdout')
    .action((_opts, cmd: Command) => exportJsonl(cmd.optsWithGlobals<AuditOpts>()));
}
