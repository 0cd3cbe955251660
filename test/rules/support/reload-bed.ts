import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { AuditLog, type StoredAuditRecord } from '../../../src/audit/audit-log.js';
import type { ReflexHandle } from '../../../src/app/start-reflex.js';
import type { ConfigInput } from '../../../src/config/config.js';
import { redisUrl } from '../../support/redis.js';
import { startStack, writeRules, type StackParts } from '../../support/stack.js';

/** A rules folder written for a test; `write` replaces its files (a file mapped to undefined is deleted). */
export interface RulesFolder {
  dir: string;
  write(files: Record<string, string | undefined>): void;
}

export function rulesFolder(files: Record<string, string>): RulesFolder {
  const dir = writeRules({});
  const folder = {
    dir,
    write(next: Record<string, string | undefined>) {
      for (const [f, src] of Object.entries(next)) {
        if (src === undefined) rmSync(join(dir, f), { force: true });
        else writeFileSync(join(dir, f), src);
      }
    },
  };
  folder.write(files);
  return folder;
}

/** A rule that starts a crashed instance, under the given name. */
export const startRule = (name: string, extra = '') => `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({ name: '${name}', on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] }, actions: [{ action: 'start' }]${extra} });
`;

/** A housekeeping schedule ticking every second (nothing in scope: its ticks only count). */
export const tickSchedule = (name: string) => `import { defineSchedule } from 'reflex-lxd';
export default defineSchedule({ name: '${name}', every: '1s', catchUp: 'skip', scope: { filter: 'config.user.none eq true' }, tasks: [{ task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M%S' }] });
`;

/** The simulator, and in-process Reflex replicas on one prefix, each with its log lines collected. */
export interface ReloadBed extends StackParts {
  audit: AuditLog;
  replicas: { reflex: ReflexHandle; logs: Record<string, unknown>[] }[];
  /** Starts a replica on the rules in `dir`, logging at info into its `logs`. */
  start(dir: string, config?: Partial<ConfigInput>): Promise<{ reflex: ReflexHandle; logs: Record<string, unknown>[] }>;
  /** The reload records of the audit log. */
  reloads(): Promise<StoredAuditRecord[]>;
}

export async function startReloadBed(): Promise<ReloadBed> {
  const stack = await startStack({ redisUrl: redisUrl(), label: 'reload', reflex: false });
  const audit = new AuditLog(stack.redis, stack.keys.audit);
  const replicas: ReloadBed['replicas'] = [];
  return {
    ...stack,
    audit,
    replicas,
    async start(dir, config = {}) {
      const logs: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      });
      const reflex = await stack.replica({ rulesDir: dir, logLevel: 'info', ...config }, pino({ level: 'info' }, sink));
      const replica = { reflex, logs };
      replicas.push(replica);
      return replica;
    },
    async reloads() {
      return (await audit.read({})).filter((r) => r.type === 'reload');
    },
  };
}
