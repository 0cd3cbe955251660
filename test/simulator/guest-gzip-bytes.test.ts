import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipStream } from '../../src/simulator/guest/busybox-gzip.js';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * The bytes busybox 1.35's gzip writes (its own deflate, not zlib's). The hashes were recorded from
 * busybox 1.35.0 (Debian 1:1.35.0-4+deb12u1+b1, the reflex-busybox image's) with `-1`, `-6` and `-9`,
 * which write the same bytes: the first 32 hex digits of the SHA-256 of the whole .gz stream.
 */
/** A fixed sequence of pseudo-random numbers (xorshift32), so the inputs are the same everywhere. */
function numbers(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

const randomBytes = (size: number, seed: number): Buffer => {
  const next = numbers(seed);
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = next() & 0xff;
  return out;
};

const words = ['alpha', 'beta', 'gamma', 'delta', 'lorem', 'ipsum', 'dolor', 'sit', 'amet', 'the', 'quick', 'brown', 'fox', '\n'];
const text = (size: number, seed: number): Buffer => {
  const next = numbers(seed);
  let s = '';
  while (s.length < size) s += `${words[next() % words.length]} ${next() % 7 === 0 ? String(next() % 1000) : ''}`;
  return Buffer.from(s.slice(0, size));
};

const inputs: Record<string, Buffer> = {
  empty: Buffer.alloc(0),
  'one byte': Buffer.from('a'),
  'text, 100 KB': text(100 * 1024, 1),
  'random, 300 KB': randomBytes(300 * 1024, 2),
  'repetitive, 1 MB': Buffer.from('hello, busybox\n'.repeat(70000).slice(0, 1 << 20)),
  'text then random then zeros': Buffer.concat([text(40000, 3), randomBytes(30000, 4), Buffer.alloc(5000)]),
};
for (const size of [32767, 32768, 32769, 65535, 65536, 65537, 65536 + 262, 98305]) {
  inputs[`text, ${size} bytes`] = text(size, size);
  inputs[`random, ${size} bytes`] = randomBytes(size, size);
}

const recorded: Record<string, string> = {
  empty: '59869db34853933b239f1e2219cf7d43',
  'one byte': '9ece04efd6adc1778cc4024be41f13e9',
  'text, 100 KB': 'bf5e9ce3980fa2857e07706121032a04',
  'random, 300 KB': 'cc1131d8f3d5fe5c5783dfb547d47543',
  'repetitive, 1 MB': '05ff788dbbc0b5bcdeb0f6c55ee9f4ee',
  'text then random then zeros': 'f8a5f1774447d9070f0a316db7c55d36',
  'text, 32767 bytes': '0c85a473ba07fc046c5fce3d57be27da',
  'random, 32767 bytes': '0a9fefeab56b6b79c9c3254a71968433',
  'text, 32768 bytes': '6eb3df36b1b0d4dcaeedb2b7021fa673',
  'random, 32768 bytes': 'afffeda77406891160cebcdf72977640',
  'text, 32769 bytes': 'ce622c86aaf8c62a0698a44b8fea78c9',
  'random, 32769 bytes': 'b5dc6d97b365358e51fead4281b3b39f',
  'text, 65535 bytes': '93e567868e61773c9b907765b04d4d2c',
  'random, 65535 bytes': 'f3a1e3c04d0d9fa4defcabf0e4cfd615',
  'text, 65536 bytes': 'b1de5acb563658ca261d89254e1af983',
  'random, 65536 bytes': 'c673f2b07c48b252b7aae6121dfa21df',
  'text, 65537 bytes': '841590a705c487ee27d408c6e2ae51c0',
  'random, 65537 bytes': '0cdbde3cf69c0a71825f7d6e267ab6a4',
  'text, 65798 bytes': '5df77a4f0a5f3bf8cd1e00eff2d1292a',
  'random, 65798 bytes': '240b61ad43de654e7234d4940d328b5a',
  'text, 98305 bytes': 'eb12b363fdb4214c7ea92024471e9a31',
  'random, 98305 bytes': 'e4e60329ce3918a9b012180d987fb85a',
};

describe("gzip's compressed bytes", () => {
  it.each(Object.keys(inputs))("are busybox's for %s", (name) => {
    const digest = createHash('sha256').update(gzipStream(inputs[name]!)).digest('hex').slice(0, 32);
    expect(digest).toBe(recorded[name]);
  });
});

describe('gzip in the guest', () => {
  let guest: GuestShell;
  beforeAll(async () => {
    guest = await startGuestShell('gz');
  });
  afterAll(() => guest.close());

  it('writes the same bytes at every level it is given, from a pipe or a file', async () => {
    const res = await guest.sh(
      'for l in -1 -6 -9 ""; do seq 1 30000 | gzip $l -c | md5sum; done; cd /tmp; seq 1 30000 > s; gzip -1 s; md5sum s.gz; ' +
        'yes "hello, busybox" | head -c 100000 | gzip | md5sum',
    );
    expect(res.stdout).toBe(
      '90039ed280f69b7875bacab68cfe20ea  -\n'.repeat(4) + '90039ed280f69b7875bacab68cfe20ea  s.gz\nbcc305ccdd0d35d990fdac9a95f41d24  -\n',
    );
    expect(res.stderr).toBe('');
  });
});
