import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/redis/group-commit.js';

describe('group commit', () => {
  it('sends items submitted while a write is in flight together in the next write, in order, each answered with its own result', async () => {
    const writes: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const group = new GroupCommit<number, number>(async (items) => {
      writes.push(items);
      if (writes.length === 1) await gate;
      return items.map((i) => i * 10);
    });
    const first = group.submit(1);
    await new Promise((r) => setImmediate(r));
    const rest = [2, 3, 4].map((i) => group.submit(i));
    release();
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40]);
    expect(writes).toEqual([[1], [2, 3, 4]]);
  });

  it('rejects only the items of a failed write, and writes the next ones', async () => {
    let calls = 0;
    const group = new GroupCommit<string, string>(async (items) => {
      if (calls++ === 0) throw new Error('Redis went away');
      return items;
    });
    const failed = [group.submit('a'), group.submit('b')];
    await expect(failed[0]).rejects.toThrow('Redis went away');
    await expect(failed[1]).rejects.toThrow('Redis went away');
    expect(await group.submit('c')).toBe('c');
  });

  it('splits a long queue into writes of at most maxItems', async () => {
    const sizes: number[] = [];
    const group = new GroupCommit<number, number>(async (items) => (sizes.push(items.length), items), 4);
    await Promise.all(Array.from({ length: 10 }, (_, i) => group.submit(i)));
    expect(sizes).toEqual([4, 4, 2]);
  });
});
