import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeBed, lxdBed, lxdSocketPath, STATUS_RUNNING, STATUS_STOPPED } from '../support/daemon-bed.js';
import { redisUrl, reflexArgs, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { removedAfterAll } from '../support/temp-dir.js';

const run = promisify(execFile);
const checkout = resolve('.');
const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

/**
 * The package as a user gets it: `npm pack`, then `npm install -g` of the tarball into a fresh
 * prefix, then `reflex` used from a folder outside the checkout, with rules in a folder of their
 * own that import from the package by name.
 */
const work = mkdtempSync(join(tmpdir(), 'reflex-install-'));
const prefix = join(work, 'prefix');
const reflexBin = join(prefix, 'bin', 'reflex');
const outside = { bin: reflexBin, cwd: work };
// Nothing of the checkout may leak in through the environment.
const env = { NODE_PATH: '', REFLEX_RULES: '', REFLEX_CONFIG: '' };

beforeAll(async () => {
  const { stdout } = await run('npm', ['pack', '--pack-destination', work, '--silent'], { cwd: checkout, maxBuffer: 16 << 20 });
  const tarball = join(work, stdout.trim().split('\n').pop()!);
  await run('npm', ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    cwd: work,
    maxBuffer: 16 << 20,
    timeout: 300_000,
  });
}, 360_000);

removedAfterAll(work);

describe('the installed package, used from outside the checkout', () => {
  it('ships compiled code, its declarations and no TypeScript sources', () => {
    const pkg = join(prefix, 'lib', 'node_modules', 'reflex-lxd');
    const top = readdirSync(pkg);
    expect(top).toEqual(expect.arrayContaining(['bin', 'dist', 'rules', 'LICENSE', 'README.md', 'package.json']));
    expect(top).not.toContain('src');
    expect(top).not.toContain('test');
    expect(readdirSync(join(pkg, 'dist'))).toEqual(expect.arrayContaining(['index.js', 'index.d.ts']));
  });

  it("the installed simulator's shell has the project's patch (applied by the package's postinstall)", async () => {
    const probe = join(prefix, 'lib', 'node_modules', 'reflex-lxd', 'dist', 'simulator', 'guest', 'shell-patch.js');
    const script = `import(${JSON.stringify(probe)}).then((m) => m.assertShellPatched()).then(() => console.log('patched'))`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: work });
    expect(stdout.trim()).toBe('patched');
  });

  it('`reflex --version` prints the package version', async () => {
    const { stdout } = await run(reflexBin, ['--version'], { cwd: work });
    expect(stdout.trim()).toBe(version);
  });

  it('`reflex rules init` then `reflex rules check` pass for a folder that imports from reflex-lxd', async () => {
    const dir = join(work, 'my-rules');
    const init = await runReflex(['rules', 'init', dir], env, outside);
    expect(init.code, init.stderr).toBe(0);
    expect(readFileSync(join(dir, 'restart-on-crash.ts'), 'utf8')).toContain("from 'reflex-lxd'");
    writeFileSync(
      join(dir, 'notify-on-error.ts'),
      `import { StatusCode, defineRule, type RuleContext } from 'reflex-lxd';
const opted = (ctx: RuleContext): boolean => ctx.instance?.config['user.team'] === 'web';
export default defineRule({ name: 'snapshot-on-error', on: { kind: 'instance.status', to: [StatusCode.Error] }, when: opted, actions: [{ action: 'snapshot' }] });
`,
    );
    const check = await runReflex(['rules', 'check', dir, '--json'], env, outside);
    expect(check.code, check.stderr + check.stdout).toBe(0);
    expect(JSON.parse(check.stdout)).toEqual({ rules: ['snapshot-on-error', 'restart-on-crash'], probes: [], problems: [] }); // file order
  });

  it('`reflex rules check` type-checks against the shipped declarations: a wrong field is file:line:column', async () => {
    const dir = join(work, 'bad-rules');
    await runReflex(['rules', 'init', dir], env, outside);
    writeFileSync(
      join(dir, 'typo.ts'),
      `import { defineRule } from 'reflex-lxd';\nexport default defineRule({\n  name: 'typo',\n  on: { kind: 'instance.status' },\n  actions: [{ action: 'start' }],\n  crashloop: {},\n});\n`,
    );
    const check = await runReflex(['rules', 'check', dir], env, outside);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(/typo\.ts:6:3: .*'crashloop' does not exist/);
  });

  it('`reflex run --rules /nonexistent` exits non-zero at once with a one-line error', async () => {
    const r = await runReflex(['run', '--rules', join(work, 'nonexistent'), '--redis', redisUrl(), '--http-port', '0'], env, outside);
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n')).toEqual([
      `reflex: rules folder ${join(work, 'nonexistent')} does not exist (give --rules DIR, REFLEX_RULES or rulesDir in the config file)`,
    ]);
  });

  // "At once": it exits by itself instead of waiting for the target (that needs --wait-for-target); how
  // fast is not asserted here (a timed assertion fails on a loaded CI).
  it('`reflex run` with an unreachable --target exits non-zero at once with a one-line error', async () => {
    // The rules' type-check (seconds on a loaded machine) is not what this measures.
    const r = await runReflex(
      [
        'run',
        '--rules',
        join(work, 'my-rules'),
        '--target',
        `unix://${join(work, 'no-daemon.sock')}`,
        '--redis',
        redisUrl(),
        '--http-port',
        '0',
        '--no-typecheck',
      ],
      env,
      outside,
    );
    expect(r.code).toBe(4);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^reflex: target unix:\/\/.*no-daemon\.sock does not answer: .*--wait-for-target/);
  });

  it('`reflex run` with a rules folder where nothing loads exits non-zero, naming the broken file and line', async () => {
    const dir = join(work, 'only-broken');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'broken.ts'),
      `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'broken', on: { kind: 'instance.status' }, actions: [{ action: 'start' }] ;\n`,
    );
    const r = await runReflex(['run', '--rules', dir, '--redis', redisUrl(), '--http-port', '0'], env, outside);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`1 problem(s) in the rules of ${dir}; not starting:\n${join(dir, 'broken.ts')}:2:`);
  });
});

await describeBed(lxdBed, 'the installed package heals a crashed container on the real LXD', () => {
  let reflex: ReflexProcess;
  let name: string | undefined;

  beforeAll(async () => {
    reflex = startReflexProcess(
      ['run', '--rules', join(work, 'my-rules'), ...reflexArgs(uniquePrefix('pkg'), `unix://${lxdSocketPath()}`), '--http-port', '0'],
      env,
      outside,
    );
    await reflex.waitForLog('reflex running');
    await reflex.waitForLog('event stream connected');
  }, 60_000);

  afterAll(async () => {
    await reflex?.stop();
    if (name) await lxdBed.remove(name);
  });

  it('restarts an opted-in container whose init was killed, with the rules from a folder outside the checkout', async () => {
    expect(reflex.logs.find((l) => String(l.msg).startsWith('loaded 2 rule(s)'))).toBeDefined();
    name = await lxdBed.launch({ config: { 'user.reflex.autorestart': 'true' } });
    await lxdBed.crash(name);
    await lxdBed.waitForStatus(name, STATUS_STOPPED, 5_000);
    await lxdBed.waitForStatus(name, STATUS_RUNNING, 20_000);
  }, 90_000);
});
