import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * What a program that reads its stdin leaves of a loop's or a group's stdin for the commands after
 * it, as busybox's programs on LXD 5.0.2 and Incus 6.0.4 read a pipe's or a small file's bytes all
 * at once; held to the simulator's shell (patches/README.md 111).
 */
const cases: ShScript[] = [
  // A program that reads the group's stdin takes all of a pipe's bytes: nothing is left for the next command, but what `read` left before it.
  {
    script:
      "printf 'a\\nb\\n' | { cat; cat; echo end; }; printf 'a\\nb\\n' | { head -n 1; cat; echo end; }; printf 'a\\nb\\nc\\n' | { read x; echo \"x=$x\"; xargs echo; echo end; }",
    stdout: 'a\nb\nend\na\nend\nx=a\nb c\nend\n',
    stderr: '',
    exitCode: 0,
  },
  // A program in a `while read` loop that reads the loop's stdin ends the loop; one that reads only its files leaves it.
  {
    script:
      'printf \'l1\\nl2\\nl3\\n\' | while read l; do echo "got $l"; wc -l; done; printf \'l1\\nl2\\nl3\\n\' | while read l; do echo "got $l"; grep -c x /etc/passwd; sed -n 1p /etc/passwd; done',
    stdout:
      'got l1\n2\ngot l1\n1\nroot:x:0:0:root:/root:/bin/sh\ngot l2\n1\nroot:x:0:0:root:/root:/bin/sh\ngot l3\n1\nroot:x:0:0:root:/root:/bin/sh\n',
    stderr: '',
    exitCode: 0,
  },
  // A file's bytes likewise; a program whose own stdin is redirected leaves the loop's.
  {
    script:
      'cd "$(mktemp -d)"; printf \'a\\nb\\n\' > in; { cat; cat; echo end; } < in; while read l; do echo "$l"; cat > /dev/null; done < in; while read l; do echo "$l"; tee t < /dev/null; done < in',
    stdout: 'a\nb\nend\na\na\nb\n',
    stderr: '',
    exitCode: 0,
  },
  // A program that asks for its stdin without reading it (cp's `-i` answers, a file operand, a child's) leaves it to the next `read`.
  {
    script:
      'cd "$(mktemp -d)"; printf \'a\\nb\\n\' | while read l; do echo "got $l"; cp -i /etc/passwd pw; rm -f pw; env true; timeout 5 true; base64 /etc/passwd > /dev/null; sh -c \'echo in\'; done',
    stdout: 'got a\nin\ngot b\nin\n',
    stderr: '',
    exitCode: 0,
  },
  // A pipe opened again through /dev/stdin is read once.
  {
    script:
      'echo w | (cat /dev/stdin; cat /dev/stdin; echo end); cd "$(mktemp -d)"; printf \'a\\nb\\n\' | { tee t > /dev/null; cat; echo end; cat t; }',
    stdout: 'w\nend\nend\na\nb\n',
    stderr: '',
    exitCode: 0,
  },
];

await conformance("a program that reads its loop's or group's stdin uses it up for the commands after it", (target) => {
  const name = launchPerSuite(target);
  shScripts(target, name, cases);
});
