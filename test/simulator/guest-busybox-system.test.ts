import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

/**
 * The busybox programs that show the container (issue #41 item 5), on the simulator alone: what the
 * lxc differential cannot show against the test beds (their instances have no NIC, the simulator's
 * default profile has one) and the state a command leaves. The rest is held to LXD 5.0.2 by the
 * differential's busybox steps (test/lxc-client/differential-scenario.ts).
 */
let sim: RunningSimulator;
let client: InstanceClient;

beforeAll(async () => {
  sim = await startSimulator({ timings: fastTimings });
  client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  sim.controls.addInstance({ name: 'bb', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit', 'limits.cpu': '1' } });
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

const sh = async (script: string) => (await client.exec('bb', { command: ['sh', '-c', script] })).wait({ timeoutMs: 20_000 });

describe('the busybox programs that show the container', () => {
  it('ip, ifconfig and route show the NIC the instance state shows, with its address; nothing is reachable past it', async () => {
    const state = (await client.getInstanceState('bb')) as unknown as {
      network: Record<string, { addresses: { family: string; address: string }[]; hwaddr: string }>;
    };
    const eth0 = state.network.eth0!;
    const v4 = eth0.addresses.find((a) => a.family === 'inet')!.address;
    const res = await sh('ip -4 addr show eth0; ip link; ip route; ifconfig eth0 | head -2; route -n | tail -1; ping -c1 10.0.0.1; echo $?');
    expect(res.stdout).toBe(
      '2: eth0@if12: <BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN> mtu 1500 qdisc noqueue qlen 1000\n' +
        `    link/ether ${eth0.hwaddr} brd ff:ff:ff:ff:ff:ff\n` +
        `    inet ${v4}/8 brd 127.255.255.255 scope global eth0\n` +
        '       valid_lft forever preferred_lft forever\n' +
        '1: lo: <LOOPBACK> mtu 65536 qdisc noop qlen 1000\n' +
        '    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n' +
        '2: eth0@if12: <BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN> mtu 1500 qdisc noqueue qlen 1000\n' +
        `    link/ether ${eth0.hwaddr} brd ff:ff:ff:ff:ff:ff\n` +
        `127.0.0.0/8 dev eth0 scope link  src ${v4} \n` +
        `eth0      Link encap:Ethernet  HWaddr ${eth0.hwaddr.toUpperCase()}  \n` +
        `          inet addr:${v4}  Bcast:127.255.255.255  Mask:255.0.0.0\n` +
        '127.0.0.0       0.0.0.0         255.0.0.0       U     0      0        0 eth0\n' +
        'PING 10.0.0.1 (10.0.0.1): 56 data bytes\n1\n',
    );
    expect(res.stderr).toBe('ping: sendto: Network is unreachable\n');
    expect((await sh('ip link set nosuch up')).exitCode).toBe(2);
  });

  it('a mount is listed until unmounted, from one exec to the next; the container’s own mounts stay', async () => {
    expect((await sh('mkdir -p /mnt; mount -t tmpfs tmpfs /mnt; mount | tail -1')).stdout).toBe('tmpfs on /mnt type tmpfs (rw,relatime)\n');
    const res = await sh('grep -c " /mnt " /proc/mounts; umount /mnt; echo $?; umount /mnt; umount /proc; grep -c " /mnt " /proc/mounts');
    expect(res.stdout).toBe('1\n0\n0\n');
    expect(res.stderr).toBe("umount: can't unmount /mnt: Invalid argument\numount: can't unmount /proc: Device or resource busy\n");
  });

  it('sysctl reads a key of /proc/sys and no other file of the host', async () => {
    const res = await sh('sysctl kernel.hostname; sysctl -n kernel/ostype; sysctl ../../etc/passwd; sysctl kernel..ostype; echo $?');
    expect(res.stdout).toBe('kernel.hostname = bb\nLinux\n1\n');
    expect(res.stderr).toBe("sysctl: error: '//////etc/passwd' is an unknown key\nsysctl: error: 'kernel//ostype' is an unknown key\n");
  });

  it('/proc/self is the program reading it, /proc/$$ the shell; pidof and killall see init and the shell', async () => {
    const res = await sh(
      'cat /proc/self/comm; tr "\\0" " " < /proc/self/cmdline; echo; grep Name /proc/self/status; cat /proc/$$/comm; pidof sh; killall -0 sh; echo $?',
    );
    expect(res.stdout).toBe(
      `cat\nsh -c cat /proc/self/comm; tr "\\0" " " < /proc/self/cmdline; echo; grep Name /proc/self/status; cat /proc/$$/comm; pidof sh; killall -0 sh; echo $? \nName:\tgrep\nsh\n58 1\n0\n`,
    );
    // A program run alone (no shell) reads its own name too.
    expect((await (await client.exec('bb', { command: ['cat', '/proc/self/comm'] })).wait({ timeoutMs: 20_000 })).stdout).toBe('cat\n');
    // killall of the command's own shell ends the command with the signal.
    // (init is sh too, /bin/sh /sbin/testinit, and exits on TERM: the instance stops after.)
    sim.controls.addInstance({ name: 'ka', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } });
    expect((await (await client.exec('ka', { command: ['sh', '-c', 'killall sh; echo not reached'] })).wait({ timeoutMs: 20_000 })).exitCode).toBe(
      143,
    );
    expect((await client.getInstanceState('ka')).status).toBe('Stopped');
  });

  it('nproc takes limits.cpu; free, uptime and top read the /proc the guest shows', async () => {
    const res = await sh(
      'nproc; nproc --all | grep -c "^[0-9]*$"; free | awk "NR==2{print \\$2}"; grep MemTotal /proc/meminfo | awk "{print \\$2}"; uptime | grep -c "load average: [0-9.]*, [0-9.]*, [0-9.]*$"; top -b -n1 | tail -3',
    );
    const [nproc, all, free, memTotal, uptime, ...top] = res.stdout.split('\n');
    expect({ nproc, all, uptime }).toEqual({ nproc: '1', all: '1', uptime: '1' });
    expect(free).toBe(memTotal);
    expect(top).toEqual(['   58     0 root     S     2268   0%   0% sh', '   59    58 root     R     2268   0%   0% top -b -n1', '', '']);
  });

  it('busybox runs its applets and lists them; the text programs order and pad as busybox does', async () => {
    const res = await sh(
      'busybox --list | grep -c "^ip$"; busybox sh -c "echo \\$0"; printf "b\\nB\\na\\n" | sort | tr "\\n" " "; echo; printf "a\\na\\n" | uniq -c; echo x | wc -lw; echo a b | xargs -n1; echo a | xargs -I% echo x%y',
    );
    expect(res.stdout).toBe('1\nsh\nB a b \n      2 a\n        1         1\na\nb\nxay\n');
    const opts = await sh('getopt -o ab: -l long -- -a -bx --long y; getopt -o a -- -z; shuf -i 1-3 | sort | tr "\\n" " "');
    expect(opts).toMatchObject({ stdout: " -a -b 'x' --long -- 'y'\n --\n1 2 3 ", stderr: "getopt: invalid option -- 'z'\n" });
  });

  it('the file programs busybox has and just-bash lacks (od as busybox prints it, cmp, su as root), the endless devices, SHLVL', async () => {
    const res = await sh(
      'printf "ab\\001" | od -x; printf "hi\\n" > /tmp/x; printf "hj\\n" | cmp /tmp/x -; su -c "echo \\$0 \\$HOME"; printf "a\\r\\n" | dos2unix | od -c',
    );
    expect(res.stdout).toBe('0000000 6261 0001\n0000003\n/tmp/x - differ: char 2, line 1\nsh /root\n0000000   a  \\n\n0000002\n');
    const devices = await sh(
      'a=$(head -c 8 /dev/urandom | od -An -x); b=$(head -c 8 /dev/urandom | od -An -x); [ "$a" != "$b" ] && echo fresh; head -c 3 /dev/zero | od -b; echo $SHLVL',
    );
    expect(devices.stdout).toBe('fresh\n0000000 000 000 000\n0000003\n1\n');
    const more = await sh('kill -l | sed -n 29p; kill -l 15; stat -c %s /tmp; md5sum /nosuch');
    expect(more).toMatchObject({ stdout: '29) POLL\nTERM\n4096\n', stderr: "md5sum: can't open '/nosuch': No such file or directory\n" });
  });
  it('reboot (TERM to init) stops an instance whose init exits on it, as the test beds’ init does; halt and poweroff it ignores', async () => {
    sim.controls.addInstance({ name: 'rb', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } });
    sim.controls.addInstance({ name: 'k1', status: 'Running', config: { 'raw.lxc': 'lxc.init.cmd=/sbin/testinit' } });
    const run = async (name: string, script: string) => (await client.exec(name, { command: ['sh', '-c', script] })).wait({ timeoutMs: 20_000 });
    const status = async (name: string) => (await client.getInstanceState(name)).status;
    expect(await run('rb', 'halt; poweroff; kill -USR1 1; echo $?')).toMatchObject({ stdout: '0\n', exitCode: 0 });
    expect(await status('rb')).toBe('Running');
    // The command ends first (its output and status come back), then the instance stops.
    expect(await run('rb', 'reboot; echo $?')).toMatchObject({ stdout: '0\n', exitCode: 0 });
    expect(await status('rb')).toBe('Stopped');
    expect(await run('k1', 'kill 1; echo sent')).toMatchObject({ stdout: 'sent\n', exitCode: 0 });
    expect(await status('k1')).toBe('Stopped');
  });
});
