import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ReflexError } from '../errors/reflex-error.js';
import type { ConfigInput } from './config.js';

/** The configuration file read when none is named and it exists (the system-wide install, docs/install-debian.md). */
export const DEFAULT_CONFIG_FILE = '/etc/reflex/config.yaml';
/** The rules folder of an installed service (docs/install-debian.md). */
export const SERVICE_RULES_DIR = '/etc/reflex/rules';

/**
 * The rules folder when nothing names one (`--rules`, REFLEX_RULES, `rulesDir`): ./rules when the
 * working directory has one (a checkout, a project), else /etc/reflex/rules (a service). Whichever
 * it is, a folder that does not exist fails `reflex run` at start-up, naming it.
 */
export function defaultRulesDir(serviceDir: string = SERVICE_RULES_DIR): string {
  return !existsSync('rules') && existsSync(serviceDir) ? serviceDir : './rules';
}

/**
 * Which configuration file to read: the one named (`--config`, then `REFLEX_CONFIG`), else
 * `defaultFile` when it exists, else none. A named file that does not exist is still returned, so
 * that reading it fails loudly instead of silently falling back to defaults.
 */
export function configFileToRead(named: string | undefined, defaultFile: string = DEFAULT_CONFIG_FILE): string | undefined {
  if (named) return named;
  return existsSync(defaultFile) ? defaultFile : undefined;
}

/**
 * Reads a configuration file (YAML or JSON; same field names as the config schema). Secrets
 * belong in the environment, not in this file.
 */
export function readConfigFile(path: string): ConfigInput {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ReflexError('CONFIG_INVALID', `cannot read config file ${path}: ${(err as Error).message}`, { cause: err });
  }
  let value: unknown;
  try {
    value = parseYaml(text, { logLevel: 'error' });
  } catch (err) {
    // The parser's message quotes the offending line, which may hold a secret: say where, not what.
    const e = err as { code?: string; linePos?: { line: number; col: number }[] };
    const where = e.linePos?.[0] ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
    throw new ReflexError('CONFIG_INVALID', `config file ${path} is not valid YAML/JSON: ${e.code ?? 'syntax error'}${where}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new ReflexError(
      'CONFIG_INVALID',
      `config file ${path}: expected a mapping of settings, got ${Array.isArray(value) ? 'a list' : typeof value}`,
    );
  return value as ConfigInput;
}
