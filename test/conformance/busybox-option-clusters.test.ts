import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * Options clustered in one word as busybox's getopt32 reads them (`-qn1`, `-ud @0`), for the
 * programs whose command lines the simulator reads itself or hands to just-bash's (issue #41 item
 * 5). Each case was run on the test beds' busybox 1.35 on LXD 5.0.2 and Incus 6.0.4, held to the
 * simulator's.
 */
const cases: ShScript[] = [
  // tail and head: -qn1, -vn1, -qc1 in one word; a count xatol_sfx refuses.
  {
    script:
      "cd /tmp; printf 'a\\nb\\n' > u; printf 'c\\nd\\n' > c; tail -qn1 u c; tail -n1 -q u c; tail -vn1 u; head -vn1 u; head -qn1 u c; tail -c2 u; tail -nc1 u; echo $?",
    stdout: 'b\nd\nb\nd\n==> u <==\nb\n==> u <==\na\na\nc\nb\n1\n',
    stderr: "tail: invalid number 'c1'\n",
    exitCode: 0,
  },
  // date: -ud, -Rud, -ud@0, -uId, -uIseconds, -ur in one word; -I's SPEC cut short (`d`), or its usage.
  {
    script:
      "date -ud @0 '+%H:%M'; date -u -d @60 +%M; date -Rud @0; date -Iud @0; echo $?; date -ud@0 +%s; date -uId -d @0; date -uIseconds -d @0; date -ur /tmp/nosuch; echo $?",
    stdout: '00:00\n01\nThu, 01 Jan 1970 00:00:00 +0000\n1\n0\n1970-01-01\n1970-01-01T00:00:00+00:00\n1\n',
    stderr:
      "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: date [OPTIONS] [+FMT] [[-s] TIME]\n\nDisplay time (using +FMT), or set time\n\n\t-u\t\tWork in UTC (don't convert to local time)\n\t[-s] TIME\tSet time to TIME\n\t-d TIME\t\tDisplay TIME, not 'now'\n\t-D FMT\t\tFMT (strptime format) for -s/-d TIME conversion\n\t-r FILE\t\tDisplay last modification time of FILE\n\t-R\t\tOutput RFC-2822 date\n\t-I[SPEC]\tOutput ISO-8601 date\n\t\t\tSPEC=date (default), hours, minutes, seconds or ns\n\nRecognized TIME formats:\n\t@seconds_since_1970\n\thh:mm[:ss]\n\t[YYYY.]MM.DD-hh:mm[:ss]\n\tYYYY-MM-DD hh:mm[:ss]\n\t[[[[[YY]YY]MM]DD]hh]mm[.ss]\n\t'date TIME' form accepts MMDDhhmm[[YY]YY][.ss] instead\ndate: can't stat '/tmp/nosuch': No such file or directory\n",
    exitCode: 0,
  },
  // tail: suffixes, -c+N and -n+N glued, an option busybox's tail lacks.
  {
    script: 'cd /tmp; tail -n 2k u | wc -l; tail -c+2 u; tail -n+2 u; tail -qc1 u; echo; tail -fx u; echo $?',
    stdout: '2\n\nb\nb\n\n\n1\n',
    stderr:
      "tail: invalid option -- 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: tail [OPTIONS] [FILE]...\n\nPrint last 10 lines of FILEs (or stdin) to.\nWith more than one FILE, precede each with a filename header.\n\n\t-c [+]N[bkm]\tPrint last N bytes\n\t-n N[bkm]\tPrint last N lines\n\t-n +N[bkm]\tStart on Nth line and print the rest\n\t\t\t(b:*512 k:*1024 m:*1024^2)\n\t-q\t\tNever print headers\n\t-v\t\tAlways print headers\n\t-f\t\tPrint data as file grows\n\t-F\t\tSame as -f, but keep retrying\n\t-s SECONDS\tWait SECONDS between reads with -f\n",
    exitCode: 0,
  },
  // grep -r names the files it finds in a directory, not a file operand alone.
  {
    script:
      "cd /tmp; rm -rf gr; mkdir -p gr/d; printf 'a\\nb\\n' > gr/s; printf 'xa\\n' > gr/d/t; cd gr; grep -rn a s; grep -r a s d; grep -r a d; grep -rh a d s; grep -rH a s; grep -rc a s; grep -rl a s d; grep -r a; echo $?",
    stdout: '1:a\ns:a\nd/t:xa\nd/t:xa\nxa\na\ns:a\n1\ns\nd/t\n1\n',
    stderr: '',
    exitCode: 0,
  },
];

await conformance("options clustered in one word, as busybox's getopt reads them", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
