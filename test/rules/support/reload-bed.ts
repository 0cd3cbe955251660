import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { AuditLog, type StoredAuditRecord } from '../../../src/audit/audit-log.js';
import { startReflex, type ReflexHandle } from '../../../src/app/start-reflex.js';
import { parseConfig, type ConfigInput } from '../../../src/config/config.js';
import { keySpace } from '../../../src/redis/key-space.js';
import type { RedisConnection } from '../../../src/redis/connect.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulator/simulator.js';
import { redisClient, redisUrl, uniquePrefix } from '../../support/redis.js';

/** A rules folder written for a test; `write` replaces its files (a file mapped to undefined is deleted). */
export interface RulesFolder {
  dir: string;
  write(files: Record<string, string | undefined>): void;
}

export function rulesFolder(files: Record<string, string>): RulesFolder {
  mkdirSync(resolve('.tmp'), { recursive: true });
  const dir = mkdtempSync(join(resolve('.tmp'), 'reload-rules-'));
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
export interface ReloadBed {
  sim: RunningSimulator;
  prefix: string;
  redis: RedisConnection;
  audit: AuditLog;
  replicas: { reflex: ReflexHandle; logs: Record<string, unknown>[] }[];
  start(dir: string, config?: Partial<ConfigInput>): Promise<{ reflex: ReflexHandle; logs: Record<string, unknown>[] }>;
  /** The reload records of the audit log. */
  reloads(): Promise<StoredAuditRecord[]>;
  stop(): Promise<void>;
}

export async function startReloadBed(): Promise<ReloadBed> {
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopMs: 100, stopHookMs: 100, taskMs: 20 } });
  const prefix = uniquePrefix('reload');
  const redis = redisClient();
  const audit = new AuditLog(redis, keySpace(prefix).audit);
  const replicas: ReloadBed['replicas'] = [];
  return {
    sim,
    prefix,
    redis,
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
      const reflex = await startReflex(
        parseConfig({ target: `unix://${sim.socketPath}`, redisUrl: redisUrl(), rulesDir: dir, prefix, resyncIntervalMs: 0, resyncGraceMs: 100, leaseTtlMs: 600, actionAttempts: 3, logLevel: 'info', httpPort: 0, ...config }),
        pino({ level: 'info' }, sink),
      );
      const replica = { reflex, logs };
      replicas.push(replica);
      return replica;
    },
    async reloads() {
      return (await audit.read({})).filter((r) => r.type === 'reload');
    },
    async stop() {
      for (const r of replicas) await r.reflex.stop();
      redis.disconnect();
      await sim.stop();
    },
  };
}
