import { readFileSync } from 'node:fs';
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

  it('a missing required option', () => expectUsageError(['silence', 'add', '--instance', 'web-1', '--reason', 'x', ...offline], /required option '--duration <time>' not specified/));

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
    await expectUsageError(['silence', 'add', '--all', '--instance', 'web-1', '--duration', '1h', '--reason', 'x', ...offline], /'--all' cannot be used with option '--instance <name>'/);
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

describe('reflex failures that are not usage errors', () => {
  it('an export file that cannot be opened: exit 1, one line, before anything is read', async () => {
    const res = await reflexInProcess(['audit', 'export', '--out', '/nonexistent/dir/audit.jsonl', ...offline]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe("reflex: Error: ENOENT: no such file or directory, open '/nonexistent/dir/audit.jsonl'\n");
  });
});
