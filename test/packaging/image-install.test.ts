import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateRedis, type PrivateRedis } from '../../src/redis/private-redis.js';
import { describeBed, lxdBed, lxdSocketPath } from '../support/daemon-bed.js';
import { uniquePrefix } from '../support/redis.js';
import { freePort } from '../support/free-port.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { removedAfterAll } from '../support/temp-dir.js';
import { until } from '../support/wait.js';

/**
 * The container image, without a Docker engine: the tracked files are copied to a clean folder (as
 * the build context), scripts/image-install.sh — the script the Dockerfile runs — installs from
 * them, and that installation, run with the image's ENV, entrypoint and HEALTHCHECK as the
 * Dockerfile declares them, must pass `reflex doctor` against the real LXD and answer the health
 * check once `reflex run` is ready.
 */
const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const dockerfile = readFileSync(join(repo, 'Dockerfile'), 'utf8');
/** The runtime stage: everything after the last FROM. */
const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

const work = mkdtempSync(join(tmpdir(), 'reflex-image-'));
const context = join(work, 'src');
/** Stands for the image's /app. */
const app = join(work, 'app');

/** The runtime stage's ENV, with /app paths moved to the test's installation. */
function imageEnv(): Record<string, string> {
  const pairs = [...runtime.matchAll(/^ENV (.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/));
  return Object.fromEntries(
    pairs.map((kv) => {
      const [key, value = ''] = kv.split(/=(.*)/s);
      return [key!, value.replace(/^\/app(?=\/|$)/, app)];
    }),
  );
}

/** The HEALTHCHECK's exec form, as the Dockerfile declares it. */
function healthcheckCommand(): string[] {
  const m = /^HEALTHCHECK\b[^\n]*\\\n\s*CMD (\[.*\])$/m.exec(runtime) ?? /^HEALTHCHECK\b.*? CMD (\[.*\])$/m.exec(runtime);
  if (!m) throw new Error('no HEALTHCHECK … CMD [exec form] in the Dockerfile');
  return JSON.parse(m[1]!) as string[];
}

/** The process environment without the caller's Reflex settings, plus `extra`. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => v !== undefined && !k.startsWith('REFLEX_') && k !== 'REDIS_URL'),
  ) as Record<string, string>;
  return { ...env, ...extra };
}

/** Runs a command to its end; never throws, so the output reaches the assertion message. */
async function exec(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), out });
    });
  });
}

let installed: { code: number; out: string; seconds: number } | undefined;
let redis: PrivateRedis | undefined;

const needed = (await lxdBed.reachable()) || lxdBed.required();

removedAfterAll(work);
afterAll(async () => {
  await redis?.stop();
});

(needed ? describe : describe.skip)('the container image installs with scripts/image-install.sh', () => {
  beforeAll(async () => {
    mkdirSync(context);
    // The build context as `docker build .` sees it: the working tree, tracked files and new ones,
    // without what git ignores (node_modules, dist, .tmp: the same as .dockerignore drops).
    const files = (await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, maxBuffer: 64 << 20 })).stdout
      .split('\0')
      .filter((f) => f && existsSync(join(repo, f)));
    writeFileSync(join(work, 'files'), files.join('\0'));
    await run('tar', ['--null', '-T', join(work, 'files'), '-cf', join(work, 'context.tar')], { cwd: repo });
    await run('tar', ['-xf', join(work, 'context.tar'), '-C', context]);
    const started = Date.now();
    // The same step as the Dockerfile's RUN, from the copy; npm uses its cache first (CI ran npm ci).
    const res = await exec('bash', [join(context, 'scripts/image-install.sh'), context, app], {
      env: cleanEnv({ npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' }),
      // Two npm ci and a full tsc build: about a minute alone, minutes while CI's other suites share
      // the two cores (170 s was not enough at load 15). The bound only limits how long a failure takes.
      timeoutMs: 590_000,
    });
    installed = { ...res, seconds: (Date.now() - started) / 1000 };
  }, 600_000);

  it('is the step the Dockerfile runs', () => {
    expect(dockerfile).toMatch(/^FROM node:24-bookworm-slim AS build$/m);
    expect(dockerfile).toMatch(/^RUN (--mount=\S+ )*bash scripts\/image-install\.sh \/src \/app$/m);
    expect(runtime).toMatch(/^COPY --from=build \/app \/app$/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["node", "\/app\/bin\/reflex\.js"\]$/m);
  });

  it('holds the compiled CLI, the bundled rules and production dependencies only', () => {
    expect(installed?.code, installed?.out).toBe(0);
    for (const f of [
      'bin/reflex.js',
      'dist/cli/entry.js',
      'dist/index.d.ts',
      'rules/restart-on-crash.ts',
      'node_modules/bullmq/package.json',
      'node_modules/typescript/package.json',
      'node_modules/@types/node/package.json',
    ]) {
      expect(existsSync(join(app, f)), f).toBe(true);
    }
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
    const devOnly = Object.keys(pkg.devDependencies ?? {}).filter((d) => existsSync(join(app, 'node_modules', d)));
    expect(devOnly, 'dev dependencies in the image').toEqual([]);
    expect(existsSync(join(app, 'src')), 'TypeScript sources in the image').toBe(false);
  });
});

await describeBed(lxdBed, "the image's installation against the real LXD", () => {
  let worker: ReflexProcess | undefined;

  beforeAll(async () => {
    redis = await startPrivateRedis({ appendonly: true });
  });

  afterAll(async () => {
    await worker?.stop();
  });

  it('passes reflex doctor: Redis ≥ 6.2 with noeviction, the socket, the events stream, the bundled rules', async () => {
    expect(installed?.code, installed?.out ?? 'not installed').toBe(0);
    const res = await exec(process.execPath, [join(app, 'bin/reflex.js'), 'doctor', '--target', `unix://${lxdSocketPath()}`], {
      cwd: app,
      env: cleanEnv({ ...imageEnv(), REDIS_URL: redis!.url }),
    });
    expect(res.code, res.out).toBe(0);
    expect(res.out).toMatch(/^ok\s+redis\s+reachable at redis:\/\/127\.0\.0\.1:\d+, Redis \d+\.\d+\.\d+, AOF on$/m);
    expect(res.out).toMatch(/^ok\s+redis\s+maxmemory-policy noeviction$/m);
    expect(res.out).toMatch(/^ok\s+target\s+unix:\/\/.*, client trusted$/m);
    expect(res.out).toMatch(/^ok\s+events\s+events WebSocket opens$/m);
    expect(res.out).toMatch(/^ok\s+rules\s+1 rule\(s\) load and type-check: restart-on-crash$/m);
  }, 60_000);

  it("answers the image's HEALTHCHECK once reflex run is ready, and logs the config file it read", async () => {
    expect(installed?.code, installed?.out ?? 'not installed').toBe(0);
    const port = await freePort();
    const configFile = join(work, 'config.yaml');
    writeFileSync(configFile, `target: unix://${lxdSocketPath()}\nredisUrl: ${redis!.url}\nprefix: ${uniquePrefix('image')}\n`);
    // The port as `docker run -e REFLEX_HTTP_PORT` would move it (9464 may be taken on a shared machine).
    const env = cleanEnv({ ...imageEnv(), REFLEX_HTTP_PORT: String(port), REFLEX_CONFIG: configFile, REFLEX_LOG_LEVEL: 'info' });
    const [cmd, ...args] = healthcheckCommand();
    expect(cmd).toBe('node');
    const health = () => exec(process.execPath, args, { env, timeoutMs: 10_000 });

    expect((await health()).code, 'healthy before anything listens').toBe(1);
    // As the image's ENTRYPOINT runs it: from /app, with the image's environment only.
    worker = startReflexProcess(['run'], env, { bin: join(app, 'bin/reflex.js'), cwd: app, cleanEnv: true });
    expect((await worker.waitForLog(`configuration read from ${configFile}`, 30_000)).configFile).toBe(configFile);
    await worker.waitForLog('reflex running', 30_000);
    let last = await health();
    await until('the healthcheck to pass', async () => (last = await health()).code === 0, 30_000, 500).catch(() => undefined);
    expect(last.code, last.out).toBe(0);
    expect(await worker.stop()).toBe(0);
    worker = undefined;
  }, 90_000);
});
