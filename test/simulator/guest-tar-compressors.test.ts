import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * busybox 1.35's tar with its compressors, as LXD 5.0.2's test bed answers (each answer below is
 * the bed's): `-j -J -Z --lzma` read bzip2, xz, .Z and LZMA archives (made on the host by GNU tar,
 * bzip2, xz and ncompress); creating, `-j` runs bzip2, while this busybox's xz and lzma only
 * decompress and it has no compress; `-a` picks by the name's ending when creating only; a
 * decompressor that fails says so before tar's `short read`; `--to-command` pipes each file.
 */
let guest: GuestShell;

const archives = {
  'a.txz':
    '/Td6WFoAAATm1rRGAgAhARYAAAB0L+Wj4Cf/AG9dADCLiofEDvKXpPh1PcWp7dmabcoh9LNYZ2g9G16cS85sTBCl/7iTw6c2Kh0xAaWLNAczPIBjuZOdLuHM/iO8QezSdutcWc/dvgZlxWSl5GGy9V2Qot7Xp5nTd+yhDQ0i1K9ROQM7Ttx1zUSGupRoAAAAB6iF2cMaFjMAAYsBgFAAAP2BpwuxxGf7AgAAAAAEWVo=',
  'a.tbz':
    'QlpoOTFBWSZTWcYT2SwAAHN7hMkQAERAAX8AAAhiRJ5AAACACCAAdQ0KeoZNNBtRkNqCSJGgNABoaTo17OhBGoBIxysJaXRJMkgdduQm/MKwXCgSbRMVQJ1MzGuAy5zJqWfz0UDBo2urm932gREH4u5IpwoSGMJ7JYA=',
  'a.tZ':
    'H52QYVzQwUMHgMGDCBMqXMiwocOHECMihEERhg0aNABU3KhxI8WOHivaABCjxgwYGGXIgCEjhsYYMGqoBAAChsSbOHPq3Amgzhw6YeSAAAFAzps3BXkuNIpUqdOnUKNKnUr1JpoybNi8UVC1q9evYMOKHUu2rNmzaNOqXcu2rdu3cOPKnUu3rt27ePPq3cu3r9+/gAMLHky4sOHDiBMrXsy4sePHkCNLnky5suXLmDNr3sy5s+fPoEOLHk26tOnTqFOrXs26tevXsGPLnk27tu3buHPr3s27t+/fwIMLH068uPHjyJMrX86cNg==',
  'a.tlz':
    'XQAAgAD//////////wAwi4qHxA7yl6T4dT3Fqe3Zmm3KIfSzWGdoPRtenEvObEwQpf+4k8OnNiodMQGlizQHMzyAY7mTnS7hzP4jvEHs0nbrXFnP3b4GZcVkpeRhsvVdkKLe16eZ03fsoQ0NItSvUTkDO07cdc1EhrtNMoKb/8Ktciw=',
};

beforeAll(async () => {
  guest = await startGuestShell('tarz');
  const made = Object.entries(archives)
    .map(([name, b64]) => `echo ${b64} | base64 -d > ${name}`)
    .join('; ');
  await guest.sh(`mkdir -p /tmp/h && cd /tmp/h && ${made} && echo hi > b && tar cf x.tar b && mkdir q && echo 1 > q/f && tar cf q.tar q`);
});

afterAll(async () => {
  await guest.close();
});

const xzUsage =
  'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: xz -d [-cfk] [FILE]...\n\nDecompress FILEs (or stdin)\n\n\t-d\tDecompress\n\t-c\tWrite to stdout\n\t-f\tForce\n\t-k\tKeep input files\n\t-t\tTest integrity\n';

describe("tar's compressors", () => {
  it.each([
    ['tar tJf a.txz && tar tjf a.tbz && tar tZf a.tZ && tar --lzma -tf a.tlz', 'a.txt\na.txt\na.txt\na.txt\n', '', 0],
    ['tar xOJf a.txz; tar xOjf a.tbz; tar xOZf a.tZ; cat a.tlz | tar --lzma -xO', 'hello\nhello\nhello\nhello\n', '', 0],
    ['tar tf a.tbz', '', 'tar: short read\n', 1],
    ['tar taf a.txz', '', 'tar: short read\n', 1],
    ['tar tjf a.txz', '', 'tar: invalid magic\ntar: short read\n', 1],
    ['tar tZf x.tar', '', 'tar: invalid magic\ntar: short read\n', 1],
    ['tar tzf a.tbz', '', 'tar: invalid magic\ntar: short read\n', 1],
    ['tar tJf a.tbz', '', 'tar: short read\n', 1],
    ['tar --lzma -tf a.tbz', '', 'tar: unexpected EOF\ntar: short read\n', 1],
    ['tar --lzma -tf a.txz', '', 'tar: bad lzma header\ntar: short read\n', 1],
    ['head -c 100 a.tbz > t.tbz; tar tjf t.tbz', '', 'tar: bunzip error -3\ntar: short read\n', 1],
    ['head -c 100 a.txz > t.txz; tar tJf t.txz', '', 'tar: corrupted data\ntar: short read\n', 1],
    ['tar cjf - b | tar tjf - && tar cjf b.tbz b && bunzip2 < b.tbz | tar tf -', 'b\nb\n', '', 0],
    ['tar cJf b.txz b; echo $?; wc -c < b.txz', '1\n0\n', xzUsage, 0],
    ['tar cJf - b | wc -c', '0\n', xzUsage, 0],
    ['tar cZf b.tZ b; echo $?; wc -c < b.tZ', '1\n0\n', "tar: can't execute 'compress': No such file or directory\n", 0],
    [
      'for e in tgz tar.gz tbz2 tbz tar.bz2 tlz tar.Z; do tar caf o.$e b; echo "$e $(head -c 3 o.$e | od -An -tx1)"; done',
      'tgz  1f 8b 08\ntar.gz  1f 8b 08\ntbz2  42 5a 68\ntbz  62 00 00\ntar.bz2  42 5a 68\ntlz  62 00 00\ntar.Z  62 00 00\n',
      '',
      0,
    ],
  ])('%s', async (script, stdout, stderr, exitCode) => {
    const r = await guest.sh(`cd /tmp/h; ${script}`);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr, exitCode });
  });
});

describe("tar's --to-command", () => {
  it.each([
    [
      "tar xf x.tar --to-command='env | grep ^TAR_ | sort; exit 3'; echo $?",
      'TAR_FILENAME=b\nTAR_FILETYPE=f\nTAR_GID=0\nTAR_GNAME=root\nTAR_MODE=100644\nTAR_REALNAME=b\nTAR_SIZE=3\nTAR_UID=0\nTAR_UNAME=root\n1\n',
      "tar: 'env | grep ^TAR_ | sort; exit 3' returned status 3\n",
    ],
    ["tar xvf q.tar --to-command='cat; exit 2'; echo $?", '1\nq/\nq/f\n1\n', "tar: 'cat; exit 2' returned status 2\n"],
    ["tar xvf q.tar --to-command='echo $TAR_FILENAME $TAR_SIZE; cat'", 'q/f 2\n1\nq/\nq/f\n', ''],
    ['tar xOf x.tar --to-command=cat; echo $?; tar tf x.tar --to-command=cat', 'hi\n0\nhi\nb\n', ''],
    ["tar xf q.tar --to-command='cat >&2; echo out'", 'out\n', '1\n'],
  ])('%s', async (script, stdout, stderr) => {
    const r = await guest.sh(`cd /tmp/h; ${script}`);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr, exitCode: 0 });
  });
});
