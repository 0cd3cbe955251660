import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runReflex } from '../support/reflex-process.js';
import { reflexInProcess } from './in-process.js';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
// Usage errors are rejected before anything connects; this Redis would refuse if one did.
const offline = ['--redis', 'redis://127.0.0.1:1'];

/** A usage error: exit 2 and one line on stderr, nothing on stdout. */
async function expectUsageError(args: string[], message: RegExp): Promise<void> {
  const res = await reflexInProcess(args);
  expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2);
  expect(res.stdout).toBe('');
  expect(res.stderr).toMatch(/^reflex: [^\n]+\n$/);
  expect(res.stderr).toMatch(message);
}

describe('reflex usage errors exit with code 2 and one line', () => {
  it('an unknown command, with a suggestion', () => expectUsageError(['silense', 'list'], /unknown command 'silense'.*silence/));

  it('an unknown option', () => expectUsageError(['silence', 'list', '--frobnicate', ...offline], /unknown option '--frobnicate'/));

  it('a missing argument', () => expectUsageError(['heal', ...offline], /missing required argument 'instance'/));

  it('a missing required option', () =>
    expectUsageError(['silence', 'add', '--instance', 'web-1', '--reason', 'x', ...offline], /required option '--duration <time>' not specified/));

  it('an extra argument', () => expectUsageError(['silence', 'list', 'web-1', ...offline], /too many arguments/));

  it('a duration that does not parse, in every command that takes one', async () => {
    await expectUsageError(['silence', 'add', '--instance', 'web-1', '--reason', 'x', '--duration', 'soon', ...offline], /'soon' is invalid.*1h30m/);
    await expectUsageError(['silence', 'add', '--instance', 'web-1', '--reason', 'x', '--duration', '30', ...offline], /'30' is invalid/);
    await expectUsageError(['heal', 'web-1', '--wait', 'a while', ...offline], /'a while' is invalid/);
    await expectUsageError(['demo', '--duration', '-5s'], /'-5s' is invalid/);
    await expectUsageError(['audit', '--since', 'yesterday', ...offline], /'yesterday' is invalid.*ISO timestamp/);
    await expectUsageError(['audit', '--until', '15', ...offline], /'15' is invalid/);
    await expectUsageError(['replay', '--since', 'soon', ...offline], /'soon' is invalid/);
  });

  it('a value that is not a number', async () => {
    await expectUsageError(['audit', '--last', 'many', ...offline], /'many' is invalid.*whole number/);
    await expectUsageError(['audit', '--last', '0', ...offline], /whole number, at least 1/);
    await expectUsageError(['sim', '--instances', '-1'], /'-1' is invalid/);
    await expectUsageError(['sim', '--seed', '1.5'], /'1.5' is invalid/);
  });

  it('a value outside its choices', async () => {
    await expectUsageError(['sim', '--revision', 'newest'], /'newest' is invalid.*earlier, later/);
    await expectUsageError(['audit', '--type', 'decision,bogus', ...offline], /unknown type "bogus"/);
    await expectUsageError(['silence', 'add', '--filter', 'config.user.tier eq', '--duration', '1h', '--reason', 'x', ...offline], /--filter <expr>/);
  });

  it('conflicting or missing options', async () => {
    await expectUsageError(
      ['silence', 'add', '--all', '--instance', 'web-1', '--duration', '1h', '--reason', 'x', ...offline],
      /'--all' cannot be used with option '--instance <name>'/,
    );
    await expectUsageError(['silence', 'add', '--duration', '1h', '--reason', 'x', ...offline], /give a scope/);
    await expectUsageError(['dlq', 'retry', '7', '--all', ...offline], /a job id or --all, not both/);
    await expectUsageError(['dlq', 'retry', ...offline], /give a job id, or --all/);
    await expectUsageError(['sim', '--tls-cert', '/nonexistent.pem'], /--tls-cert and --tls-key go together/);
  });

  it('no command at all prints the help on stderr', async () => {
    const res = await reflexInProcess([]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Usage: reflex');
  });

  it('--help is not an error', async () => {
    const res = await reflexInProcess(['silence', 'add', '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('--duration <time>');
  });
});

describe('reflex --version', () => {
  it('prints the version of package.json and nothing else', async () => {
    for (const flag of ['--version', '-V']) {
      const res = await reflexInProcess([flag]);
      expect(res.code).toBe(0);
      expect(res.stdout).toBe(`${version}\n`);
    }
  });

  it('finds package.json from the installed command too', async () => {
    const res = await runReflex(['--version']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`${version}\n`);
  });

  it('exits 2 for a usage error from the installed command', async () => {
    const res = await runReflex(['audit', '--since', 'soon']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });
});

/** A user error that is not a usage error: its documented exit code and one line, no stack trace. */
async function expectOneLine(args: string[], code: number, message: RegExp): Promise<void> {
  const res = await reflexInProcess(args);
  expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(code);
  expect(res.stderr, args.join(' ')).toMatch(/^reflex: [^\n]+\n$/);
  expect(res.stderr, args.join(' ')).toMatch(message);
}

describe('reflex failures that are not usage errors', () => {
  it('an export file that cannot be opened: exit 1, one line, before anything is read', async () => {
    const res = await reflexInProcess(['audit', 'export', '--out', '/nonexistent/dir/audit.jsonl', ...offline]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe("reflex: ENOENT: no such file or directory, open '/nonexistent/dir/audit.jsonl'\n");
  });

  it('a file an option names that cannot be read: exit 1, one line naming it; one that is not JSON: a usage error', async () => {
    await expectOneLine(
      ['audit', 'verify', '--file', '/nonexistent/audit.jsonl'],
      1,
      /ENOENT: no such file or directory, open '\/nonexistent\/audit\.jsonl'/,
    );
    await expectOneLine(
      ['rules', 'test', 'restart-on-crash', '--rules', 'rules', '--event', '/nonexistent/event.json', ...offline],
      1,
      /ENOENT: .*'\/nonexistent\/event\.json'/,
    );
    await expectOneLine(['sim', '--tls-cert', '/nonexistent/c.pem', '--tls-key', '/nonexistent/k.pem'], 1, /ENOENT: .*'\/nonexistent\/c\.pem'/);
    const frame = readFileSync('test/fixtures/lxd-5.0.2-events.jsonl', 'utf8')
      .split('\n')
      .find((l) => l.includes('"lifecycle"'))!;
    const dir = mkdtempSync(join(tmpdir(), 'reflex-usage-'));
    try {
      writeFileSync(join(dir, 'event.json'), frame);
      await expectUsageError(
        ['rules', 'test', 'restart-on-crash', '--rules', 'rules', '--event', join(dir, 'event.json'), '--instance', 'README.md', ...offline],
        /--instance README\.md: not JSON/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await expectOneLine(
      ['rules', 'test', 'restart-on-crash', '--rules', 'rules', '--event', 'README.md', ...offline],
      1,
      /^reflex: README\.md: neither a canonical event nor a valid frame/,
    );
  });

  it('a configuration file that cannot be read or parsed: exit 3, one line, in every command that reads one', async () => {
    for (const cmd of [['run'], ['doctor'], ['heal', 'web-1'], ['silence', 'list'], ['dlq', 'list'], ['rules', 'reload']]) {
      await expectOneLine(
        [...cmd, '--config', '/nonexistent/reflex.yaml', ...offline],
        3,
        /cannot read config file \/nonexistent\/reflex\.yaml: ENOENT/,
      );
      await expectOneLine([...cmd, '--config', 'rules', ...offline], 3, /cannot read config file rules: EISDIR/);
      await expectOneLine([...cmd, '--config', 'README.md', ...offline], 3, /config file README\.md is not valid YAML\/JSON|README\.md/);
    }
  });

  it('Redis that cannot be reached: exit 4, one line saying how to fix it, in every command that needs it', async () => {
    const target = ['--target', 'unix:///nonexistent/lxd.sock'];
    for (const cmd of [
      ['audit'],
      ['audit', 'verify'],
      ['audit', 'export'],
      ['silence', 'list'],
      ['silence', 'remove', 'abc'],
      ['alerts'],
      ['quarantine', 'list'],
      ['quarantine', 'release', 'web-1', ...target],
      ['dlq', 'list'],
      ['dlq', 'retry', '7'],
      ['rules', 'reload'],
      ['replay', '--since', '1h', '--rules', 'rules'],
      ['housekeeping', 'plan', ...target],
    ]) {
      await expectOneLine(
        [...cmd, ...offline],
        4,
        /^reflex: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(connect ECONNREFUSED[^)]*\); start one/,
      );
    }
  }, 120_000);
});
