import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { AuditLog, type StoredAuditRecord } from '../../audit/audit-log.js';
import { withFormerNames, type AuditQuery } from '../../audit/audit-query.js';
import { auditTypes, type AuditType } from '../../audit/audit-record.js';
import { verifyExport, type VerifyResult } from '../../audit/audit-verifier.js';
import type { AcrossResult } from '../../audit/history/history-reading.js';
import { historyStoreFor } from '../../audit/history/history-store-for.js';
import type { HistoryStore } from '../../audit/history/history-store.js';
import { readConfigFile } from '../../config/config-file.js';
import { configFromEnv, historySchema } from '../../config/config.js';
import { configFileOf } from '../config-options.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { keySpace } from '../../redis/key-space.js';
import { connectRedis } from '../../redis/connect.js';
import { timeValue, wholeNumber } from '../option-values.js';

interface AuditOpts {
  redis: string;
  prefix: string;
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
  config?: string;
  history?: string;
  historyDir?: string;
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

/** The history store of the configuration (file, then environment), as `--history` and `--history-dir` change it. */
function historyOf(o: AuditOpts): HistoryStore | undefined {
  const file = configFileOf({ config: o.config });
  const fromFile = file ? (readConfigFile(file).history ?? {}) : {};
  const history = historySchema.parse({
    ...fromFile,
    ...configFromEnv().history,
    ...(o.historyDir !== undefined ? { store: 'files', dir: o.historyDir } : {}),
    ...(o.history !== undefined ? { store: o.history } : {}),
  });
  return historyStoreFor(history, o.prefix, keySpace(o.prefix).audit);
}

async function withLog<T>(o: AuditOpts, run: (log: AuditLog) => Promise<T>): Promise<T> {
  const history = historyOf(o);
  const redis = await connectRedis(o.redis);
  try {
    return await run(new AuditLog(redis, keySpace(o.prefix).audit, { history }));
  } finally {
    redis.disconnect();
    await history?.close();
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
  const audit = program
    .command('audit')
    .description('print the audit log, oldest first; see also `audit verify` and `audit export`')
    .option('--redis <url>', 'Redis URL (env REDIS_URL)', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
    .option('--prefix <prefix>', 'Redis key prefix (env REFLEX_PREFIX)', process.env.REFLEX_PREFIX ?? 'reflex')
    .option(
      '--config <file>',
      'configuration file whose history section names the history store read with Redis (env REFLEX_CONFIG; default /etc/reflex/config.yaml when it exists)',
    )
    .addOption(
      new Option('--history <store>', "the history store read with Redis, instead of the configuration's (env REFLEX_HISTORY_STORE)").choices([
        'files',
        'postgres',
        'none',
      ]),
    )
    .option('--history-dir <dir>', 'folder of the files history store (env REFLEX_HISTORY_DIR; implies --history files)')
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
