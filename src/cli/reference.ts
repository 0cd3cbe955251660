import type { Command } from 'commander';
import { z } from 'zod';
import { configSchema } from '../config/config.js';
import { errorCodes } from '../errors/codes.js';
import { exitCodes } from './entry.js';
import { buildProgram } from './main.js';

function commandRows(cmd: Command, prefix: string[]): string[] {
  const out: string[] = [];
  for (const sub of cmd.commands) {
    const path = [...prefix, sub.name()];
    const args = sub.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`)).join(' ');
    out.push(`### \`${path.join(' ')}${args ? ` ${args}` : ''}\`\n\n${sub.description()}\n`);
    const opts = sub.options.filter((o) => o.long !== '--help');
    if (opts.length) {
      out.push('| option | meaning |\n| --- | --- |');
      for (const o of opts) out.push(`| \`${o.flags}\` | ${o.description.replaceAll('|', '\\|')}${o.defaultValue !== undefined && o.defaultValue !== '' ? ` (default: \`${String(o.defaultValue)}\`)` : ''} |`);
      out.push('');
    }
    out.push(...commandRows(sub, path));
  }
  return out;
}

const envOf: Record<string, string> = {
  target: 'REFLEX_TARGET', remote: 'REFLEX_REMOTE', clientCert: 'REFLEX_CLIENT_CERT', clientKey: 'REFLEX_CLIENT_KEY',
  serverCert: 'REFLEX_SERVER_CERT', serverFingerprint: 'REFLEX_SERVER_FINGERPRINT', redisUrl: 'REDIS_URL', rulesDir: 'REFLEX_RULES',
  role: 'REFLEX_ROLE', prefix: 'REFLEX_PREFIX', resyncIntervalMs: 'REFLEX_RESYNC_INTERVAL_MS', logLevel: 'REFLEX_LOG_LEVEL',
  httpHost: 'REFLEX_HTTP_HOST', httpPort: 'REFLEX_HTTP_PORT', dashboardToken: 'REFLEX_DASHBOARD_TOKEN', stormThreshold: 'REFLEX_STORM_THRESHOLD',
};

function configRows(): string[] {
  const json = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, { type?: string; enum?: unknown[]; default?: unknown }> };
  const out = ['| field | type | default | environment |', '| --- | --- | --- | --- |'];
  for (const [name, p] of Object.entries(json.properties)) {
    const type = p.enum ? p.enum.map((e) => `\`${String(e)}\``).join(' \\| ') : (p.type ?? 'any');
    out.push(`| \`${name}\` | ${type} | ${p.default === undefined ? '' : `\`${JSON.stringify(p.default)}\``} | ${envOf[name] ? `\`${envOf[name]}\`` : ''} |`);
  }
  return out;
}

/**
 * The reference of the `reflex` command, its configuration and its error codes, generated from the
 * code itself (docs/reference.md is this text; a test fails when they differ).
 */
export function referenceMarkdown(): string {
  // Option defaults may come from the environment; the reference shows the built-in ones.
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith('REFLEX_') || k === 'REDIS_URL') delete process.env[k];
  try {
    return render();
  } finally {
    Object.assign(process.env, saved);
  }
}

function render(): string {
  return [
    '# Reference',
    '',
    'Generated from the code by `npm run docs`; a test fails when this file and the code disagree.',
    '',
    '## Commands',
    '',
    ...commandRows(buildProgram(), ['reflex']),
    '## Exit codes',
    '',
    '| code | meaning |',
    '| --- | --- |',
    ...Object.entries(exitCodes).map(([k, v]) => `| ${v} | ${k} |`),
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
