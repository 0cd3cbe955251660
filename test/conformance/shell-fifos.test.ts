import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * Named pipes (`mkfifo`, `mknod NAME p`) as the test beds (LXD 5.0.2, Incus 6.0.4) have them: a
 * file type of their own, and an open that waits for the other end (issue #41). The cases need no
 * order between the two ends: whichever opens first waits for the other.
 */
const cases: ShScript[] = [
  // A named pipe is a file of its own type: `ls` marks it `p` and `|`, `stat` says `fifo`, `test -p` is true and `-f` false, `find -type p` finds it, and chmod, mv and `mkfifo` over it keep to that.
  {
    script:
      "cd /tmp; rm -f p; mkfifo p; ls -l p | cut -c1-10; ls -F p; stat -c '%F %s %b %A %f' p; test -p p && echo pipe; test -f p || echo notfile; test -s p || echo empty; [ -e p ] && echo exists",
    stdout: 'prw-r--r--\np|\nfifo 0 0 prw-r--r-- 11a4\npipe\nnotfile\nempty\nexists\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'cd /tmp; rm -rf d; mkdir d; mkfifo d/p; touch d/f; find d -type p; find d -type f; chmod 600 d/p; ls -l d/p | cut -c1-10; mv d/p d/q; ls -l d/q | cut -c1-10; mkfifo d/q; echo rc=$?; mknod d/r p; ls -l d/r | cut -c1-10; du -k d/q | cut -f1',
    stdout: 'd/p\nd/f\nprw-------\nprw-------\nrc=1\nprw-r--r--\n0\n',
    stderr: 'mkfifo: d/q: File exists\n',
    exitCode: 0,
  },
  {
    script: "cd /tmp; rm -f p2; mkfifo -m 0640 p2; stat -c '%a %F' p2; [ -p p2 ] || mkfifo p2; echo rc=$?; rm p2; [ -p p2 ] || echo gone",
    stdout: '640 fifo\nrc=0\ngone\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'cd /tmp; rm -f p; mkfifo p; mkdir p; echo rc=$?; mkdir -p p; echo rc=$?',
    stdout: 'rc=1\nrc=1\n',
    stderr: "mkdir: can't create directory 'p': File exists\nmkdir: can't create directory 'p': File exists\n",
    exitCode: 0,
  },
  // Opening one waits for the other end: a reader for a writer and a writer for a reader, whichever comes first; the reader
  // takes what was written. (The first case is a guard: a plain file would give the same.)
  {
    script: 'cd /tmp; rm -f p; mkfifo p; (echo hi > p) & cat p; wait; echo done',
    stdout: 'hi\ndone\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'cd /tmp; rm -f p; mkfifo p; cat p & echo hi > p; wait; echo done',
    stdout: 'hi\ndone\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'cd /tmp; rm -f p; mkfifo p; (for i in 1 2 3; do echo line$i; done > p) & while read l; do echo "got $l"; done < p; echo end',
    stdout: 'got line1\ngot line2\ngot line3\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'cd /tmp; rm -f p; mkfifo p; (read x < p; echo "x=$x") & echo value > p; wait',
    stdout: 'x=value\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'cd /tmp; rm -f p; mkfifo p; (sleep 0.3; echo x > p) & head -c 1 p; echo; wc -c < p & echo y > p; wait',
    stdout: 'x\n2\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp; rm -f p; mkfifo p; (echo data > p &); cat p | tr a-z A-Z; (printf 'a\\nb\\n' > p &); wc -l p; (echo z > p &); od -c p | head -1",
    stdout: 'DATA\n2 p\n0000000   z  \\n\n',
    stderr: '',
    exitCode: 0,
  },
  // A signal ends the wait: a job's `kill` (how it died is not held on stderr: see shell-jobs), `timeout`'s for a reader or a
  // writer; `<>` opens one without waiting. (The `kill` and `<>` cases are guards against a wait that never ends.)
  {
    script: 'cd /tmp; rm -f p; mkfifo p; cat p & pid=$!; kill $pid; wait $pid; echo rc=$?',
    stdout: 'rc=143\n',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp; rm -f p; mkfifo p; timeout 1 cat p; echo rc=$?; timeout 1 sh -c 'echo x > p'; echo rc=$?; cat p > /tmp/out & echo y > p; wait; cat /tmp/out",
    stdout: 'rc=143\nrc=143\ny\n',
    stderr: 'Terminated\nTerminated\n',
    exitCode: 0,
  },
  {
    script: 'cd /tmp; rm -f p; mkfifo p; exec 3<>p; echo rc=$?',
    stdout: 'rc=0\n',
    stderr: '',
    exitCode: 0,
  },
];

await conformance('the guest keeps named pipes as pipes: their type, and opens that wait for the other end', (target) => {
  const name = launchPerSuite(target);
  shScripts(target, name, cases);
});
