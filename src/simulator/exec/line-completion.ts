/** What a Tab completes: a command (from PATH), a directory (`cd`'s argument) or any file. */
export type CompletionKind = 'command' | 'directory' | 'file';

/** One name in a directory, as completion sees it (a symlink is what it points to). */
export interface CompletionEntry {
  name: string;
  directory: boolean;
}

/** ash's builtins, which complete as commands (the test beds' busybox 1.35, as its `help` lists them). */
const ashBuiltins =
  '. : [ [[ alias bg break cd chdir command continue echo eval exec exit export false fg getopts hash help history jobs kill let local printf pwd read readonly return set shift source test times trap true type ulimit umask unalias unset wait';

/**
 * The applets of the test beds' busybox 1.35 (its `help`): ash completes a command from these
 * whatever the guest's PATH holds, as a standalone busybox shell does.
 */
const busyboxApplets =
  '[ [[ acpid adjtimex ar arch arp arping ascii ash awk base64 basename bc blkdiscard blockdev brctl bunzip2 busybox bzcat bzip2 cal cat chgrp chmod chown chroot chvt clear cmp cp cpio crc32 crond crontab cttyhack cut date dc dd deallocvt depmod devmem df diff dirname dmesg dnsdomainname dos2unix dpkg dpkg-deb du dumpkmap dumpleases echo ed egrep env expand expr factor fallocate false fatattr fdisk fgrep find findfs fold free freeramdisk fsfreeze fstrim ftpget ftpput getopt getty grep groups gunzip gzip halt head hexdump hostid hostname httpd hwclock i2cdetect i2cdump i2cget i2cset i2ctransfer id ifconfig ifdown ifup init insmod ionice ip ipcalc ipneigh kill killall klogd last less link linux32 linux64 linuxrc ln loadfont loadkmap logger login logname logread losetup ls lsmod lsscsi lzcat lzma lzop md5sum mdev microcom mim mkdir mkdosfs mke2fs mkfifo mknod mkpasswd mkswap mktemp modinfo modprobe more mount mt mv nameif nc netstat nl nologin nproc nsenter nslookup nuke od openvt partprobe passwd paste patch pidof ping ping6 pivot_root poweroff printf ps pwd rdate readlink realpath reboot renice reset resume rev rm rmdir rmmod route rpm rpm2cpio run-init run-parts sed seq setkeycodes setpriv setsid sh sha1sum sha256sum sha3sum sha512sum shred shuf sleep sort ssl_client start-stop-daemon stat strings stty su sulogin svc svok swapoff swapon switch_root sync sysctl syslogd tac tail tar taskset tc tee telnet telnetd test tftp time timeout top touch tr traceroute traceroute6 true truncate ts tty tunctl ubirename udhcpc udhcpd uevent umount uname uncompress unexpand uniq unix2dos unlink unlzma unshare unxz unzip uptime usleep uudecode uuencode vconfig vi w watch watchdog wc wget which who whoami xargs xxd xz xzcat yes zcat';

const commandNames = [...new Set(`${ashBuiltins} ${busyboxApplets}`.split(' '))];

/** Lists a directory of the guest (relative to the shell's directory); undefined when it cannot be read. */
export type DirectoryLister = (path: string) => Promise<CompletionEntry[] | undefined>;

/** A character that marks a position as quoted (busybox keeps the quoting in a bit beside the byte). */
interface Marked {
  c: string;
  quoted: boolean;
}

/**
 * The word a Tab completes, from the line up to the cursor, as busybox's `build_match_prefix`
 * finds it: backslashes and quotes mark what they quote and go; everything up to the last command
 * separator (`;`, `&`, `|`, `&&`, `||`, not `>&`, `<&`, `>|`), a backquoted command and `(`/`{` go;
 * leading blanks go; the first word is a command, `cd`'s argument a directory, any other a file;
 * and the word is what follows the last blank, `<`, `>`, `|` or `&`.
 */
export function completionWord(beforeCursor: string): { word: string; kind: CompletionKind } {
  let buf: Marked[] = [...beforeCursor].map((c) => ({ c, quoted: false }));
  const drop = (from: number, to: number): void => void buf.splice(from, to - from);
  for (let i = 0; i < buf.length; i++)
    if (buf[i]!.c === '\\' && !buf[i]!.quoted) {
      drop(i, i + 1);
      if (buf[i]) buf[i]!.quoted = true;
    }
  let inQuote = '';
  for (let i = 0; i < buf.length;) {
    const cur = buf[i]!;
    if (!cur.quoted && (cur.c === "'" || cur.c === '"') && (!inQuote || cur.c === inQuote)) {
      inQuote = inQuote ? '' : cur.c;
      drop(i, i + 1);
      continue;
    }
    if (inQuote) cur.quoted = true;
    i++;
  }
  const is = (m: Marked | undefined, chars: string): boolean => m !== undefined && !m.quoted && chars.includes(m.c);
  for (let i = 0; i < buf.length; i++) {
    if (!is(buf[i], ';&|')) continue;
    const prev = buf[i - 1];
    if ((buf[i]!.c === '&' && is(prev, '<>')) || (buf[i]!.c === '|' && is(prev, '>'))) continue;
    drop(0, i + 1 + (buf[i + 1] && buf[i + 1]!.c === buf[i]!.c && !buf[i + 1]!.quoted ? 1 : 0));
    i = -1;
  }
  for (let i = 0; i < buf.length; i++) {
    if (!is(buf[i], '`')) continue;
    const close = buf.findIndex((m, j) => j > i && is(m, '`'));
    if (close < 0) {
      drop(0, i + 1);
      break;
    }
    // `cmd` counts as a word: it stays as one backquote.
    drop(i, close);
  }
  for (let i = 0; i < buf.length; i++)
    if (is(buf[i], '({')) {
      drop(0, i + 1);
      i = -1;
    }
  let lead = 0;
  while (lead < buf.length && buf[lead]!.c === ' ' && !buf[lead]!.quoted) lead++;
  drop(0, lead);
  let kind: CompletionKind = 'command';
  for (let i = 0; i < buf.length; i++) {
    if (!is(buf[i], ' <>')) continue;
    if (buf[i]!.c === ' ' && kind === 'command' && i === 2 && buf[0]!.c === 'c' && buf[1]!.c === 'd') kind = 'directory';
    else {
      kind = 'file';
      break;
    }
  }
  for (let i = buf.length - 1; i >= 0; i--)
    if (is(buf[i], ' <>|&')) {
      buf = buf.slice(i + 1);
      break;
    }
  return { word: buf.map((m) => m.c).join(''), kind };
}

/** The characters busybox puts a backslash before in a completion it inserts. */
const special = ' `"#$%^&*()=+{}[]:;\'|\\<>';

/** A completion as it goes into the line: special characters escaped. */
export function quoteSpecial(name: string): string {
  return [...name].map((c) => (special.includes(c) ? `\\${c}` : c)).join('');
}

/**
 * The names that complete `word` (`complete_cmd_dir_file`): in the directory the word names up to
 * its last `/`, or for a command ash's builtins, busybox's applets and every directory of PATH (no
 * directories there), else the shell's
 * directory; a directory gets a trailing `/`, `cd` takes only directories; `.` and `..` only when
 * the word's last part asks for them; names with control characters are left out. Sorted by bytes,
 * duplicates gone. `prefixLength` is how much of each match the word already has, counting the
 * backslashes quoting will add.
 */
export async function completions(
  word: string,
  kind: CompletionKind,
  path: string | undefined,
  list: DirectoryLister,
): Promise<{ matches: string[]; prefixLength: number }> {
  const slash = word.lastIndexOf('/');
  const base = word.slice(slash + 1);
  const dir = slash >= 0 ? word.slice(0, slash + 1) : undefined;
  const searchPath = dir === undefined && kind === 'command';
  const pathDirs = (path ?? '').split(':').filter((p) => p !== '');
  // An empty PATH leaves busybox looking in the shell's directory.
  const dirs = dir !== undefined ? [dir] : searchPath && pathDirs.length > 0 ? pathDirs : ['.'];
  const found: string[] = searchPath ? commandNames.filter((n) => n.startsWith(base)) : [];
  for (const d of dirs) {
    const entries = await list(d);
    if (!entries) continue;
    for (const e of [{ name: '.', directory: true }, { name: '..', directory: true }, ...entries]) {
      if (base === '' && (e.name === '.' || e.name === '..')) continue;
      if (!e.name.startsWith(base)) continue;
      if (e.directory && searchPath) continue;
      if (!e.directory && kind === 'directory') continue;
      // eslint-disable-next-line no-control-regex
      if (/[\x00-\x1f\x7f]/.test(e.name)) continue;
      found.push(e.directory ? `${e.name}/` : e.name);
    }
  }
  const matches = [...new Set(found)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const prefixLength = [...base].length + [...base].filter((c) => special.includes(c)).length;
  return { matches, prefixLength };
}

/**
 * The matches as a double Tab lists them (`showfiles`): in columns as wide as the longest name and
 * two blanks, as many as fit the terminal's width, filled down each column first; the last column
 * unpadded; each row ending CR LF.
 */
export function matchColumns(matches: readonly string[], width: number): string {
  const columnWidth = Math.max(...matches.map((m) => [...m].length)) + 2;
  let columns = Math.floor(width / columnWidth);
  let rows = matches.length;
  if (columns > 1) rows = Math.ceil(matches.length / columns);
  else columns = 1;
  let out = '';
  for (let row = 0; row < rows; row++) {
    let n = row;
    for (let c = 1; c < columns && n + rows < matches.length; n += rows, c++)
      out += matches[n]!.padEnd(matches[n]!.length + columnWidth - [...matches[n]!].length);
    out += `${matches[n]}\r\n`;
  }
  return out;
}
