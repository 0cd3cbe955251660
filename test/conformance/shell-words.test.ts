import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * Words as ash makes them: a command word from an unquoted expansion is split and globbed as the
 * arguments are (`cmd='echo hi'; $cmd`), leading and trailing IFS whitespace of an unquoted
 * expansion ends the field beside it (`p$y` with y=' q' is two words), a glob that matches nothing
 * keeps its quoted text whole; `set -e` is ignored in what runs for a tested command (a function
 * left of `||`) and, as busybox's evalbackcmd clears it, inside `$(…)`; a command substitution in
 * arithmetic runs in the shell, with its functions. Each answer was recorded on LXD 5.0.2 and
 * Incus 6.0.4, which agree.
 */
const cases: ShScript[] = [
  {
    script:
      'cmd=\'echo hi\'; $cmd there; c="ls -d"; $c /tmp; set -- "echo a b"; $1; e=\'\'; $e echo empty-first; p=\'printf <%s>\'; $p x y; echo; "$1" 2>&1',
    stdout: 'hi there\n/tmp\na b\nempty-first\n<x><y>\nsh: echo a b: not found\n',
    stderr: '',
    exitCode: 127,
  },
  {
    script: 'x=\'  a  b  \'; echo X$x; echo $x"Y"; echo [$x]; echo ["$x"]; echo [z"$x"]; y=\' q\'; echo p$y; echo "p"$y',
    stdout: 'X a b\na b Y\n[ a b ]\n[  a  b  ]\n[z  a  b  ]\np q\np q\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'x=\'a  b\'; echo *"$x"; echo "$x"*; echo ["$x"]z; z=\'*.none\'; echo $z [$z]',
    stdout: '*a  b\na  b*\n[a  b]z\n*.none [*.none]\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "x=' a b '; y='c '; printf '<%s>' $x$y; echo; printf '<%s>' \"$x\"$y; echo; printf '<%s>' $x\"$y\"; echo; printf '<%s>' a${x}b; echo",
    stdout: '<a><b><c>\n< a b c>\n<a><b><c >\n<a><a><b><b>\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "IFS=' :'; x=' :a: b :'; printf '<%s>' X$x; echo; printf '<%s>' $x; echo; printf '<%s>' X${x}Y; echo",
    stdout: '<X><a><b>\n<><a><b>\n<X><a><b><Y>\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "x='  '; printf '<%s>' A${x}B; echo; printf '<%s>' A$x; echo; printf '<%s>' $x; echo; printf '<%s>' \"\"$x; echo; printf '<%s>' $x\"\"; echo",
    stdout: '<A><B>\n<A>\n<>\n<>\n<>\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'set -e; f() { false; echo in-f; }; f || echo caught; if f; then echo y; fi; ! f; f && echo and; g() { f; }; g || true; echo mid; f; echo no',
    stdout: 'in-f\nin-f\ny\nin-f\nin-f\nand\nin-f\nmid\n',
    stderr: '',
    exitCode: 1,
  },
  {
    script: 'set -e; f() { false; echo in; }; a=$(f); echo "got $a"; echo "$(false; echo y)"; b=`f`; echo "$b"; c=$(false); echo no',
    stdout: 'got in\ny\nin\n',
    stderr: '',
    exitCode: 1,
  },
  {
    script: 'fact() { [ $1 -le 1 ] && echo 1 && return; echo $(( $1 * $(fact $(( $1 - 1 ))) )); }; fact 10; n() { echo 4; }; echo $(( $(n) + `n` ))',
    stdout: '3628800\n8\n',
    stderr: '',
    exitCode: 0,
  },
  // $(…) drops the NUL bytes of the output, as ash's expbackq does.
  {
    script:
      "printf '%s\\n' \"$(printf 'a\\0b')\" | od -c | head -1; x=$(printf '\\0\\0x\\0'); echo ${#x}; printf 'q\\0r' > /tmp/nul; y=$(cat /tmp/nul); echo \"$y\"",
    stdout: '0000000   a   b  \\n\n1\nqr\n',
    stderr: '',
    exitCode: 0,
  },
  // A glob ending in `/` matches directories alone (symlinks to them too), the slashes kept.
  {
    script:
      'mkdir -p /tmp/gd/d1 /tmp/gd/d2; touch /tmp/gd/f1; ln -s /tmp/gd/d1 /tmp/gd/l1; ln -s /tmp/gd/f1 /tmp/gd/l2; echo /tmp/gd/*/; cd /tmp/gd; echo */; echo d*/; echo */ | wc -w; echo /tmp/gd/*//; echo /tmp/nosuch/*/; ls -d /etc/*/ 2>&1; rm -r /tmp/gd',
    stdout:
      '/tmp/gd/d1/ /tmp/gd/d2/ /tmp/gd/l1/\nd1/ d2/ l1/\nd1/ d2/\n3\n/tmp/gd/d1// /tmp/gd/d2// /tmp/gd/l1//\n/tmp/nosuch/*/\nls: /etc/*/: No such file or directory\n',
    stderr: '',
    exitCode: 0,
  },
  // A case pattern's bracket expression as ash's: `[!…]` negates (as `[^…]`), a `]` first in it is literal, `[!]` alone is no bracket, classes `[[:upper:]]`.
  {
    script:
      'for v in x a 5; do case $v in [!a]) echo "$v neg";; *) echo "$v other";; esac; done; case x in [^a]) echo caret;; esac; case b in [!a-c]) echo r1;; *) echo r2;; esac; case 9 in [!0-9]*) echo nd;; *) echo d;; esac',
    stdout: 'x neg\na other\n5 neg\ncaret\nr2\nd\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "case ']' in []]) echo br;; esac; case '!' in [!]) echo ex1;; [\\!]) echo ex2;; esac; case - in [a-]) echo dash;; esac; case 'a' in [[:upper:]]) echo up;; [![:upper:]]) echo notup;; esac; case ']' in [!]a]) echo no;; *) echo yes;; esac; case b in [!]a]) echo neg2;; esac",
    stdout: 'br\nex2\ndash\nnotup\nyes\nneg2\n',
    stderr: '',
    exitCode: 0,
  },
];

await conformance('the guest shell makes words, runs command words and applies set -e as ash does', (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
