import type { Command, Option } from 'commander';
import { z } from 'zod';
import { configFromEnv, configSchema } from '../config/config.js';
import { durationExamples } from '../config/duration.js';
import { errorCodes } from '../errors/codes.js';
import { exitCodes } from './entry.js';
import { buildProgram } from './main.js';

function defaultOf(o: Option): string {
  const shown = o.defaultValueDescription ?? (o.defaultValue === undefined || o.defaultValue === '' ? undefined : String(o.defaultValue));
  return shown === undefined ? '' : ` (default: \`${shown}\`)`;
}

function commandRows(cmd: Command, prefix: string[]): string[] {
  const out: string[] = [];
  for (const sub of cmd.commands) {
    const path = [...prefix, sub.name()];
    const args = sub.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`)).join(' ');
    out.push(`### \`${path.join(' ')}${args ? ` ${args}` : ''}\`\n\n${sub.description()}\n`);
    const opts = sub.options.filter((o) => o.long !== '--help');
    if (opts.length) {
      out.push('| option | meaning |\n| --- | --- |');
      for (const o of opts) out.push(`| \`${o.flags}\` | ${o.description.replaceAll('|', '\\|')}${defaultOf(o)} |`);
      out.push('');
    }
    out.push(...commandRows(sub, path));
  }
  return out;
}

/** Which environment variable sets which field, as configFromEnv reads them (the one place that knows). */
function envOfFields(): Record<string, string> {
  const read = new Set<string>();
  configFromEnv(new Proxy({}, { get: (_, key) => (typeof key === 'string' && read.add(key), undefined) }));
  const out: Record<string, string> = {};
  for (const name of read) for (const field of Object.keys(configFromEnv({ [name]: '1' }))) out[field] = name;
  return out;
}

function configRows(): string[] {
  const json = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as {
    properties: Record<string, { type?: string; format?: string; enum?: unknown[]; default?: unknown }>;
  };
  // A default behind a preprocess (duration fields) is not in the JSON schema; parsing nothing gives every default.
  const defaults = (configSchema.safeParse({}).data ?? {}) as Record<string, unknown>;
  const envOf = envOfFields();
  const out = ['| field | type | default | environment |', '| --- | --- | --- | --- |'];
  for (const [name, p] of Object.entries(json.properties)) {
    const type = p.enum
      ? p.enum.map((e) => `\`${String(e)}\``).join(' \\| ')
      : p.format === 'duration'
        ? `${p.type ?? 'number'} (ms) or duration`
        : (p.type ?? 'any');
    const def = p.default ?? defaults[name];
    out.push(`| \`${name}\` | ${type} | ${def === undefined ? '' : `\`${JSON.stringify(def)}\``} | ${envOf[name] ? `\`${envOf[name]}\`` : ''} |`);
  }
  return out;
}

const exitMeanings: Record<keyof typeof exitCodes, string> = {
  ok: 'success',
  failure:
    'the command ran and failed (a doctor check, a heal that did not succeed, an unknown id or instance, a file it was told to read or write that it cannot open; an unexpected error, the only case with a stack trace)',
  usage:
    'usage error: unknown command or option, missing argument, invalid option value (a duration, a number, a choice, an instance name, a file that is not JSON), conflicting options',
  config:
    'invalid configuration (config file, environment or flags; the message names the field), no rules to run, a rule with a problem (`reflex run`: a type error, a file that fails to load, a field a rule gets wrong; one `file:line:column: message` line each), or an HTTP port that is taken',
  unavailable: 'Redis or the target cannot be reached (`reflex run` without `--wait-for-target`)',
};

/**
 * The reference of the `reflex` command, its configuration and its error codes, generated from the
 * code itself (docs/reference.md is this text; a test fails when they differ).
 */
export async function referenceMarkdown(): Promise<string> {
  // Option defaults may come from the environment; the reference shows the built-in ones.
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith('REFLEX_') || k === 'REDIS_URL') delete process.env[k];
  try {
    return await render();
  } finally {
    Object.assign(process.env, saved);
  }
}

async function render(): Promise<string> {
  return [
    '# Reference',
    '',
    'Generated from the code by `npm run docs`; a test fails when this file and the code disagree.',
    '',
    '## Conventions',
    '',
    `- Durations (\`--duration\`, \`--wait\`, \`--since\`, the config file's \`*Ms\` fields): ${durationExamples}; units ms, s, m, h, d, w, combinable (\`1h30m\`). On the command line a bare number is refused (except 0); in the config file it is milliseconds.`,
    '- `--json` on a listing command prints one JSON document on stdout (an array, or an object for `doctor`), nothing else; `audit --json` and `replay --json` print JSON Lines, one object per line, as they stream.',
    '- Colours only on a terminal; never when `NO_COLOR` is set (non-empty); `FORCE_COLOR` (not `0`) turns them on elsewhere.',
    '- `reflex --version` (`-V`) prints the version; `--help` (`-h`) works on every command.',
    '',
    '## Commands',
    '',
    ...commandRows(await buildProgram(), ['reflex']),
    '## Exit codes',
    '',
    '| code | name | meaning |',
    '| --- | --- | --- |',
    ...Object.entries(exitCodes).map(([k, v]) => `| ${v} | ${k} | ${exitMeanings[k as keyof typeof exitCodes]} |`),
    '',
    '## Configuration',
    '',
    'Precedence: defaults < config file (`--config`, YAML or JSON, same field names) < environment < flags.',
    '',
    ...configRows(),
    '',
    '## Error codes',
    '',
    'Every error Reflex raises carries one of these codes, and whether a retry can help.',
    '',
    '| code | retry helps | meaning |',
    '| --- | --- | --- |',
    ...Object.entries(errorCodes).map(([code, e]) => `| \`${code}\` | ${e.retryable ? 'yes' : 'no'} | ${e.doc} |`),
    '',
  ].join('\n');
}
