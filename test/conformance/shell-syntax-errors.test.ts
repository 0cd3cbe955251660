import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * The guest shell's syntax errors as busybox ash meets and words them (issue #41: what a script
 * with a mistake in it prints is what an operator reads first). Each case was run on the test
 * beds' busybox `sh` on LXD 5.0.2 and Incus 6.0.4 (the same answers on both), held to the
 * simulator's shell (just-bash's parser, patched: patches/README.md 64).
 */
const cases: ShScript[] = [
  // A list that ends at a token that does not close its construct: ash names what it expected; an empty one
  // (no command before the token) is the token alone. Words, newlines and redirections are named as such.
  { script: 'echo start; { echo a; fi; }', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting "}")\n', exitCode: 2 },
  { script: '{ fi; }', stdout: '', stderr: 'sh: syntax error: unexpected "fi"\n', exitCode: 2 },
  { script: '( echo a; fi )', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting ")")\n', exitCode: 2 },
  { script: 'if true; then echo; done', stdout: '', stderr: 'sh: syntax error: unexpected "done" (expecting "fi")\n', exitCode: 2 },
  { script: 'while true; do echo; fi', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting "done")\n', exitCode: 2 },
  { script: 'until false; do echo; esac', stdout: '', stderr: 'sh: syntax error: unexpected "esac" (expecting "done")\n', exitCode: 2 },
  { script: 'if true; echo; fi', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting "then")\n', exitCode: 2 },
  { script: 'for x in a; echo; done', stdout: '', stderr: 'sh: syntax error: unexpected word (expecting "do")\n', exitCode: 2 },
  { script: 'for x y in a; do echo; done', stdout: '', stderr: 'sh: syntax error: unexpected word (expecting "do")\n', exitCode: 2 },
  { script: 'while true\ndo echo; }', stdout: '', stderr: 'sh: syntax error: unexpected "}" (expecting "done")\n', exitCode: 2 },
  { script: 'f() { echo; fi; }', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting "}")\n', exitCode: 2 },
  // Inside $(…) the end of a list is always what ash expected `)` for, empty or not.
  { script: 'echo $(if true; then echo a; fi fi)', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting ")")\n', exitCode: 2 },
  { script: 'echo $(fi)', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting ")")\n', exitCode: 2 },
  { script: 'echo "$(echo; fi)"', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting ")")\n', exitCode: 2 },
  { script: 'echo $( { echo; fi; } )', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting "}")\n', exitCode: 2 },
  { script: 'echo $(echo; })', stdout: '', stderr: 'sh: syntax error: unexpected "}" (expecting ")")\n', exitCode: 2 },
  { script: 'x=$(echo a;\nfi); echo no', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting ")")\n', exitCode: 2 },
  // A case item's list ends at `;;` or `esac`.
  { script: 'case a in a) echo; fi', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting ";;")\n', exitCode: 2 },
  { script: 'case a in a) fi;; esac', stdout: '', stderr: 'sh: syntax error: unexpected "fi" (expecting ";;")\n', exitCode: 2 },
  { script: 'case a in a)', stdout: '', stderr: 'sh: syntax error: unexpected end of file (expecting ";;")\n', exitCode: 2 },
  { script: 'case', stdout: '', stderr: 'sh: syntax error: unexpected end of file (expecting word)\n', exitCode: 2 },
  { script: 'case ; esac', stdout: '', stderr: 'sh: syntax error: unexpected ";" (expecting word)\n', exitCode: 2 },
  { script: 'case a b in esac', stdout: '', stderr: 'sh: syntax error: unexpected word (expecting "in")\n', exitCode: 2 },
  // A command missing after a redirection, a here-document's `<<`, `|`, `&&`, `||`, `;` or `&`, and a second `!`.
  { script: 'echo >', stdout: '', stderr: 'sh: syntax error: unexpected end of file\n', exitCode: 2 },
  { script: 'echo a >| ;', stdout: '', stderr: 'sh: syntax error: unexpected ";"\n', exitCode: 2 },
  { script: 'cat << ;', stdout: '', stderr: 'sh: syntax error: unexpected ";"\n', exitCode: 2 },
  { script: 'cat <<\necho a', stdout: '', stderr: 'sh: syntax error: unexpected newline\n', exitCode: 2 },
  { script: 'echo a |', stdout: '', stderr: 'sh: syntax error: unexpected end of file\n', exitCode: 2 },
  { script: 'echo a ||', stdout: '', stderr: 'sh: syntax error: unexpected end of file\n', exitCode: 2 },
  { script: 'echo a | ;', stdout: '', stderr: 'sh: syntax error: unexpected ";"\n', exitCode: 2 },
  { script: 'echo a && ;', stdout: '', stderr: 'sh: syntax error: unexpected ";"\n', exitCode: 2 },
  { script: 'echo a | | cat', stdout: '', stderr: 'sh: syntax error: unexpected "|"\n', exitCode: 2 },
  { script: '( echo a | )', stdout: '', stderr: 'sh: syntax error: unexpected ")"\n', exitCode: 2 },
  { script: '{ echo a | }', stdout: '', stderr: 'sh: syntax error: unexpected "}"\n', exitCode: 2 },
  { script: 'echo a; ;', stdout: '', stderr: 'sh: syntax error: unexpected ";"\n', exitCode: 2 },
  { script: 'echo a &; echo b', stdout: '', stderr: 'sh: syntax error: unexpected ";"\n', exitCode: 2 },
  { script: '! ! echo a', stdout: '', stderr: 'sh: syntax error: unexpected "!"\n', exitCode: 2 },
  // for's variable is a plain name, and its word list ends at `;` or a newline; `if`, `while` and `elif` need a condition.
  { script: 'for ; do echo; done', stdout: '', stderr: 'sh: syntax error: bad for loop variable\n', exitCode: 2 },
  { script: 'for "x" in a; do echo $x; done', stdout: '', stderr: 'sh: syntax error: bad for loop variable\n', exitCode: 2 },
  { script: 'for x in a b & do echo; done', stdout: '', stderr: 'sh: syntax error: unexpected "&"\n', exitCode: 2 },
  { script: 'for x in a b', stdout: '', stderr: 'sh: syntax error: unexpected end of file\n', exitCode: 2 },
  { script: 'if', stdout: '', stderr: 'sh: syntax error: unexpected end of file (expecting "then")\n', exitCode: 2 },
  { script: 'if then echo; fi', stdout: '', stderr: 'sh: syntax error: unexpected "then"\n', exitCode: 2 },
  { script: 'while do echo; done', stdout: '', stderr: 'sh: syntax error: unexpected "do"\n', exitCode: 2 },
  { script: 'if true; then :; elif then :; fi', stdout: '', stderr: 'sh: syntax error: unexpected "then"\n', exitCode: 2 },
  // A function's body may be a simple command; `name (` starts a definition, which expects its `)`.
  { script: 'f() echo a > /tmp/rt-fo; f; f; cat /tmp/rt-fo; rm /tmp/rt-fo', stdout: 'a\n', stderr: '', exitCode: 0 },
  { script: 'f() ;', stdout: '', stderr: 'sh: syntax error: unexpected ";"\n', exitCode: 2 },
  { script: 'echo (', stdout: '', stderr: 'sh: syntax error: unexpected end of file (expecting ")")\n', exitCode: 2 },
  { script: 'echo (x)', stdout: '', stderr: 'sh: syntax error: unexpected word (expecting ")")\n', exitCode: 2 },
  { script: 'echo a (', stdout: '', stderr: 'sh: syntax error: unexpected "("\n', exitCode: 2 },
  // Expansions left open: `${` and `$((` (always arithmetic in ash, which has no `$((…) …)` subshell).
  { script: 'echo ${x\n}', stdout: '', stderr: 'sh: syntax error: bad substitution\n', exitCode: 2 },
  { script: 'echo ${', stdout: '', stderr: "sh: syntax error: missing '}'\n", exitCode: 2 },
  { script: 'echo $((1+2)', stdout: '', stderr: "sh: syntax error: missing '))'\n", exitCode: 2 },
  { script: 'echo $(( (1+2)', stdout: '', stderr: "sh: syntax error: missing '))'\n", exitCode: 2 },
  { script: 'echo $((echo a); echo b)', stdout: '', stderr: "sh: syntax error: missing '))'\n", exitCode: 2 },
  { script: 'echo $((1 +\n2))', stdout: '3\n', stderr: '', exitCode: 0 },
  // select and coproc are not ash's keywords.
  { script: 'select x in a b; do echo $x; done', stdout: '', stderr: 'sh: syntax error: unexpected "do"\n', exitCode: 2 },
  { script: 'select x; echo $?', stdout: '127\n', stderr: 'sh: select: not found\n', exitCode: 0 },
  { script: 'coproc echo a; echo $?', stdout: '127\n', stderr: 'sh: coproc: not found\n', exitCode: 0 },
  // A syntax error in eval's text is the shell's: it ends a shell that is not interactive (not under `command`,
  // and a subshell or $(…) alone), named `eval` with ash's line (the eval's line, counted from 0, plus the
  // text's); the text's whole lines before the error's run first.
  { script: "echo start; eval 'if then'; echo after", stdout: 'start\n', stderr: 'sh: eval: line 0: syntax error: unexpected "then"\n', exitCode: 2 },
  { script: "eval 'x=1; fi'; echo $?", stdout: '', stderr: 'sh: eval: line 0: syntax error: unexpected "fi"\n', exitCode: 2 },
  { script: "echo a\necho b\neval 'fi'", stdout: 'a\nb\n', stderr: 'sh: eval: line 2: syntax error: unexpected "fi"\n', exitCode: 2 },
  { script: "eval 'echo a\necho b; fi'", stdout: 'a\n', stderr: 'sh: eval: line 1: syntax error: unexpected "fi"\n', exitCode: 2 },
  { script: "eval 'echo a\nif'", stdout: 'a\n', stderr: 'sh: eval: line 1: syntax error: unexpected end of file (expecting "then")\n', exitCode: 2 },
  { script: "f() { eval 'then'; }; f; echo after", stdout: '', stderr: 'sh: eval: line 0: syntax error: unexpected "then"\n', exitCode: 2 },
  { script: 'eval "echo \'a"', stdout: '', stderr: 'sh: eval: line 0: syntax error: unterminated quoted string\n', exitCode: 2 },
  { script: "eval 'echo $(echo; fi)'", stdout: '', stderr: 'sh: eval: line 0: syntax error: unexpected "fi" (expecting ")")\n', exitCode: 2 },
  { script: "eval 'case'; echo after", stdout: '', stderr: 'sh: eval: line 0: syntax error: unexpected end of file (expecting word)\n', exitCode: 2 },
  { script: "command eval 'fi'; echo after $?", stdout: 'after 2\n', stderr: 'sh: eval: line 0: syntax error: unexpected "fi"\n', exitCode: 0 },
  { script: "(eval 'fi'); echo after $?", stdout: 'after 2\n', stderr: 'sh: eval: line 0: syntax error: unexpected "fi"\n', exitCode: 0 },
  { script: "x=$(eval 'fi'); echo after $?", stdout: 'after 2\n', stderr: 'sh: eval: line 0: syntax error: unexpected "fi"\n', exitCode: 0 },
  { script: "if true; then eval 'done'; fi; echo after", stdout: '', stderr: 'sh: eval: line 0: syntax error: unexpected "done"\n', exitCode: 2 },
  { script: "eval 'done' 2>/dev/null; echo after", stdout: '', stderr: '', exitCode: 2 },
  { script: "eval 'x=(1 2)'; echo after", stdout: '', stderr: 'sh: eval: line 0: syntax error: unexpected "("\n', exitCode: 2 },
  { script: "command eval 'x=(1 2)'; echo after $?", stdout: 'after 2\n', stderr: 'sh: eval: line 0: syntax error: unexpected "("\n', exitCode: 0 },
  { script: "eval 'echo ${x^^}'; echo after $?", stdout: '', stderr: 'sh: eval: line 0: syntax error: bad substitution\n', exitCode: 2 },
  {
    script: "echo start; eval 'echo ('; echo after $?",
    stdout: 'start\n',
    stderr: 'sh: eval: line 0: syntax error: unexpected end of file (expecting ")")\n',
    exitCode: 2,
  },
  // bash's case fallthrough (`;&`, `;;&`) is no ash syntax.
  { script: 'case b in b) echo b;;& esac; echo rc=$?', stdout: '', stderr: 'sh: syntax error: unexpected word (expecting ")")\n', exitCode: 2 },
  { script: 'case b in b) echo b;;&\nesac', stdout: '', stderr: 'sh: syntax error: unexpected newline (expecting ")")\n', exitCode: 2 },
  { script: 'case b in b) echo b;;& x) echo x;; esac', stdout: '', stderr: 'sh: syntax error: unexpected word (expecting ")")\n', exitCode: 2 },
  { script: 'case b in b) echo b ;& esac', stdout: '', stderr: 'sh: syntax error: unexpected "&"\n', exitCode: 2 },
  { script: 'case b in a) echo a;& b) echo b;; esac; echo rc=$?', stdout: '', stderr: 'sh: syntax error: unexpected "&"\n', exitCode: 2 },
  // A backquoted list ends at a token that ends a list (`done`, `fi`, `}`, `)` …): ash runs what came before and drops the rest of the text, no error.
  {
    script:
      'x=`echo a; done`; echo "[$x] $?"; echo `echo a; fi`; echo `echo b; }`; x=`echo c )`; echo "[$x]"; for i in 1; do echo `echo d; done`; done',
    stdout: '[a] 0\na\nb\n[c]\nd\n',
    stderr: '',
    exitCode: 0,
  },
  // The same on a later line of the text, after `;;`, and what follows the token is not run; whole constructs inside run as usual.
  {
    script: 'echo `echo a; }; echo c`; echo `echo a\ndone\necho c`; echo `{ echo a; }`; echo `if true; then echo t; fi`; echo `echo e;; echo f`',
    stdout: 'a\na\na\nt\ne\n',
    stderr: '',
    exitCode: 0,
  },
  // The end of a command substitution's text is the `)` ash meets there: `unexpected ")"`, with what it expected where a construct's list ended.
  { script: 'x=$(if true; then echo); echo not', stdout: '', stderr: 'sh: syntax error: unexpected ")" (expecting "fi")\n', exitCode: 2 },
  { script: 'x=$(echo a; if); echo not', stdout: '', stderr: 'sh: syntax error: unexpected ")"\n', exitCode: 2 },
  { script: 'x=$(while); echo not', stdout: '', stderr: 'sh: syntax error: unexpected ")"\n', exitCode: 2 },
  { script: 'x=$( { echo a ); echo not', stdout: '', stderr: 'sh: syntax error: unexpected ")" (expecting "}")\n', exitCode: 2 },
  { script: 'x=$(for i in); echo not', stdout: '', stderr: 'sh: syntax error: unexpected ")"\n', exitCode: 2 },
  { script: 'x=$(echo |); echo not', stdout: '', stderr: 'sh: syntax error: unexpected ")"\n', exitCode: 2 },
  { script: 'x=$(while true; do echo); echo not', stdout: '', stderr: 'sh: syntax error: unexpected ")" (expecting "done")\n', exitCode: 2 },
  { script: 'x=$(until false; do :); echo not', stdout: '', stderr: 'sh: syntax error: unexpected ")" (expecting "done")\n', exitCode: 2 },
  { script: 'echo "$(if true; then echo a; fi)" "$(f() { echo b; }; f)"', stdout: 'a b\n', stderr: '', exitCode: 0 },
];

await conformance('the guest shell meets and words a syntax error as busybox ash does', (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
