import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { posix } from 'node:path';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { banner, bannerLine, getopt, isResult, suffixed } from './busybox-getopt.js';
import { newEntryMode, type GuestFs } from './guest-fs.js';
import { umaskOf } from './program-host.js';
import type { GuestInit } from './guest-proc.js';
import { signalList, signalNumbers } from './guest-commands.js';
import { isRefusal } from './guest-access.js';
import { ProgramOutput } from './program-output.js';
import { shellQuote } from './program-run.js';
import { localTime, zoneOf } from './guest-zone.js';
import { errnoOf, errnos } from './fs-error.js';

/** One network interface as the instance's state shows it (GET …/state `network`). */
export interface GuestNic {
  addresses: { family: string; address: string; netmask: string; scope: string }[];
  hwaddr: string;
  mtu: number;
  state: string;
  type: string;
}

/** What the container's view needs to know about the instance and the command running in it. */
export interface SystemHost {
  fs: GuestFs;
  uid: number;
  gid: number;
  init: GuestInit;
  /** The pid of the command's shell (`$$`). */
  pid: number;
  /** The instance's name (its hostname). */
  hostname: () => string;
  /** The shell running the command's script (`sh`), or none when the program runs by itself. */
  shell: string | undefined;
  /** The instance's interfaces as its state shows them, by name. */
  network: () => Record<string, GuestNic>;
  /** `limits.cpu` of the instance, when set. */
  cpuLimit: string | undefined;
  /** Waits, ending early when the command is killed. */
  pause: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** A signal sent to the command's own shell: its trap runs, or it ends the whole command as the signal's default action does. */
  killSelf: (signal: number) => void;
  /** Sends the instance's init a signal (it may exit on it: the instance then stops). */
  signalInit: (signal: number) => void;
  /** The process's umask as its shell has it now (default 022). */
  umask?: () => number;
  /** The background jobs running in the instance (`cmd &`): the command's own and those earlier commands left running. */
  jobs?: () => GuestProcEntry[];
  /** A signal for a job (`killall`): true when one took it. */
  signalJob?: (pid: number, signal: number) => boolean;
}

const ok = (stdout = '', stderr = ''): ExecResult => ({ stdout, stderr, exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

/** busybox's usage texts for the programs below that print one (`--help`, a wrong call). */
const usages: Record<string, string> = {
  umount:
    'Usage: umount [-rlfda] [-t FSTYPE] FILESYSTEM|DIRECTORY\n\nUnmount filesystems\n\n\t-a\tUnmount all filesystems\n\t-r\tRemount devices read-only if mount is busy\n\t-l\tLazy umount (detach filesystem)\n\t-f\tForce umount (i.e., unreachable NFS server)\n\t-d\tFree loop device if it has been used\n\t-t FSTYPE[,...]\tUnmount only these filesystem type(s)\n',
  ip: 'Usage: ip [OPTIONS] address|route|link|tunnel|neigh|rule [ARGS]\n\nOPTIONS := -f[amily] inet|inet6|link | -o[neline]\n\nip addr add|del IFADDR dev IFACE | show|flush [dev IFACE] [to PREFIX]\nip route list|flush|add|del|change|append|replace|test ROUTE\nip link set IFACE [up|down] [arp on|off] [multicast on|off]\n\t[promisc on|off] [mtu NUM] [name NAME] [qlen NUM] [address MAC]\n\t[master IFACE | nomaster] [netns PID]\nip tunnel add|change|del|show [NAME]\n\t[mode ipip|gre|sit] [remote ADDR] [local ADDR] [ttl TTL]\nip neigh show|flush [to PREFIX] [dev DEV] [nud STATE]\nip rule [list] | add|del SELECTOR ACTION\n',
  ping: 'Usage: ping [OPTIONS] HOST\n\nSend ICMP ECHO_REQUESTs to HOST\n\n\t-4,-6\t\tForce IP or IPv6 name resolution\n\t-c CNT\t\tSend only CNT pings\n\t-s SIZE\t\tSend SIZE data bytes in packets (default 56)\n\t-i SECS\t\tInterval\n\t-A\t\tPing as soon as reply is received\n\t-t TTL\t\tSet TTL\n\t-I IFACE/IP\tSource interface or IP address\n\t-W SEC\t\tSeconds to wait for the first response (default 10)\n\t\t\t(after all -c CNT packets are sent)\n\t-w SEC\t\tSeconds until ping exits (default:infinite)\n\t\t\t(can exit earlier with -c CNT)\n\t-q\t\tQuiet, only display output at start/finish\n\t-p HEXBYTE\tPayload pattern\n',
  wget: "Usage: wget [-cqS] [--spider] [-O FILE] [-o LOGFILE] [--header STR]\n\t[--post-data STR | --post-file FILE] [-Y on/off]\n\t[--no-check-certificate] [-P DIR] [-U AGENT] URL...\n\nRetrieve files via HTTP or FTP\n\n\t--spider\tOnly check URL existence: $? is 0 if exists\n\t--header STR\tAdd STR (of form 'header: value') to headers\n\t--post-data STR\tSend STR using POST method\n\t--post-file FILE\tSend FILE using POST method\n\t--no-check-certificate\tDon't validate the server's certificate\n\t-c\t\tContinue retrieval of aborted transfer\n\t-q\t\tQuiet\n\t-P DIR\t\tSave to DIR (default .)\n\t-S    \t\tShow server response\n\t-O FILE\t\tSave to FILE ('-' for stdout)\n\t-o LOGFILE\tLog messages to FILE\n\t-U STR\t\tUse STR for User-Agent header\n\t-Y on/off\tUse proxy\n",
  nc: 'Usage: nc [-iN] [-wN] [-l] [-p PORT] [-f FILE|IPADDR PORT] [-e PROG]\n\nOpen a pipe to IP:PORT or FILE\n\n\t-l\tListen mode, for inbound connects\n\t\t(use -ll with -e for persistent server)\n\t-p PORT\tLocal port\n\t-w SEC\tConnect timeout\n\t-i SEC\tDelay interval for lines sent\n\t-f FILE\tUse file (ala /dev/ttyS0) instead of network\n\t-e PROG\tRun PROG after connect\n',
  nslookup:
    'Usage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n\nQuery DNS about HOST\n\nQUERY_TYPE: soa,ns,a,aaaa,cname,mx,txt,ptr,srv,any\n',
};

/** busybox's usage error: the banner, a blank line, the program's usage; exit 1. */
const truncateUsage = 'Usage: truncate [-c] -s SIZE FILE...\n\nTruncate FILEs to SIZE\n\n\t-c\tDo not create files\n\t-s SIZE\n';

const usage = (name: string): ExecResult => fail(`${banner}${usages[name] ?? `Usage: ${name}\n`}`);

/** An IPv4 or IPv6 address as written (no name to resolve). */
const isAddress = (host: string): boolean => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || (host.includes(':') && /^[0-9a-fA-F:.]+$/.test(host));

/** A guest /proc file's fields by name (`MemTotal: 123 kB` → MemTotal: 123). */
async function procFields(fs: GuestFs, path: string): Promise<Record<string, number>> {
  const text = (await fs.read(path).catch(() => Buffer.alloc(0))).toString('latin1');
  return Object.fromEntries([...text.matchAll(/^(\w+(?:\(\w+\))?):\s+(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

/** A guest /proc file's text, empty when it has none. */
async function procText(fs: GuestFs, path: string): Promise<string> {
  return (await fs.read(path).catch(() => Buffer.alloc(0))).toString('latin1');
}

/** A process of the container as ps, top, pidof and killall see it. */
export interface GuestProcEntry {
  pid: number;
  ppid: number;
  comm: string;
  argv: string[];
}

/**
 * The busybox programs that show the container rather than files, as a container on the test beds
 * shows them (LXD 5.0.2, Incus 6.0.4: busybox 1.35, no network device, no lxcfs, unprivileged):
 * mounts, memory, uptime and load (the host's, as `/proc` shows them in the guest), CPUs, users,
 * the network (the instance's interfaces as its state shows them; nothing reaches beyond them, as
 * in a container without a network), processes (init and the command's shell), the kernel log
 * and sysctl keys, and `busybox` itself. Their texts are busybox's; what depends on the host
 * (addresses, times, sizes) is held to the daemons by shape (docs/simulator.md).
 */
export function busyboxSystem(host: SystemHost): Command[] {
  const processes = (self: string, args: string[]): GuestProcEntry[] => [
    { pid: 1, ppid: 0, comm: host.init.comm, argv: host.init.argv },
    ...(host.shell ? [{ pid: host.pid, ppid: 0, comm: host.shell, argv: [host.shell] }] : []),
    ...(host.jobs?.() ?? []),
    { pid: host.pid + 1, ppid: host.shell ? host.pid : 0, comm: self, argv: [self, ...args] },
  ];
  /** busybox's match of a name: the process's comm, or its argv[0]'s last part. */
  const named = (p: GuestProcEntry, name: string): boolean => p.comm === name || posix.basename(p.argv[0] ?? '') === name;

  const mount: Command = {
    name: 'mount',
    async execute(args, ctx) {
      const table = await procText(host.fs, '/proc/mounts');
      const operands: string[] = [];
      let type = 'none';
      let options = 'rw,relatime';
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-t') type = args[++i] ?? type;
        else if (a === '-o') options = args[++i] ?? options;
        else if (a.startsWith('-')) continue;
        else operands.push(a);
      }
      if (operands.length === 0) {
        const wanted = args.includes('-t') ? type : undefined;
        const lines = table
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split(' '))
          .filter((f) => wanted === undefined || f[2] === wanted)
          .map((f) => `${f[0]} on ${f[1]} type ${f[2]} (${f[3]})\n`);
        return ok(lines.join(''));
      }
      if (operands.length === 1) return fail("mount: can't read '/etc/fstab': No such file or directory\n");
      const [source, target] = operands as [string, string];
      const dir = posix.resolve(ctx.cwd, target);
      const entry = await host.fs.entry(dir);
      if (entry?.type !== 'directory') return fail(`mount: mounting ${source} on ${target} failed: No such file or directory\n`, 255);
      if (host.uid !== 0) return fail('mount: permission denied (are you root?)\n', 255);
      // The mount is listed (mount, /proc/mounts) until unmounted; files under it stay the instance's.
      await host.fs.write('/proc/mounts', Buffer.from(`${table}${source} ${dir} ${type} ${options} 0 0\n`, 'latin1'), {
        uid: 0,
        gid: 0,
        mode: 0o444,
      });
      return ok();
    },
  };
  const umount: Command = {
    name: 'umount',
    async execute(args, ctx) {
      const targets = args.filter((a) => !a.startsWith('-'));
      if (targets.length === 0) return usage('umount');
      let table = await procText(host.fs, '/proc/mounts');
      let stderr = '';
      for (const t of targets) {
        const dir = posix.resolve(ctx.cwd, t);
        const lines = table.split('\n').filter(Boolean);
        const at = lines.map((l) => l.split(' ')[1]).lastIndexOf(dir);
        // Only what a command mounted comes off: the container's own mounts are the daemon's.
        if (at >= 0 && at >= baseMounts) {
          lines.splice(at, 1);
          table = lines.map((l) => `${l}\n`).join('');
        } else if (at >= 0) stderr += `umount: can't unmount ${t}: Device or resource busy\n`;
        else stderr += `umount: can't unmount ${t}: ${(await host.fs.entry(dir)) ? 'Invalid argument' : 'No such file or directory'}\n`;
      }
      await host.fs.write('/proc/mounts', Buffer.from(table, 'latin1'), { uid: 0, gid: 0, mode: 0o444 });
      return { stdout: '', stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  const free: Command = {
    name: 'free',
    async execute(args) {
      const m = await procFields(host.fs, '/proc/meminfo');
      const total = m.MemTotal ?? 0;
      const freeKb = m.MemFree ?? 0;
      const cache = (m.Buffers ?? 0) + (m.Cached ?? 0) + (m.SReclaimable ?? 0);
      const row = [total, total - freeKb - cache, freeKb, m.Shmem ?? 0, cache, m.MemAvailable ?? freeKb];
      const swap = [m.SwapTotal ?? 0, (m.SwapTotal ?? 0) - (m.SwapFree ?? 0), m.SwapFree ?? 0];
      const flag = args.find((a) => /^-[bkmgh]$/.test(a)) ?? '-k';
      const shown = (kb: number): string =>
        flag === '-h' ? humanFree(kb) : String(Math.floor(kb * { '-b': 1024, '-k': 1, '-m': 1 / 1024, '-g': 1 / 1024 ** 2 }[flag]!));
      const cells = (v: number[]): string => v.map((n) => shown(n).padStart(12)).join('');
      return ok(
        `${''.padStart(7)}${['total', 'used', 'free', 'shared', 'buff/cache', 'available'].map((h) => h.padStart(12)).join('')}\n` +
          `Mem:   ${cells(row)}\nSwap:  ${cells(swap)}\n`,
      );
    },
  };
  const uptime: Command = {
    name: 'uptime',
    async execute(_args, ctx) {
      const up = Number((await procText(host.fs, '/proc/uptime')).split(' ')[0]) || 0;
      const load = (await procText(host.fs, '/proc/loadavg')).split(' ');
      const now = localTime(zoneOf(ctx), Date.now()).local;
      const clock = [now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
      const days = Math.floor(up / 86_400);
      const minutes = Math.floor(up / 60);
      const hours = Math.floor(minutes / 60) % 24;
      const span = `${days ? `${days} day${days === 1 ? '' : 's'}, ` : ''}${hours ? `${String(hours).padStart(2)}:${String(minutes % 60).padStart(2, '0')}` : `${minutes % 60} min`}`;
      return ok(` ${clock} up ${span},  0 users,  load average: ${load[0] ?? '0.00'}, ${load[1] ?? '0.00'}, ${load[2] ?? '0.00'}\n`);
    },
  };
  const nproc: Command = {
    name: 'nproc',
    execute: async (args) => {
      const all = cpus().length || 1;
      // limits.cpu as a count pins the container to that many of the host's CPUs; --all counts them all.
      const limit = /^\d+$/.test(host.cpuLimit ?? '') ? Math.min(Number(host.cpuLimit), all) : all;
      return ok(`${args.includes('--all') ? all : limit}\n`);
    },
  };
  const who: Command = { name: 'who', execute: async () => ok() };
  const w: Command = { name: 'w', execute: async () => ok('USER\t\tTTY\t\tIDLE\tTIME\t\t HOST\n') };
  const logname: Command = { name: 'logname', execute: async () => fail('logname: getlogin: No such device or address\n') };
  const groups: Command = {
    name: 'groups',
    async execute(_args, ctx) {
      const text = await ctx.fs.readFile('/etc/group').catch(() => '');
      const line = text
        .split('\n')
        .map((l) => l.split(':'))
        .find((f) => f[2] === String(host.gid));
      return ok(`${line?.[0] ?? host.gid}\n`);
    },
  };

  /** The interfaces in kernel order: lo first (index 1), then the NICs by name. */
  const interfaces = (): [number, string, GuestNic][] => {
    const net = host.network();
    const names = Object.keys(net).sort((a, b) => (a === 'lo' ? -1 : b === 'lo' ? 1 : a.localeCompare(b)));
    return names.map((n, i) => [i + 1, n, net[n]!]);
  };
  const up = (nic: GuestNic): boolean => nic.state === 'up';
  const ip: Command = {
    name: 'ip',
    async execute(args) {
      const words: string[] = [];
      let family: string | undefined;
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-4') family = 'inet';
        else if (a === '-6') family = 'inet6';
        else if (a === '-f' || a === '-family') family = { inet: 'inet', inet6: 'inet6' }[args[++i] ?? ''];
        else if (a === '-o' || a === '-oneline') continue;
        else if (a.startsWith('-')) return usage('ip');
        else words.push(a);
      }
      const [object = '', given = 'show', ...rest] = words;
      // busybox takes any abbreviation of show and list.
      const verb = /^(s|sh|sho|show|l|li|lis|list|lst)$/.test(given) ? 'show' : given;
      const kind = /^(a|ad|add|addr|addre|addres|address)$/.test(object)
        ? 'addr'
        : /^(l|li|lin|link)$/.test(object)
          ? 'link'
          : /^(r|ro|rou|rout|route)$/.test(object)
            ? 'route'
            : /^(n|ne|nei|neig|neigh)$/.test(object)
              ? 'neigh'
              : undefined;
      if (!kind) return usage('ip');
      const devAt = rest.indexOf('dev');
      // `ip addr show eth0`, `ip link set eth0 up`: the device without its keyword.
      const dev = devAt >= 0 ? rest[devAt + 1] : verb === 'show' || (kind === 'link' && verb === 'set') ? rest[0] : undefined;
      const all = interfaces();
      if (dev !== undefined && !all.some(([, n]) => n === dev)) {
        if (verb === 'show') return fail(`ip: can't find device '${dev}'\n`);
        return fail('ip: SIOCGIFFLAGS: No such device\n', 2);
      }
      // A change is taken as the container's root may make it (its own network namespace) and not kept.
      if (verb !== 'show') return ok();
      if (kind === 'neigh') return ok();
      if (kind === 'route') {
        const routes = all
          .filter(([, n, nic]) => n !== 'lo' && up(nic))
          .flatMap(([, n, nic]) =>
            nic.addresses
              .filter((a) => a.family === 'inet' && (family ?? 'inet') === 'inet')
              .map((a) => `${network(a.address, Number(a.netmask))}/${a.netmask} dev ${n} scope link  src ${a.address} \n`),
          );
        return ok(routes.join(''));
      }
      const lines = all
        .filter(([, n]) => dev === undefined || n === dev)
        // With a family, only the interfaces that have an address of it.
        .filter(([, , nic]) => kind === 'link' || family === undefined || nic.addresses.some((a) => a.family === family))
        .map(([index, n, nic]) => {
          const loopback = nic.type === 'loopback';
          const flags = loopback ? (up(nic) ? 'LOOPBACK,UP,LOWER_UP' : 'LOOPBACK') : 'BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN';
          const head = `${index}: ${n}${loopback ? '' : `@if${index + 10}`}: <${flags}> mtu ${nic.mtu} qdisc ${up(nic) ? 'noqueue' : 'noop'} qlen 1000\n`;
          const link = loopback
            ? '    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n'
            : `    link/ether ${nic.hwaddr} brd ff:ff:ff:ff:ff:ff\n`;
          if (kind === 'link') return head + link;
          const addrs = nic.addresses
            .filter((a) => family === undefined || a.family === family)
            .map((a) => {
              const scope = a.scope === 'local' ? 'host' : a.scope;
              const brd = a.family === 'inet' && !loopback ? ` brd ${broadcast(a.address, Number(a.netmask))}` : '';
              const label = a.family === 'inet' ? ` ${n}` : ' ';
              return `    ${a.family} ${a.address}/${a.netmask}${brd} scope ${scope}${label}\n       valid_lft forever preferred_lft forever\n`;
            });
          return head + link + addrs.join('');
        });
      return ok(lines.join(''));
    },
  };
  const ifconfig: Command = {
    name: 'ifconfig',
    async execute(args) {
      const all = args.includes('-a');
      const dev = args.find((a) => !a.startsWith('-'));
      const chosen = interfaces().filter(([, n, nic]) => (dev === undefined ? all || up(nic) : n === dev));
      if (dev !== undefined && chosen.length === 0) return fail(`ifconfig: ${dev}: error fetching interface information: Device not found\n`);
      if (dev !== undefined && args.length > 1) return ok();
      const blocks = chosen.map(([, n, nic]) => {
        const loopback = nic.type === 'loopback';
        const v4 = nic.addresses.find((a) => a.family === 'inet');
        const lines = [
          `${n.padEnd(10)}Link encap:${loopback ? 'Local Loopback  ' : `Ethernet  HWaddr ${nic.hwaddr.toUpperCase()}  `}`,
          ...(v4
            ? [
                `          inet addr:${v4.address}  ${loopback ? '' : `Bcast:${broadcast(v4.address, Number(v4.netmask))}  `}Mask:${mask(Number(v4.netmask))}`,
              ]
            : []),
          ...nic.addresses
            .filter((a) => a.family === 'inet6')
            .map(
              (a) => `          inet6 addr: ${a.address}/${a.netmask} Scope:${{ link: 'Link', local: 'Host', global: 'Global' }[a.scope] ?? a.scope}`,
            ),
          `          ${loopback ? (up(nic) ? 'UP LOOPBACK RUNNING' : 'LOOPBACK') : 'UP BROADCAST RUNNING MULTICAST'}  MTU:${nic.mtu}  Metric:1`,
          '          RX packets:0 errors:0 dropped:0 overruns:0 frame:0',
          '          TX packets:0 errors:0 dropped:0 overruns:0 carrier:0',
          '          collisions:0 txqueuelen:1000 ',
          '          RX bytes:0 (0.0 B)  TX bytes:0 (0.0 B)',
          '',
        ];
        return lines.map((l) => `${l}\n`).join('');
      });
      return ok(blocks.join(''));
    },
  };
  const route: Command = {
    name: 'route',
    async execute() {
      const rows = interfaces()
        .filter(([, n, nic]) => n !== 'lo' && up(nic))
        .flatMap(([, n, nic]) =>
          nic.addresses
            .filter((a) => a.family === 'inet')
            .map(
              (a) =>
                `${network(a.address, Number(a.netmask)).padEnd(16)}${'0.0.0.0'.padEnd(16)}${mask(Number(a.netmask)).padEnd(16)}U     0      0        0 ${n}\n`,
            ),
        );
      return ok(`Kernel IP routing table\nDestination     Gateway         Genmask         Flags Metric Ref    Use Iface\n${rows.join('')}`);
    },
  };
  const netstat: Command = {
    name: 'netstat',
    async execute(args) {
      const flags = args.filter((a) => a.startsWith('-')).join('');
      const which = flags.includes('l') ? 'only servers' : flags.includes('a') ? 'servers and established' : 'w/o servers';
      const inet = !flags.includes('x') || /[tuw]/.test(flags);
      const unix = !/[tuw]/.test(flags) || flags.includes('x');
      let out = '';
      if (inet) out += `Active Internet connections (${which})\nProto Recv-Q Send-Q Local Address           Foreign Address         State       \n`;
      if (unix) out += `Active UNIX domain sockets (${which})\nProto RefCnt Flags       Type       State         I-Node Path\n`;
      return ok(out);
    },
  };
  /** A host to reach: a name does not resolve (no DNS answers), an address is unreachable (no route out). */
  const unreachable = (program: string, target: string): ExecResult | undefined =>
    isAddress(target) ? undefined : fail(`${program}: bad address '${target}'\n`);
  const ping = (name: 'ping' | 'ping6'): Command => ({
    name,
    async execute(args) {
      const withValue = new Set(['-c', '-s', '-i', '-t', '-I', '-W', '-w', '-p']);
      const operands = args.filter((a, i) => !a.startsWith('-') && !withValue.has(args[i - 1] ?? ''));
      const target = operands[0];
      if (target === undefined) return fail(`${banner}${usages.ping!.replace(/^Usage: ping/, `Usage: ${name}`)}`);
      // No IPv6 address to send from (lo is down); no IPv4 route.
      const why = target.includes(':') ? 'Cannot assign requested address' : 'Network is unreachable';
      return (
        unreachable(name, target) ?? {
          stdout: `PING ${target} (${target}): 56 data bytes\n`,
          stderr: `${name}: sendto: ${why}\n`,
          exitCode: 1,
        }
      );
    },
  });
  const wget: Command = {
    name: 'wget',
    async execute(args) {
      const withValue = new Set(['-O', '-o', '-P', '-U', '-Y', '-T', '--header', '--post-data', '--post-file', '--user-agent']);
      const url = args.find((a, i) => !a.startsWith('-') && !withValue.has(args[i - 1] ?? ''));
      if (url === undefined) return usage('wget');
      const m = /^(?:(https?|ftp):\/\/)?(\[[^\]]+\]|[^/:]+)(?::(\d+))?/.exec(url);
      const hostName = (m?.[2] ?? url).replace(/^\[|\]$/g, '');
      const port = m?.[3] ?? (m?.[1] === 'https' ? '443' : m?.[1] === 'ftp' ? '21' : '80');
      const refused = unreachable('wget', hostName);
      if (refused) return refused;
      const shown = m?.[3] ? `${m[2]}:${m[3]}` : hostName;
      const connecting = args.includes('-q') ? '' : `Connecting to ${shown} (${hostName}:${port})\n`;
      return fail(`${connecting}wget: can't connect to remote host (${hostName}): Network is unreachable\n`);
    },
  };
  const nc: Command = {
    name: 'nc',
    async execute(args) {
      const operands: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (/^-[pwief]$/.test(a)) i++;
        else if (/^-[wi]\d+$/.test(a) || a === '-l' || a === '-ll') continue;
        else if (a.startsWith('-')) return fail(`nc: invalid option -- '${a.slice(1, 2)}'\n${banner}${usages.nc}`);
        else operands.push(a);
      }
      if (operands.length !== 2) return usage('nc');
      const target = operands[0]!;
      return unreachable('nc', target) ?? fail(`nc: can't connect to remote host (${target}): Network is unreachable\n`);
    },
  };
  const nslookup: Command = {
    name: 'nslookup',
    async execute(args, ctx) {
      const operands = args.filter((a) => !a.startsWith('-'));
      if (operands.length === 0) return usage('nslookup');
      const conf = await ctx.fs.readFile('/etc/resolv.conf').catch(() => '');
      const server = operands[1] ?? /^nameserver\s+(\S+)/m.exec(conf)?.[1] ?? '127.0.0.1';
      return fail(`nslookup: can't connect to remote host (${server}): Network is unreachable\n`);
    },
  };
  const pidof: Command = {
    name: 'pidof',
    async execute(args) {
      const single = args.includes('-s');
      const names = args.filter((a) => !a.startsWith('-'));
      const found = processes('pidof', args)
        .filter((p) => p.comm !== 'pidof' && names.some((n) => named(p, n)))
        .map((p) => p.pid)
        .sort((a, b) => b - a);
      const shown = single ? found.slice(0, 1) : found;
      return shown.length ? ok(`${shown.join(' ')}\n`) : fail('');
    },
  };
  const killall: Command = {
    name: 'killall',
    async execute(args) {
      let signal = 15;
      let quiet = false;
      const names: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-q') quiet = true;
        else if (a === '-l') return signalList(undefined);
        else if (a === '-s') signal = parseSignal(args[++i] ?? '') ?? NaN;
        else if (a.startsWith('-') && names.length === 0) signal = parseSignal(a.slice(1)) ?? NaN;
        else names.push(a);
      }
      if (Number.isNaN(signal)) return fail('killall: bad signal name\n');
      if (names.length === 0) return fail(`${banner}Usage: killall [-lq] [-SIG] PROCESS_NAME...\n`);
      let stderr = '';
      let missed = false;
      for (const n of names) {
        const hits = processes('killall', args).filter((p) => p.comm !== 'killall' && named(p, n));
        if (hits.length === 0) {
          missed = true;
          if (!quiet) stderr += `killall: ${n}: no process killed\n`;
          continue;
        }
        // The command's own shell takes it (its trap, or its default action); init takes no signal from here (it would stop the instance).
        if (hits.some((p) => p.pid === 1) && signal !== 0) host.signalInit(signal);
        if (hits.some((p) => p.pid === host.pid) && signal !== 0) host.killSelf(signal);
        for (const p of hits) if (p.pid !== 1 && p.pid !== host.pid) host.signalJob?.(p.pid, signal);
      }
      return { stdout: '', stderr, exitCode: missed ? 1 : 0 };
    },
  };
  const top: Command = {
    name: 'top',
    async execute(args) {
      const m = await procFields(host.fs, '/proc/meminfo');
      const total = m.MemTotal ?? 0;
      const load = (await procText(host.fs, '/proc/loadavg')).trim().split(' ');
      const list = processes('top', args);
      const user = (uid: number): string => (uid === 0 ? 'root' : String(uid));
      const rows = list.map((p) => {
        const cmd = posix.basename(p.argv[0] ?? '') === p.comm ? p.argv.join(' ') : `{${p.comm}} ${p.argv.join(' ')}`;
        const mine = p.pid !== 1;
        return `${String(p.pid).padStart(5)}${String(p.ppid).padStart(6)} ${user(mine ? host.uid : 0).padEnd(8)} ${p.comm === 'top' ? 'R' : 'S'}     2268   0%   0% ${cmd}\n`;
      });
      return ok(
        `Mem: ${total - (m.MemFree ?? 0)}K used, ${m.MemFree ?? 0}K free, ${m.Shmem ?? 0}K shrd, ${m.Buffers ?? 0}K buff, ${m.Cached ?? 0}K cached\n` +
          'CPU:   0% usr   0% sys   0% nic 100% idle   0% io   0% irq   0% sirq\n' +
          `Load average: ${load.slice(0, 3).join(' ')} ${load[3] ?? '1/1'} ${host.pid + 1}\n` +
          '  PID  PPID USER     STAT   VSZ %VSZ %CPU COMMAND\n' +
          `${rows.join('')}\n`,
      );
    },
  };
  const quietOk = (name: string): Command => ({ name, execute: async () => ok() });
  /**
   * busybox's `reboot`, `poweroff` and `halt` signal init (TERM, USR2, USR1) and exit 0: the test
   * beds' init exits on TERM (the container stops) and ignores the others. `-f` is not served.
   */
  const shutdown = (name: string, signal: number): Command => ({
    name,
    async execute() {
      host.signalInit(signal);
      return ok();
    },
  });
  const dmesg: Command = { name: 'dmesg', execute: async () => fail('dmesg: klogctl: Operation not permitted\n') };
  const sysctl: Command = {
    name: 'sysctl',
    async execute(args, ctx) {
      const valueOnly = args.includes('-n');
      const write = args.includes('-w');
      const keys = args.filter((a) => !a.startsWith('-'));
      if (keys.length === 0) return fail(`${banner}Usage: sysctl -p [-enq] [FILE...] / [-enqaw] [KEY[=VALUE]]...\n`);
      let stdout = '';
      let stderr = '';
      for (const k of keys) {
        const [key, value] = k.split('=', 2) as [string, string | undefined];
        // A key names a file under /proc/sys and nothing else: no empty part, no `..`.
        const parts = key.split(/[./]/);
        const path = parts.join('/');
        const valid = parts.every((part) => /^[\w-]+$/.test(part));
        const hostname = key === 'kernel.hostname';
        let current: string | undefined;
        try {
          current = hostname ? host.hostname() : valid ? readFileSync(`/proc/sys/${path}`, 'latin1').trimEnd() : undefined;
        } catch {
          current = undefined;
        }
        if (current === undefined) stderr += `sysctl: error: '${path}' is an unknown key\n`;
        else if (write || value !== undefined) stderr += `sysctl: error setting key '${key}': Permission denied\n`;
        else stdout += valueOnly ? `${current}\n` : `${key} = ${current}\n`;
      }
      return { stdout, stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  // busybox's usleep: its first operand by xatou (decimal digits, at most 2^32 - 1), the others ignored.
  const usleep: Command = {
    name: 'usleep',
    async execute(args, ctx) {
      const usage = `${banner}Usage: usleep N\n\nPause for N microseconds\n`;
      if (args.length === 1 && args[0] === '--help') return { stdout: '', stderr: usage, exitCode: 0 };
      const n = args[0];
      if (n === undefined) return { stdout: '', stderr: usage, exitCode: 1 };
      if (!/^\d+$/.test(n) || Number(n) > 0xffff_ffff) return { stdout: '', stderr: `usleep: invalid number '${n}'\n`, exitCode: 1 };
      await host.pause(Number(n) / 1000, ctx.signal);
      return ok();
    },
  };
  const realpath: Command = {
    name: 'realpath',
    async execute(args, ctx) {
      // busybox's realpath takes no options (`-e` is a name) and wants a name.
      if (args.length === 0) return fail(`${banner}Usage: realpath FILE...\n\nPrint absolute pathnames of FILEs\n`);
      let stdout = '';
      let stderr = '';
      for (const a of args) {
        const path = posix.resolve(ctx.cwd, a);
        let why = 'No such file or directory';
        const real = await ctx.fs.realpath(path).catch(async (e: unknown) => {
          if (isRefusal(e)) return void (why = 'Permission denied');
          // busybox resolves a missing last part in a directory that exists, for a name with a slash.
          if (!a.includes('/')) return undefined;
          const dir = await ctx.fs.realpath(posix.dirname(path)).catch(() => undefined);
          return dir === undefined ? undefined : posix.join(dir, posix.basename(path));
        });
        if (real === undefined) stderr += `realpath: ${a}: ${why}\n`;
        else stdout += `${real}\n`;
      }
      return { stdout, stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  const truncate: Command = {
    name: 'truncate',
    async execute(args, ctx) {
      const parsed = getopt('truncate', truncateUsage, args, 'c', 's');
      if (isResult(parsed)) return parsed;
      const given = parsed.opts.get('s');
      const noCreate = parsed.opts.has('c');
      const files = parsed.operands;
      if (typeof given !== 'string' || files.length === 0) return fail(`${banner}${truncateUsage}`);
      const size = suffixed(given, { k: 1024, K: 1024, KB: 1000, kB: 1000, M: 1048576, MB: 1e6, G: 1073741824, GB: 1e9 });
      if (size === undefined) return fail(`truncate: invalid number '${given}'\n`);
      let stderr = '';
      for (const f of files) {
        const path = posix.resolve(ctx.cwd, f);
        const entry = await host.fs.entry(path);
        if (!entry && noCreate) continue;
        if (entry?.type === 'directory') {
          stderr += `truncate: ${f}: Is a directory\n`;
          continue;
        }
        try {
          await host.fs.resize(path, size, { uid: host.uid, gid: host.gid, mode: newEntryMode(0o666, umaskOf(host)) });
        } catch (e) {
          // A device (EINVAL); a file past the 1 GiB in all the guest's memory holds, holes or not (ENOSPC).
          const code = errnoOf(e);
          if (code !== 'EINVAL' && code !== 'ENOSPC') throw e;
          stderr += `truncate: ${f}: truncate: ${errnos[code]}\n`;
        }
      }
      return { stdout: '', stderr, exitCode: stderr ? 1 : 0 };
    },
  };
  const unlink: Command = {
    name: 'unlink',
    async execute(args, ctx) {
      if (args.length !== 1) return fail(`${banner}Usage: unlink FILE\n`);
      const path = posix.resolve(ctx.cwd, args[0]!);
      const entry = await host.fs.entry(path);
      if (!entry) return fail(`unlink: can't remove file '${args[0]}': No such file or directory\n`);
      if (entry.type === 'directory') return fail(`unlink: can't remove file '${args[0]}': Is a directory\n`);
      await host.fs.remove(path);
      return ok();
    },
  };
  /**
   * `-c LIST` as busybox checks it: each line `HASH  FILE` (or `HASH *FILE`) is `FILE: OK` or
   * `FILE: FAILED` (a file it cannot read too, said on stderr first); a line of another form, an
   * empty one included, is a failure (`invalid format` under -w); then `WARNING: N of M computed
   * checksums did NOT match`, and for a list with no line `LIST: no checksum lines found`. -s says
   * nothing but the status.
   */
  const checkList = async (
    name: string,
    ctx: CommandContext,
    list: string,
    digest: (f: string) => Promise<string | undefined>,
    { silent, warn }: { silent: boolean; warn: boolean },
    out: ProgramOutput,
  ): Promise<ExecResult> => {
    let text: string;
    if (list === '-') text = String(ctx.stdin);
    else {
      const read = await host.fs.read(posix.resolve(ctx.cwd, list)).catch(() => undefined);
      if (read === undefined) {
        out.err(`${name}: ${list}: No such file or directory\n`);
        return out.result(1);
      }
      text = read.toString('latin1');
    }
    const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
    let failed = 0;
    for (const line of lines) {
      const at = line.includes('  ') ? line.indexOf('  ') : line.indexOf(' *');
      if (at < 0) {
        if (warn) out.err(`${name}: invalid format\n`);
        failed++;
        continue;
      }
      const file = line.slice(at + 2);
      const hex = await digest(file);
      const good = hex !== undefined && hex === line.slice(0, at);
      if (!silent) out.out(`${file}: ${good ? 'OK' : 'FAILED'}\n`);
      if (!good) failed++;
    }
    if (failed && !silent) out.err(`${name}: WARNING: ${failed} of ${lines.length} computed checksums did NOT match\n`);
    if (lines.length === 0) out.err(`${name}: ${list}: no checksum lines found\n`);
    return out.result(failed || lines.length === 0 ? 1 : 0);
  };
  const checksum = (name: string, algorithm: string): Command => ({
    name,
    async execute(given, ctx) {
      // sha3sum takes its width with -a (224 by default).
      let args = given;
      if (name === 'sha3sum') {
        const at = args.indexOf('-a');
        const bits = at >= 0 ? args[at + 1] : '224';
        if (!['224', '256', '384', '512'].includes(bits ?? '')) return fail(`sha3sum: invalid number '${bits}'\n`);
        algorithm = `sha3-${bits}`;
        args = at >= 0 ? args.filter((_, i) => i !== at && i !== at + 1) : args;
      }
      // busybox's options (-c to check a list, -s and -w with it, -b and -t taken and changing nothing); others are just-bash's.
      const flags = args.filter((a) => a.startsWith('-') && a !== '-');
      if (flags.some((a) => !/^-[scwbt]+$/.test(a))) return ctx.origCommand ? ctx.origCommand(args) : fail(`sh: ${name}: not found\n`, 127);
      const has = (letter: string): boolean => flags.some((a) => a.includes(letter));
      const files = args.filter((a) => !flags.includes(a));
      const out = new ProgramOutput();
      /** A file's hex digest, or undefined when it cannot be read (said on stderr, as busybox's hash_file says it). */
      const digest = async (f: string): Promise<string | undefined> => {
        if (f === '-')
          return createHash(algorithm)
            .update(Buffer.from(String(ctx.stdin), 'latin1'))
            .digest('hex');
        const path = posix.resolve(ctx.cwd, f);
        const entry = await ctx.fs.stat(path).catch(() => undefined);
        if (!entry || entry.isDirectory) {
          out.err(entry ? `${name}: can't read '${f}': Is a directory\n` : `${name}: can't open '${f}': No such file or directory\n`);
          return undefined;
        }
        // A file the user may not read; any other failure is not one and goes up.
        const read = await host.fs.read(path).catch((e: unknown) => (isRefusal(e) ? undefined : Promise.reject(e)));
        if (!read) out.err(`${name}: can't open '${f}': Permission denied\n`);
        return read && createHash(algorithm).update(read).digest('hex');
      };
      if (has('c')) return checkList(name, ctx, files[0] ?? '-', digest, { silent: has('s'), warn: has('w') }, out);
      for (const f of files.length ? files : ['-']) {
        const hex = await digest(f);
        if (hex !== undefined) out.out(`${hex}  ${f}\n`);
      }
      return out.result(out.stderr ? 1 : 0);
    },
  });
  const commands: Command[] = [
    mount,
    umount,
    free,
    uptime,
    nproc,
    who,
    w,
    logname,
    groups,
    ip,
    ifconfig,
    route,
    netstat,
    ping('ping'),
    ping('ping6'),
    wget,
    nc,
    nslookup,
    pidof,
    killall,
    top,
    shutdown('reboot', 15),
    shutdown('poweroff', 12),
    shutdown('halt', 10),
    quietOk('logger'),
    quietOk('sync'),
    dmesg,
    sysctl,
    usleep,
    realpath,
    truncate,
    unlink,
    checksum('md5sum', 'md5'),
    checksum('sha1sum', 'sha1'),
    checksum('sha256sum', 'sha256'),
    checksum('sha512sum', 'sha512'),
    checksum('sha3sum', 'sha3-224'),
    // No /etc/hostid and no address for the host name: busybox prints gethostid()'s 0.
    { name: 'hostid', execute: async () => ok('00000000\n') },
  ];
  return commands;
}

/**
 * `busybox` itself: its banner and applet list (`--list`: the programs the guest runs), and
 * `busybox APPLET ARGS` runs the applet; an applet it does not have is `APPLET: applet not found`, 127.
 */
export function busyboxItself(applets: () => string[]): Command {
  return {
    name: 'busybox',
    async execute(args, ctx: CommandContext) {
      const [applet, ...rest] = args;
      if (applet === undefined || applet === '--help')
        return ok(
          `${bannerLine}\nBusyBox is copyrighted by many authors between 1998-2015.\nLicensed under GPLv2. See source distribution for detailed\ncopyright notices.\n\nUsage: busybox [function [arguments]...]\n   or: busybox --list[-full]\n   or: busybox --show SCRIPT\n   or: busybox --install [-s] [DIR]\n   or: function [arguments]...\n\n\tBusyBox is a multi-call binary that combines many common Unix\n\tutilities into a single executable.  Most people will create a\n\tlink to busybox for each function they wish to use and BusyBox\n\twill act like whatever name it was invoked as.\n`,
        );
      if (applet === '--list') return ok(`${applets().sort().join('\n')}\n`);
      if (!applets().includes(applet)) return fail(`${applet}: applet not found\n`, 127);
      return ctx.exec!([applet, ...rest].map(shellQuote).join(' '), { cwd: ctx.cwd, stdin: String(ctx.stdin), stdinKind: 'bytes' });
    },
  };
}

/** Mounts the container starts with (the first lines of /proc/mounts): the daemon's, not for a command to take off. */
const baseMounts = 4;

function parseSignal(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text) <= 64 ? Number(text) : undefined;
  return signalNumbers[text.toUpperCase().replace(/^SIG/, '')];
}

/** free -h's figures: busybox's human sizes from KiB, one decimal, units K M G T. */
function humanFree(kib: number): string {
  const units = ['K', 'M', 'G', 'T'];
  let n = kib;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  if (kib === 0) return '0';
  return u === 0 ? `${n}.0K` : `${n.toFixed(1)}${units[u]}`;
}

const toInt = (a: string): number => a.split('.').reduce((n, o) => n * 256 + Number(o), 0) >>> 0;
const toText = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
const maskBits = (bits: number): number => (bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0);
const mask = (bits: number): string => toText(maskBits(bits));
const network = (addr: string, bits: number): string => toText((toInt(addr) & maskBits(bits)) >>> 0);
const broadcast = (addr: string, bits: number): string => toText((toInt(addr) | ~maskBits(bits)) >>> 0);
