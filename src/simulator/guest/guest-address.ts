/** Addresses per loopback block: the last byte runs 1–254, the one before 0–255. */
const perBlock = 254 * 256;

/**
 * The n-th (1-based) guest address: 127.A.B.C with A from 1, C from 1 to 254. Linux routes all of
 * 127.0.0.0/8 to `lo`, so a client on the same host reaches it; 127.0.x.x is left to the host.
 * About 16.5 million addresses; the count wraps past them.
 */
export function loopbackAddress(n: number): string {
  const i = (n - 1) % (perBlock * 255);
  const a = 1 + Math.floor(i / perBlock);
  const b = Math.floor((i % perBlock) / 254);
  const c = 1 + (i % 254);
  return `127.${a}.${b}.${c}`;
}

/** The IPv6 link-local address the kernel gives an interface from its MAC (modified EUI-64), as `ip addr` prints it. */
export function linkLocalAddress(mac: string): string {
  const b = mac.split(':').map((x) => parseInt(x, 16));
  if (b.length !== 6 || b.some((x) => !Number.isInteger(x) || x < 0 || x > 255)) return 'fe80::1';
  const groups = [0xfe80, 0, 0, 0, ((b[0]! ^ 0x02) << 8) | b[1]!, (b[2]! << 8) | 0xff, 0xfe00 | b[3]!, (b[4]! << 8) | b[5]!];
  return compress(groups);
}

/** RFC 5952 text: lowercase hex without leading zeros, the longest run of two or more zero groups as `::`. */
function compress(groups: number[]): string {
  let best = { at: -1, len: 0 };
  for (let i = 0; i < groups.length;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.len < 2) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}
