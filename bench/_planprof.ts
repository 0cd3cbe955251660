import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { startSimulator } from '../src/simulator/simulator.js';
import { benchRedis } from './stack.js';
const redis = await benchRedis();
const sim = await startSimulator({ instances: 100 });
const dir = '/tmp/planprof';
mkdirSync(`${dir}/rules`, { recursive: true });
writeFileSync(`${dir}/rules/schedules.ts`, `import { defineSchedule } from 'reflex-lxd';\nexport default defineSchedule({ name: 'hourly', every: '1h', tasks: [{ task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M' }, { task: 'retention', keepLast: 3 }, { task: 'prune-expired' }] });\n`);
const extra = (process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean);
for (let i = 0; i < Number(process.env.ROUNDS ?? 3); i++) {
  const t0 = performance.now();
  const r = await new Promise<{status:number|null;stderr:string;stdout:string}>((res) => { const c = spawn('node', [...extra, 'bin/reflex.js', 'housekeeping', 'plan', '--target', `unix://${sim.socketPath}`, '--rules', `${dir}/rules`], { env: { ...process.env, REDIS_URL: redis.url, REFLEX_CACHE_DIR: `${dir}/cache` }, cwd: '/work/main' }); let out='', err=''; c.stdout.on('data', (d) => (out += d)); c.stderr.on('data', (d) => (err += d)); c.on('close', (status) => res({ status, stdout: out, stderr: err })); });
  console.log(Math.round(performance.now() - t0), 'ms', r.status, r.stderr.slice(0, 300), r.stdout.split('\n').length, 'lines');
}
await sim.stop();
await redis.stop();
