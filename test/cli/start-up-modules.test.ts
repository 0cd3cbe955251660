import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** The packages (under node_modules/) loaded once the named modules of src/ are imported, in a fresh Node. */
function packagesLoadedBy(modules: string[]): string[] {
  const script = `
    import { createRequire } from 'node:module';
    for (const m of ${JSON.stringify(modules)}) await import(m);
    const names = Object.keys(createRequire(import.meta.url).cache).map((f) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(f)?.[1]);
    process.stdout.write(JSON.stringify([...new Set(names.filter(Boolean))]));
  `;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as string[];
}

describe('what a command loads at start-up', () => {
  it('the YAML parser only once a configuration file or an lxc remote list is read: housekeeping plan loads it not', () => {
    const loaded = packagesLoadedBy(['./src/cli/commands/housekeeping.ts', './src/config/config-file.ts', './src/client/remote.ts']);
    expect(loaded).toContain('ioredis');
    expect(loaded).not.toContain('yaml');
  }, 60_000);

  // (The rule compiler is not asked after here: tsx, which runs these sources, loads it itself.)
  it('housekeeping plan loads no queue or WebSocket until it needs one', () => {
    const loaded = packagesLoadedBy(['./src/cli/commands/housekeeping.ts']);
    expect(loaded).toEqual(expect.arrayContaining(['ioredis', 'undici']));
    for (const unused of ['bullmq', 'ws']) expect(loaded, unused).not.toContain(unused);
  }, 60_000);
});
