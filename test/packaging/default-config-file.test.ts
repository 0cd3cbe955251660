import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { configFileOf, resolveConfig } from '../../src/cli/config-options.js';
import { defaultRulesDir } from '../../src/config/config-file.js';

/**
 * A system-wide install keeps its settings in /etc/reflex/config.yaml: commands read it when no
 * --config or REFLEX_CONFIG names another file. The default path is a parameter here so the test
 * does not touch /etc of a machine other suites share.
 */
const dir = mkdtempSync(join(tmpdir(), 'reflex-default-config-'));
const systemFile = join(dir, 'etc-reflex-config.yaml');
const namedFile = join(dir, 'named.yaml');
writeFileSync(systemFile, 'prefix: from-system-file\nresyncIntervalMs: 1234\n');
writeFileSync(namedFile, 'prefix: from-named-file\n');
const savedEnv = process.env.REFLEX_CONFIG;

afterEach(() => {
  if (savedEnv === undefined) delete process.env.REFLEX_CONFIG;
  else process.env.REFLEX_CONFIG = savedEnv;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the default configuration file', () => {
  it('is read when it exists and no file is named', () => {
    delete process.env.REFLEX_CONFIG;
    expect(configFileOf({}, systemFile)).toBe(systemFile);
    expect(resolveConfig({}, {}, systemFile)).toMatchObject({ prefix: 'from-system-file', resyncIntervalMs: 1234 });
  });

  it('is not needed: without it the defaults apply and no file is reported', () => {
    delete process.env.REFLEX_CONFIG;
    const absent = join(dir, 'absent.yaml');
    expect(configFileOf({}, absent)).toBeUndefined();
    expect(resolveConfig({}, {}, absent).prefix).toBe('reflex');
  });

  it('gives way to --config, then to REFLEX_CONFIG', () => {
    delete process.env.REFLEX_CONFIG;
    expect(configFileOf({ config: namedFile }, systemFile)).toBe(namedFile);
    expect(resolveConfig({ config: namedFile }, {}, systemFile).prefix).toBe('from-named-file');
    process.env.REFLEX_CONFIG = namedFile;
    expect(configFileOf({}, systemFile)).toBe(namedFile);
    expect(resolveConfig({}, {}, systemFile)).toMatchObject({ prefix: 'from-named-file', resyncIntervalMs: 30_000 });
  });

  it('never replaces a named file that is missing: that is an error naming it', () => {
    delete process.env.REFLEX_CONFIG;
    const missing = join(dir, 'typo.yaml');
    expect(() => resolveConfig({ config: missing }, {}, systemFile)).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining(`cannot read config file ${missing}`) }),
    );
  });
});

describe('the rules folder', () => {
  it('given as a relative path in a config file is relative to that file, wherever reflex runs from', () => {
    delete process.env.REFLEX_CONFIG;
    const file = join(dir, 'with-rules.yaml');
    writeFileSync(file, 'rulesDir: my-rules\n');
    expect(resolveConfig({ config: file }).rulesDir).toBe(join(dir, 'my-rules'));
    // A flag or the environment is relative to the working directory, as paths on a command line are.
    expect(resolveConfig({ config: file, rules: 'here' }).rulesDir).toBe('here');
  });

  it('defaults to ./rules where there is one, else to the service folder when it exists', () => {
    expect(defaultRulesDir(join(dir, 'absent-service-rules'))).toBe('./rules'); // this checkout has ./rules
    const elsewhere = mkdtempSync(join(tmpdir(), 'reflex-cwd-'));
    const cwd = process.cwd();
    try {
      process.chdir(elsewhere);
      expect(defaultRulesDir(join(dir, 'absent-service-rules'))).toBe('./rules');
      expect(defaultRulesDir(dir)).toBe(dir);
    } finally {
      process.chdir(cwd);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
