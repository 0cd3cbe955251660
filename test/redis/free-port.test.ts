import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/redis/free-port.js';

const run = promisify(execFile);
const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
const many = (n: number): Promise<number[]> => Promise.all(Array.from({ length: n }, () => freePort()));

describe('a free port for a server started later', () => {
  it('is below the ephemeral range, where no outgoing connection takes it first, and reserved under this process', async () => {
    const ports = await many(50);
    expect(new Set(ports).size).toBe(50);
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeralLow);
      expect(readFileSync(join(tmpdir(), 'reflex-free-ports', String(port)), 'utf8')).toBe(String(process.pid));
    }
  });

  it('is never one another live process was handed', async () => {
    const mine = new Set(await many(400));
    const script = `import('${join(import.meta.dirname, '../../src/redis/free-port.ts')}').then(async ({ freePort }) =>
      console.log(JSON.stringify(await Promise.all(Array.from({ length: 400 }, () => freePort())))))`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script]);
    const theirs: number[] = JSON.parse(stdout);
    expect(theirs).toHaveLength(400);
    expect(theirs.filter((port) => mine.has(port))).toEqual([]);
  });
});
