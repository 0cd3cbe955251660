/**
 * The test bed's busybox and its links: where each applet's link lies in the busybox image
 * (scripts/testbed-image.sh installs Debian 12's busybox-static 1.35 and links every applet it
 * lists to /bin/busybox), as `ls /bin /usr/bin /sbin /usr/sbin` shows them on LXD 5.0.2's bed.
 * `linuxrc` is linked from `/linuxrc`; `/sbin/testinit` is the bed's init, not a link.
 */
export const appletLinks: Readonly<Record<string, string>> = {
  '/bin':
    'arch ash base64 cat chgrp chmod chown cp cpio cttyhack date dd df dmesg dnsdomainname dumpkmap echo ed egrep false fatattr fgrep getopt grep gunzip gzip hostname ionice ipcalc kill link linux32 linux64 ln login ls lzop mkdir mknod mktemp more mount mt mv netstat nuke pidof ping ping6 ps pwd readlink resume rev rm rmdir rpm run-parts sed setpriv sh sleep stat stty su sync tar touch true umount uname uncompress usleep vi watch zcat',
  '/usr/bin':
    '[ [[ ar ascii awk basename bc blkdiscard bunzip2 bzcat bzip2 cal chvt clear cmp crc32 crontab cut dc deallocvt diff dirname dos2unix dpkg dpkg-deb du dumpleases env expand expr factor fallocate find fold free ftpget ftpput groups head hexdump hostid id killall last less logger logname lsscsi lzcat lzma md5sum microcom mkfifo mkpasswd nc nl nproc nsenter nslookup od openvt passwd paste patch printf realpath renice reset rpm2cpio seq setkeycodes setsid sha1sum sha256sum sha3sum sha512sum shred shuf sort ssl_client strings svc svok tac tail taskset tee telnet test tftp time timeout top tr traceroute traceroute6 truncate ts tty unexpand uniq unix2dos unlink unlzma unshare unxz unzip uptime uudecode uuencode w wc wget which who whoami xargs xxd xz xzcat yes',
  '/sbin':
    'acpid adjtimex arp blockdev depmod devmem fdisk findfs freeramdisk fstrim getty halt hwclock ifconfig ifdown ifup init insmod ip ipneigh klogd loadkmap logread losetup lsmod mdev mkdosfs mke2fs mkswap modinfo modprobe nameif pivot_root poweroff reboot rmmod route run-init start-stop-daemon sulogin swapoff swapon switch_root sysctl syslogd tc tunctl udhcpc uevent vconfig watchdog',
  '/usr/sbin':
    'arping brctl chroot crond fsfreeze httpd i2cdetect i2cdump i2cget i2cset i2ctransfer loadfont mim nologin partprobe rdate telnetd ubirename udhcpd',
};

/** Every applet of the bed's busybox, as `busybox --list` prints them (269, in its order). */
export const appletNames: readonly string[] = [
  ...new Set([...Object.values(appletLinks).flatMap((names) => names.split(' ')), 'busybox', 'linuxrc']),
].sort();

/** Where the busybox binary is, and its size on the bed (`ls -l /bin/busybox`: 1982256). */
export const busyboxPath = '/bin/busybox';
const busyboxSize = 1982256;

/**
 * What the simulator's program files hold: an ELF magic (so `head -c 4` reads as on the bed) and a
 * line saying that this is the simulator's stand-in, not a binary. A file that starts so is run
 * as busybox runs: the applet its name (argv[0]) says.
 */
const programMark = Buffer.from('\x7fELF\nReflex simulator: a stand-in for BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1)\n', 'latin1');

/** The bytes of /bin/busybox: the mark, then zeros to the bed's size. One copy, shared by every guest (the in-memory filesystem keeps the array it is given; a write replaces it). */
export const busyboxImage: Uint8Array = (() => {
  const bytes = new Uint8Array(busyboxSize);
  bytes.set(programMark);
  return bytes;
})();

/** A program file of another program the image carries (`/usr/bin/python3`): the mark alone. */
export const programImage: Uint8Array = new Uint8Array(programMark);

/** Whether a file's bytes are one of the simulator's program files. */
export function isProgramImage(bytes: Uint8Array): boolean {
  if (bytes.length < programMark.length) return false;
  for (let i = 0; i < programMark.length; i++) if (bytes[i] !== programMark[i]) return false;
  return true;
}
