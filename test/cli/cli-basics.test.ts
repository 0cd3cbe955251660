import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runReflex } from '../support/reflex-process.js';

describe('the reflex command', () => {
  it('says what to fix, without a stack trace, when Redis cannot be reached (at once with redisStartupWaitMs 0)', async () => {
    // --wait-for-target: an unreachable target alone does not stop the start, so Redis is what fails.
    // The start-up wait for Redis (15 s by default, test/redis/start-waits-for-redis.test.ts) is off.
    const res = await runReflex(
      ['run', '--wait-for-target', '--target', 'unix:///nonexistent.sock', '--redis', 'redis://127.0.0.1:1', '--rules', 'rules', '--http-port', '0'],
      { REFLEX_REDIS_STARTUP_WAIT_MS: '0' },
    );
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('cannot reach Redis at redis://127.0.0.1:1');
    expect(res.stderr).toContain('REDIS_URL');
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(res.stdout + res.stderr, 'no wait for Redis').not.toContain('Redis is not reachable yet');
  });

  it('prints the effective configuration, flags over environment', async () => {
    const res = await runReflex(['run', '--print-config', '--target', 'unix:///x.sock', '--role', 'worker', '--http-port', '9999'], {
      REDIS_URL: 'redis://10.1.2.3:6379',
      REFLEX_ROLE: 'subscriber',
      REFLEX_HTTP_PORT: '9000',
    });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      target: 'unix:///x.sock',
      redisUrl: 'redis://10.1.2.3:6379',
      role: 'worker',
      rulesDir: './rules',
      httpHost: '127.0.0.1',
      httpPort: 9999,
    });
  });

  it('redacts secrets in the printed configuration', async () => {
    const res = await runReflex(['run', '--print-config', '--target', 'unix:///x.sock', '--client-key', '/etc/reflex/client.key'], {
      REDIS_URL: 'redis://:hunter2-secret@10.1.2.3:6379',
      REFLEX_DASHBOARD_TOKEN: 'a-dashboard-token-of-32-characters',
    });
    expect(res.code).toBe(0);
    expect(res.stdout).not.toContain('hunter2');
    expect(res.stdout).not.toContain('a-dashboard-token');
    expect(JSON.parse(res.stdout)).toMatchObject({
      dashboardToken: '[redacted]',
      redisUrl: 'redis://[redacted]@10.1.2.3:6379',
      clientKey: '/etc/reflex/client.key',
    });
  });

  it('names the field, the value and what was expected for an invalid setting', async () => {
    const res = await runReflex(['run', '--print-config'], { REFLEX_ROLE: 'boss' });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/role: .*"all".*"subscriber".*"worker".*\(got "boss"\)/);
    // The same mistake as a flag is a usage error, named by the command line parser.
    const flag = await runReflex(['run', '--print-config', '--role', 'boss']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("argument 'boss' is invalid. Allowed choices are all, subscriber, worker, scheduler.");
  });

  it('refuses a target that is neither a unix socket nor https', async () => {
    const res = await runReflex(['run', '--target', 'ftp://x', '--redis', 'redis://127.0.0.1:1', '--http-port', '0']);
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('neither unix:///path/to/socket nor https://host:port');
  });

  it('takes a targets list from the config file, naming the entry and field of each mistake', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-targets-'));
    const file = (name: string, value: unknown) => (writeFileSync(join(dir, name), JSON.stringify(value)), join(dir, name));
    try {
      const good = file('good.json', {
        targets: [
          { name: 'east', target: 'unix:///east.sock' },
          { name: 'west', remote: 'west', project: 'web' },
        ],
      });
      const shown = await runReflex(['run', '--print-config', '--config', good]);
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout).targets).toEqual([
        { name: 'east', target: 'unix:///east.sock' },
        { name: 'west', remote: 'west', project: 'web' },
      ]);

      const both = await runReflex(['run', '--print-config', '--config', good, '--target', 'unix:///x.sock']);
      expect(both.code).toBe(3);
      expect(both.stderr).toMatch(/target: not allowed with a targets list.*\(got "unix:\/\/\/x.sock"\)/);

      const bad = file('bad.json', { targets: [{ name: 'east', target: 'unix:///east.sock' }, { name: 'east' }] });
      const refused = await runReflex(['run', '--print-config', '--config', bad]);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('targets.1.target: give target (unix:///… or https://…), addresses or remote (got nothing)');
      expect(refused.stderr).toContain('targets.1.name: "east" already names targets.0');

      /** `reflex run` with target a on unix:///one.sock and target b on `second`, its config written to `name`. */
      const runBeside = (name: string, second: string) =>
        runReflex([
          'run',
          '--config',
          file(name, {
            targets: [
              { name: 'a', target: 'unix:///one.sock' },
              { name: 'b', target: second },
            ],
          }),
          '--redis',
          'redis://127.0.0.1:1',
          // Not the default port: another test may hold it (the demo's, the chaos harness's).
          '--http-port',
          '0',
        ]);
      const relative = await runBeside('same.json', 'unix:one.sock');
      expect(relative.code).toBe(3);
      expect(relative.stderr).toContain('targets.1.target (b): target "unix:one.sock": a unix socket path must be absolute');
      const dup = await runBeside('twice.json', '/one.sock');
      expect(dup.code).toBe(3);
      expect(dup.stderr).toContain('targets.1.target (b): the same server as targets.0 (unix:///one.sock)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
