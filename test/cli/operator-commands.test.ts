import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureLxdHttps } from '../conformance/lxd-https.js';
import { describeBed, lxdBed, lxdSocketPath } from '../support/daemon-bed.js';
import { capturedFrameAt } from '../support/fixture-events.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';

function scratch(): string {
  mkdirSync(resolve('.tmp'), { recursive: true });
  return mkdtempSync(join(resolve('.tmp'), 'cli-'));
}

describe('reflex rules', () => {
  it('check passes the bundled rules and reports a type error with file:line:column', async () => {
    expect((await runReflex(['rules', 'check', 'rules'])).stdout).toMatch(/1 rule\(s\) valid: restart-on-crash; 0 probe\(s\); 0 problem/);
    const dir = scratch();
    writeFileSync(
      join(dir, 'typo.ts'),
      `import { defineRule } from 'reflex-lxd';\nexport default defineRule({\n  name: 'typo',\n  on: { kind: 'instance.status', to: ['Stopped'] },\n  actions: [{ action: 'start' }],\n});\n`,
    );
    const res = await runReflex(['rules', 'check', dir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/typo\.ts:4:\d+: Type 'string' is not assignable to type 'number'/);
  }, 60_000);

  it('list shows each rule with its triggers and actions', async () => {
    const res = await runReflex(['rules', 'list', 'rules']);
    expect(res.stdout).toContain('restart-on-crash');
    expect(res.stdout).toMatch(/on: instance.status to 102 intent unrequested; instance.status to 112/);
    expect(res.stdout).toMatch(/do: start/);
  });

  it('test shows the decision and the calls a rule would make for a recorded event, without acting', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'crash.json'), capturedFrameAt('2026-11-22T06:36:43.5'));
    writeFileSync(
      join(dir, 'instance.json'),
      JSON.stringify({ name: 'research-a', status: 'Stopped', status_code: 102, config: { 'user.reflex.autorestart': 'true' } }),
    );
    const res = await runReflex([
      'rules',
      'test',
      'restart-on-crash',
      '--event',
      join(dir, 'crash.json'),
      '--instance',
      join(dir, 'instance.json'),
      '--target',
      'unix:///nonexistent.sock',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/restart-on-crash: matched/);
    expect(res.stdout).toMatch(/would run start on research-a/);
  });
});

describe('reflex silence', () => {
  it('adds, lists and removes a maintenance window', async () => {
    const common = ['--redis', redisUrl(), '--prefix', uniquePrefix('sil')];
    const added = await runReflex(['silence', 'add', '--instance', 'web-1', '--duration', '1h', '--reason', 'kernel upgrade', ...common]);
    expect(added.code, added.stderr).toBe(0);
    const id = /silence (\w+) until/.exec(added.stdout)?.[1];
    expect(id).toBeDefined();
    expect((await runReflex(['silence', 'list', ...common])).stdout).toMatch(new RegExp(`${id}\\s+until .*instance=web-1\\s+\\(kernel upgrade`));
    expect((await runReflex(['silence', 'remove', id!, ...common])).code).toBe(0);
    expect((await runReflex(['silence', 'list', ...common])).stdout).toBe('');
    const none = await runReflex(['silence', 'add', '--duration', '1h', '--reason', 'x', ...common]);
    expect(none.code, 'a missing scope is a usage error').toBe(2);
    expect(none.stderr).toContain('give a scope');
  }, 30_000);
});

describe('reflex doctor', () => {
  it('says what to fix when Redis cannot be reached', async () => {
    const res = await runReflex(['doctor', '--redis', 'redis://127.0.0.1:1', '--target', 'unix:///nonexistent.sock']);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/FAIL redis .*ECONNREFUSED/);
    expect(res.stdout).toMatch(/fix: start redis-server, or point --redis/);
    expect(res.stdout).toMatch(/FAIL target .*nonexistent\.sock/);
  });
});

await describeBed(lxdBed, 'reflex doctor against the real LXD test bed', () => {
  it('passes every check over the unix socket', async () => {
    const res = await runReflex(['doctor', '--redis', redisUrl(), '--target', `unix://${lxdSocketPath()}`, '--rules', 'rules']);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/ok\s+target\s+unix:\/\/.*lxd 5\.0\.\d+, \d+ API extensions, client trusted/);
    expect(res.stdout).toMatch(/ok\s+events/);
    expect(res.stdout).toMatch(/ok\s+rules\s+1 rule/);
  }, 60_000);

  it('fails on a wrong TLS pin and says what to fix', async () => {
    const origin = await ensureLxdHttps();
    const res = await runReflex(['doctor', '--redis', redisUrl(), '--target', origin, '--server-fingerprint', '0'.repeat(64), '--rules', 'rules']);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/FAIL target\s+TLS_PIN_MISMATCH: .*0{16}/);
    expect(res.stdout).toMatch(/fix: the server certificate changed or the pin is wrong/);
  }, 60_000);
});
