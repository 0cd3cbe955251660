import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useColour } from '../../src/log/colour.js';
import { redisUrl } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';
import { reflexInProcess } from './in-process.js';

const ESC = '\x1b';
const bin = fileURLToPath(new URL('../../bin/reflex.js', import.meta.url));
// util-linux `script` runs a command on a pseudo-terminal (absent on some systems: that test is skipped there).
const scriptBin = 'script';
const hasScript = spawnSync(scriptBin, ['--version']).status === 0;

describe('colours', () => {
  it('follow NO_COLOR, then FORCE_COLOR, then whether the output is a terminal', () => {
    const tty = { isTTY: true };
    const pipe = { isTTY: false };
    expect(useColour(tty, {})).toBe(true);
    expect(useColour(pipe, {})).toBe(false);
    expect(useColour(tty, { NO_COLOR: '1' })).toBe(false);
    expect(useColour(tty, { NO_COLOR: '' }), 'an empty NO_COLOR does not count').toBe(true);
    expect(useColour(pipe, { FORCE_COLOR: '1' })).toBe(true);
    expect(useColour(pipe, { FORCE_COLOR: '' })).toBe(true);
    expect(useColour(tty, { FORCE_COLOR: '0' })).toBe(true);
    expect(useColour(pipe, { FORCE_COLOR: '0' })).toBe(false);
    expect(useColour(pipe, { FORCE_COLOR: 'false' })).toBe(false);
    expect(useColour(pipe, { NO_COLOR: '1', FORCE_COLOR: '1' }), 'NO_COLOR wins').toBe(false);
  });

  it('mark doctor results only when allowed', async () => {
    const args = ['doctor', '--redis', 'redis://127.0.0.1:1', '--target', 'unix:///nonexistent.sock', '--rules', 'rules'];
    const forced = await reflexInProcess(args, { FORCE_COLOR: '1', NO_COLOR: '' });
    expect(forced.stdout).toContain(`${ESC}[31mFAIL${ESC}[0m redis`);
    const plain = await reflexInProcess(args, { FORCE_COLOR: '1', NO_COLOR: '1' });
    expect(plain.stdout).toMatch(/^FAIL redis /m);
    expect(plain.stdout + plain.stderr).not.toContain(ESC);
  }, 60_000);

  it('leave the demo feed plain under NO_COLOR', async () => {
    const demo = (env: Record<string, string>) => runReflex(['demo', '--duration', '4s'], { REDIS_URL: redisUrl(), ...env });
    const [forced, plain] = await Promise.all([demo({ FORCE_COLOR: '1', NO_COLOR: '' }), demo({ NO_COLOR: '1' })]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout, 'coloured when forced: the check below can fail').toMatch(/\x1b\[\d+mEVENT/);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/ EVENT {7}/);
    expect(plain.stdout).not.toContain(ESC);
  }, 60_000);

  it.skipIf(!hasScript)(
    'leave pretty logs on a terminal plain under NO_COLOR',
    async () => {
      // `script` gives the command a terminal, where the logger is pino-pretty. The run waits for its
      // target and then gives up on an unreachable Redis (about 18 s); its first records are enough.
      const onTerminal = (env: Record<string, string>) =>
        new Promise<string>((resolve, reject) => {
          const cmd = `'${process.execPath}' '${bin}' run --wait-for-target --target unix:///nonexistent.sock --redis redis://127.0.0.1:1 --rules rules --http-port 0`;
          const base = { ...process.env };
          delete base.FORCE_COLOR;
          delete base.NO_COLOR;
          const child = spawn(scriptBin, ['-qec', cmd, '/dev/null'], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
          let out = '';
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            // Two records written: the level and message of each are on screen, in colour or not.
            if ((out.match(/\(reflex\):/g) ?? []).length >= 2) child.kill('SIGTERM');
          });
          const timer = setTimeout(() => (child.kill('SIGTERM'), reject(new Error(`no exit within 30 s: ${out}`))), 30_000);
          child.once('exit', () => (clearTimeout(timer), resolve(out)));
        });
      const [coloured, plain] = await Promise.all([onTerminal({}), onTerminal({ NO_COLOR: '1' })]);
      expect(coloured).toContain('(reflex):');
      expect(coloured, 'coloured on a terminal: the check below can fail').toContain(ESC);
      expect(plain).toContain('(reflex):');
      expect(plain).not.toContain(ESC);
    },
    60_000,
  );
});
