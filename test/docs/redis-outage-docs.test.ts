import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * What a lease holder does when Redis is unreachable is told in two places (the events pipeline and
 * the operations guide); they told opposite stories once. Both must say what subscriber-lease.ts
 * does: the holder does not step down, its lease is in doubt, it keeps buffering.
 */
describe('the docs on a Redis outage', () => {
  it('say alike that a lease holder cut off from Redis does not step down but buffers in doubt', () => {
    for (const doc of ['docs/events.md', 'docs/operations.md', 'src/events/subscriber-lease.ts']) {
      const text = readFileSync(doc, 'utf8').replace(/\s+/g, ' ');
      expect(text, doc).toMatch(/does not step down/);
      expect(text, doc).toMatch(/in doubt/);
      expect(text, doc).not.toMatch(/steps down by itself/);
    }
  });
});
