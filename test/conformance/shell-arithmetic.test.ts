import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * ash's arithmetic is C's intmax_t: 64 bits, wrapping on overflow, shifts by the count's low six
 * bits, a literal past 2^64-1 read as 0 and one in base N# wrapping, a variable's text read as an
 * expression (`010` is 8). Each answer was recorded on LXD 5.0.2 and Incus 6.0.4, which agree.
 */
const cases: ShScript[] = [
  {
    script: 'echo $((1<<40)) $((1<<31)) $((1<<32)) $((1<<63)) $((1<<64)) $((1<<65)) $((1<<-1)) $((-8>>1)) $((-1>>70))',
    stdout: '1099511627776 2147483648 4294967296 -9223372036854775808 1 2 -9223372036854775808 -4 -1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'ip=3232235777; echo $(( (ip>>24)&255 )).$(( (ip>>16)&255 )).$(( (ip>>8)&255 )).$(( ip&255 )); echo $(( 0xffffffff << 8 & 0xffffffff ))',
    stdout: '192.168.1.1\n4294967040\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'n=4294967295; echo $(( n & 0xF0F0F0F0F0 )) $(( n | (1<<35) )) $(( n ^ -1 )) $((~0)) $(( ~n ))',
    stdout: '4042322160 38654705663 -4294967296 -1 -4294967296\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo $((9223372036854775807+1)) $((2**63)) $((2**64)) $((3**40)) $((7**30)) $((2**62*2))',
    stdout: '-9223372036854775808 -9223372036854775808 0 -6289078614652622815 1576789505350337489 -9223372036854775808\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'a=12345678901234; echo $((a*a)) $((a*a/a)); x=99999999999; y=99999999; echo $((x*y))',
    stdout: '7345206944328761540 594961\n-8446744173809551615\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo $((0x7fffffffffffffff)) $((-9223372036854775807-1)) $(( (-9223372036854775807-1) / -1 )) $(( (-9223372036854775807-1) % -1 ))',
    stdout: '9223372036854775807 -9223372036854775808 -9223372036854775808 0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'echo $((12345678901234567890)) $((18446744073709551615)) $((18446744073709551616)) $((99999999999999999999)) $((0xffffffffffffffff)) $((0x10000000000000000))',
    stdout: '-6101065172474983726 -1 0 0 -1 0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo $((36#zzzzzzzzzzzzzzzz)) $((64#_________________)) $((2#1111111111111111111111111111111111111111111111111111111111111111))',
    stdout: '-2153214848064815105 -1 -1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'x=9223372036854775806; x=$((x+1)); echo $x; echo $((x+1)); i=9007199254740993; i=$((i+2)); echo $i $((i == 9007199254740994))',
    stdout: '9223372036854775807\n-9223372036854775808\n9007199254740995 0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'x=9007199254740993; echo $((x++)) $x $((++x)); let y=2**62*2 z=1; echo $? $y $z; z=9223372036854775807; let z+=1; echo $z',
    stdout: '9007199254740993 9007199254740994 9007199254740995\n0 -9223372036854775808 1\n-9223372036854775808\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'x=010; echo $((x+1)) $((x++)) $x; y=010; y=$((y+=1)); echo $y; h=0x7fffffffffffffff; echo $((h)) $((h+1))',
    stdout: '9 8 9\n9\n9223372036854775807 -9223372036854775808\n',
    stderr: '',
    exitCode: 0,
  },
  { script: 'x=08; echo $((x)); echo after', stdout: '', stderr: 'sh: arithmetic syntax error\n', exitCode: 2 },
  { script: 'x=5; echo $((x/=0)); echo after', stdout: '', stderr: 'sh: divide by zero\n', exitCode: 2 },
  { script: 'x=1; while [ $x -gt 0 ]; do x=$((x*16)); done; echo $x', stdout: '0\n', stderr: '', exitCode: 0 },
];

await conformance("the guest shell's arithmetic is ash's 64-bit integers: netmasks, large sizes, overflow", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
