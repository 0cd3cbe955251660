import type { InMemoryFs } from 'just-bash';
import { symlinkDated } from './guest-fs.js';
import { appletLinks, busyboxImage, busyboxPath, programImage } from './busybox-applets.js';
import { charBits, containerDevices } from './guest-devices.js';
import { fifoBits } from './guest-pipes.js';
import { descriptorLinks, descriptorNodes } from './guest-streams.js';

/** When the image's files were made (their mtime), as the test bed's image build dates them. */
const imageBuilt = new Date('2026-11-22T06:30:00Z');

/** The test bed's init (scripts/testbed-image.sh): exits cleanly on SIGPWR or SIGTERM. */
const testinit = `#!/bin/sh
# Reflex test bed init: exit cleanly on SIGPWR (lxc stop) or SIGTERM, otherwise idle.
trap 'exit 0' PWR TERM
while :; do sleep 1; done
`;

const debianOsRelease = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
`;

/**
 * Lays out a guest's root filesystem as its image has it. The busybox image is the test bed's
 * (scripts/testbed-image.sh): `bin dev etc linuxrc proc root run sbin sys tmp usr var`, root's
 * passwd and group lines and `/sbin/testinit`, and no `/etc/os-release` (the real image has none,
 * and the differential suites hold the simulator to it). A Debian image adds what Debian has:
 * `/etc/os-release`, `/etc/debian_version`, `/home`, `/opt`, `/srv`.
 *
 * The programs: on the busybox image, /bin/busybox (0755, the bed's size; its bytes are the
 * simulator's stand-in, busybox-applets.ts) and a symlink to it for each applet where the bed has
 * one (`/bin/ls -> /bin/busybox`). A Debian image has its programs as files of their own in
 * /usr/bin and /usr/sbin, each a small stand-in (`programImage`), and for Debian's merged /usr a link to each in
 * /bin and /sbin (`/bin/sh -> /usr/bin/sh`). `programs`: more program
 * files the image carries (`/usr/bin/python3`).
 */
export async function layOut(fs: InMemoryFs, os: string, programs: readonly string[] = []): Promise<void> {
  const dirs: [string, number][] = [
    ['/bin', 0o755],
    ['/dev', 0o755],
    ['/dev/net', 0o755],
    ['/dev/pts', 0o755],
    ['/etc', 0o755],
    ['/proc', 0o555],
    ['/root', 0o755],
    ['/run', 0o755],
    ['/sbin', 0o755],
    ['/sys', 0o555],
    ['/tmp', 0o1777],
    ['/usr/bin', 0o755],
    ['/usr/sbin', 0o755],
    ['/var/log', 0o755],
  ];
  if (os === 'Debian') dirs.push(['/home', 0o755], ['/opt', 0o755], ['/srv', 0o755], ['/usr/local/bin', 0o755], ['/var/lib', 0o755]);
  const file = (path: string, content: string, mode = 0o644): void => fs.writeFileSync(path, content, undefined, { mode, mtime: imageBuilt });
  for (const [path] of dirs) fs.mkdirSync(path, { recursive: true });
  file('/etc/passwd', 'root:x:0:0:root:/root:/bin/sh\n');
  file('/etc/group', 'root:x:0:\n');
  // The container's character devices (`/dev/tty` opened by no one without a terminal: guest-access.ts).
  for (const device of containerDevices) {
    file(device.path, '', device.perm);
    await fs.chmod(device.path, charBits | device.perm);
  }
  // The process's descriptors (the exec's own streams are the host's pipes, prw------- 65534) and /dev's links to them.
  fs.mkdirSync('/proc/self/fd', { recursive: true });
  for (const node of descriptorNodes) {
    file(node, '', 0o600);
    await fs.chmod(node, fifoBits | 0o600);
  }
  for (const [link, target] of descriptorLinks) await symlinkDated(fs, target, link, imageBuilt);
  fs.writeFileSync(busyboxPath, busyboxImage, undefined, { mode: 0o755, mtime: imageBuilt });
  for (const [dir, names] of Object.entries(appletLinks))
    for (const name of names.split(' ')) {
      if (os === 'Debian') {
        const [file, link] = [`/usr${dir.replace(/^\/usr/, '')}/${name}`, `${dir.replace(/^\/usr/, '')}/${name}`];
        // Small: Debian's programs are not the bed's busybox (no bed to measure), and a publish packs each.
        fs.writeFileSync(file, programImage, undefined, { mode: 0o755, mtime: imageBuilt });
        // Where Debian's /bin is a link to /usr/bin, here each name is: `/bin/sh` still leads to the program.
        await symlinkDated(fs, file, link, imageBuilt);
      } else await symlinkDated(fs, busyboxPath, `${dir}/${name}`, imageBuilt);
    }
  for (const path of programs) fs.writeFileSync(path, programImage, undefined, { mode: 0o755, mtime: imageBuilt });
  file('/sbin/testinit', testinit, 0o755);
  if (os === 'Debian') {
    file('/etc/os-release', debianOsRelease);
    file('/etc/debian_version', '12.8\n');
  }
  await symlinkDated(fs, busyboxPath, '/linuxrc', imageBuilt);
  for (const [path, mode] of [...dirs, ['/', 0o755] as [string, number], ['/usr', 0o755] as [string, number], ['/var', 0o755] as [string, number]]) {
    await fs.chmod(path, mode);
    await fs.utimes(path, imageBuilt, imageBuilt);
  }
}
