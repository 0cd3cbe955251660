import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuleSet } from '../../src/rules/rule-set.js';
import { checkRules } from '../../src/rules/rule-checker.js';
import { writeRules } from '../support/stack.js';

/** The TypeScript blocks of one section of docs/probes.md. */
function examplesOf(section: string): string[] {
  const doc = readFileSync(resolve('docs/probes.md'), 'utf8');
  const start = doc.indexOf(`## ${section}`);
  const text = doc.slice(start, doc.indexOf('\n## ', start + 1));
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** Issue #43 item 6: the docs' example of a probe, saved as a file as it stands, loads and type-checks. */
describe('the example of docs/probes.md, "Declaring a probe"', () => {
  const [example] = examplesOf('Declaring a probe');

  it('loads as a file of a rules folder: its probe and its rule', async () => {
    expect(example).toBeDefined();
    const set = await loadRuleSet({ dir: writeRules({ 'web.ts': example! }) });
    expect(set.errors).toEqual([]);
    expect(set.loaded.probes.map((p) => [p.name, p.periodMs, p.restartCommand])).toEqual([
      ['web-health', 10_000, ['sh', '-c', 'systemctl restart nginx']],
    ]);
    expect(set.loaded.rules.length).toBeGreaterThan(0);
  });

  it('passes reflex rules check', async () => {
    const { problems } = await checkRules(writeRules({ 'web.ts': example! }));
    expect(problems).toEqual([]);
  }, 60_000);

  it('a file of a probe alone, exported under a name, loads', async () => {
    const set = await loadRuleSet({
      dir: writeRules({ 'p.ts': `import { defineProbe } from 'reflex-lxd';\nexport const p = defineProbe({ name: 'p', kind: 'tcp', port: 22 });\n` }),
    });
    expect(set.errors).toEqual([]);
    expect(set.loaded.probes.map((p) => p.name)).toEqual(['p']);
  });
});
