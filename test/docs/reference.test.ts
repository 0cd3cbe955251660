import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { referenceMarkdown } from '../../src/cli/reference.js';
import { errorCodes } from '../../src/errors/codes.js';
import { runReflex } from '../support/reflex-process.js';

describe('documentation that cannot drift', () => {
  it('docs/reference.md is what the code generates (run npm run docs after changing the CLI, config or error codes)', async () => {
    expect(readFileSync('docs/reference.md', 'utf8')).toBe(await referenceMarkdown());
  });

  it('documents every error code with its retry behaviour', () => {
    const doc = readFileSync('docs/reference.md', 'utf8');
    for (const code of Object.keys(errorCodes)) expect(doc).toMatch(new RegExp(`\\| \`${code}\` \\| (yes|no) \\| \\S`));
  });

  it('opens the README with the two commands that do everything on a fresh machine', () => {
    const readme = readFileSync('README.md', 'utf8');
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock).toContain('npm ci && npm run demo');
    expect(firstBlock).toContain('npm ci && npm test');
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
    services: Record<string, { command?: string[]; environment?: Record<string, string>; profiles?: string[]; deploy?: { replicas?: number } }>;
  };

  it('runs Redis with AOF and noeviction, two worker replicas in the default profile, and a demo profile of its own', () => {
    expect(compose.services.redis?.command?.join(' ')).toContain('--appendonly yes');
    expect(compose.services.redis?.command?.join(' ')).toContain('--maxmemory-policy noeviction');
    expect(compose.services.redis?.profiles).toBeUndefined();
    expect(compose.services.reflex?.deploy?.replicas).toBe(2);
    expect(compose.services.reflex?.profiles).toEqual(['worker']);
    expect(readFileSync('.env', 'utf8')).toMatch(/^COMPOSE_PROFILES=worker$/m);
    expect(compose.services.demo?.profiles).toEqual(['demo']);
  });

  it('gives each service a command and settings the CLI accepts', async () => {
    const reflex = compose.services.reflex!;
    // Compose's own interpolation of ${VAR:-default}, with the defaults.
    const env = Object.fromEntries(Object.entries(reflex.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
    const res = await runReflex([...reflex.command!, '--print-config'], { ...env, REFLEX_RULES: 'rules' });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ redisUrl: 'redis://redis:6379', target: 'unix:///var/lib/lxd/unix.socket' });
    expect((await runReflex([...compose.services.demo!.command!, '--help'])).code).toBe(0);
  }, 60_000);

  it('builds from a Dockerfile on the current Node LTS that runs as a non-root user, exposes and health-checks /readyz', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(dockerfile.match(/^FROM node:24-/gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^USER reflex$/m);
    expect(dockerfile).toMatch(/^EXPOSE 9464$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/readyz/m);
    expect(dockerfile).toMatch(/ENTRYPOINT \["node", "\/app\/bin\/reflex.js"\]/);
  });
});
