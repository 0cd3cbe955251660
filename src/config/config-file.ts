import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { ReflexError } from '../errors/reflex-error.js';
import { valueDepth } from '../input/json-bounds.js';
import type { ConfigInput } from './config.js';

/** The configuration file read when none is named and it exists (the system-wide install, docs/install-debian.md). */
export const DEFAULT_CONFIG_FILE = '/etc/reflex/config.yaml';
/** Largest configuration file read: 1 MiB (a full one is a few kilobytes). */
const MAX_CONFIG_FILE_BYTES = 1024 * 1024;
/** Deepest nesting of a configuration file (the schema's is 5). */
const MAX_CONFIG_DEPTH = 32;

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

/** The YAML parser, loaded on the first file read: most commands read none, and loading it costs ~35 ms of CPU at start-up. */
function parseYaml(text: string, options: Yaml.ParseOptions & Yaml.DocumentOptions & Yaml.SchemaOptions & Yaml.ToJSOptions): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof Yaml).parse(text, options);
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
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_CONFIG_FILE_BYTES)
    throw new ReflexError('CONFIG_INVALID', `config file ${path} is ${bytes} bytes, more than ${MAX_CONFIG_FILE_BYTES}: not a configuration`);
  // The YAML parser recurses, and flow collections some thousands deep end the process (out of
  // memory building its error), not in an error: bracket depth is measured first on the text.
  // Block nesting needs a line per level and is caught by the parser within the size bound.
  if (bracketDepth(text, MAX_CONFIG_DEPTH) > MAX_CONFIG_DEPTH)
    throw new ReflexError('CONFIG_INVALID', `config file ${path}: [ and { nested deeper than ${MAX_CONFIG_DEPTH} levels`);
  let value: unknown;
  try {
    // An alias expands to a copy of its node: a few dozen nested ones make billions of nodes, so they are counted.
    value = parseYaml(text, { logLevel: 'error', maxAliasCount: 100 });
  } catch (err) {
    // The parser's message quotes the offending line, which may hold a secret: say where, not what.
    const e = err as { code?: string; linePos?: { line: number; col: number }[] };
    const where = e.linePos?.[0] ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
    throw new ReflexError('CONFIG_INVALID', `config file ${path} is not valid YAML/JSON: ${e.code ?? 'syntax error'}${where}`);
  }
  // The schema and --print-config walk the value recursively: it is bounded first, without recursion.
  if (valueDepth(value, MAX_CONFIG_DEPTH) > MAX_CONFIG_DEPTH)
    throw new ReflexError('CONFIG_INVALID', `config file ${path} is nested deeper than ${MAX_CONFIG_DEPTH} levels (or an alias refers to itself)`);
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new ReflexError(
      'CONFIG_INVALID',
      `config file ${path}: expected a mapping of settings, got ${Array.isArray(value) ? 'a list' : typeof value}`,
    );
  return value as ConfigInput;
}

/**
 * How deeply `[` and `{` nest in a text, given up past `stopAt`. Quotes and comments are not
 * skipped (YAML has three kinds of each): a bracket in a string counts too, which only errs on the
 * safe side, and no quoting can hide a flow collection from it.
 */
function bracketDepth(text: string, stopAt: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length && deepest <= stopAt; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  return deepest;
}
