import { isUtf8 } from 'node:buffer';
import type { Command, CommandContext, ExecResult, IFileSystem } from 'just-bash';
import { shellQuote } from './program-run.js';

/** What just-bash's fetch hook answers (just-bash does not export the type by this name). */
interface FetchResult {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Uint8Array;
  url: string;
}

/**
 * `python3` in a guest whose image carries one (the image property `reflex.python`, copied into
 * the instance's `image.reflex.python`, names its path, as the test bed's `reflex-test-python`
 * image says `/usr/bin/python3`): a real CPython (just-bash's CPython 3.13 compiled to WASM, which
 * runs in a worker thread with the guest's filesystem mounted at `/host`), made to see the guest
 * as a process in it would:
 *
 * - the guest's root is the interpreter's root: each top-level entry of the guest becomes a symlink
 *   `/NAME -> /host/NAME` in the WASM's own filesystem (all but the interpreter's `/lib`, `/dev`
 *   and `/proc`), so every path-taking call (`open`, `io.open_code`, zipimport, `os.rename`,
 *   `os.scandir` …) reaches the guest's file at the lowest level; just-bash's own redirection of a
 *   few functions is taken back, and `os.getcwd` and `os.path.realpath` drop the `/host` the
 *   symlinks resolve through;
 * - `pwd` and `grp` read the guest's `/etc/passwd` and `/etc/group`; `fcntl` is a module whose calls
 *   succeed without effect (the WASM has no descriptor flags nor locks);
 * - `subprocess.Popen` runs its command in the same guest (the guest's shell, as `exec` runs one),
 *   through just-bash's HTTP bridge of the interpreter (a request to a private URL that only this
 *   command answers); the child's stdin is what the caller wrote and closed, its stdout and stderr
 *   come back as files in the WASM's memory, complete when the command ended (so a selector sees
 *   them readable at once and reads them to their end);
 * - then the program the arguments name runs: a script file (`python3 FILE ARGS`), `-c CODE`, `-m
 *   MODULE`, or the script on stdin, with `sys.argv` as given.
 *
 * It recognises no program: what runs is whatever Python the guest is given.
 */

/** The URL the interpreter's Popen asks to run a command in the guest (answered by this command only). */
const execUrl = 'http://guest-exec.invalid/run';

/** Where the interpreter's stdout and stderr go, byte for byte. */
const outUrl = 'http://guest-exec.invalid/out';

/** How long one interpreter may run (just-bash's own default is 30 s; an Ansible module takes ~5 s). */
const pythonTimeoutMs = 600_000;

/** Options that take no value and change nothing here (`-B`, `-E`, `-s`, `-u` …). */
const plainOptions = new Set(['-B', '-E', '-I', '-O', '-OO', '-P', '-q', '-s', '-S', '-u', '-v', '-b', '-bb', '-d', '-i', '-R', '-x']);

type JustBash = typeof import('just-bash');

/** What the interpreter is asked to run. */
type Program = { code: string } | { module: string } | { path: string } | { stdin: true };

/** The guest's `python3` at `path` (its name, and the command `python3` on PATH). */
export function pythonCommand(path: string, justBash: JustBash, owner: { uid: number; gid: number }): Command {
  return {
    name: 'python3',
    async execute(args: string[], ctx: CommandContext): Promise<ExecResult> {
      let i = 0;
      let program: Program | undefined;
      for (; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-V' || a === '--version') return { stdout: 'Python 3.13.2\n', stderr: '', exitCode: 0 };
        if (a === '-c' || a === '-m') {
          const value = args[i + 1];
          if (value === undefined) return { stdout: '', stderr: `Argument expected for the ${a} option\n`, exitCode: 2 };
          program = a === '-c' ? { code: value } : { module: value };
          i += 2;
          break;
        }
        if (a === '-W' || a === '-X') {
          i++;
          continue;
        }
        if (a === '-') {
          program = { stdin: true };
          i++;
          break;
        }
        if (a.startsWith('-') && !plainOptions.has(a)) return { stdout: '', stderr: `Unknown option: ${a}\n`, exitCode: 2 };
        if (!a.startsWith('-')) {
          program = { path: a };
          i++;
          break;
        }
      }
      program ??= { stdin: true };
      const rest = args.slice(i);
      const argv0 = 'code' in program ? '-c' : 'module' in program ? '-m' : 'path' in program ? program.path : '-';
      const stdin = String(ctx.stdin);
      const spec = {
        program: 'stdin' in program ? { code: stdin, name: '<stdin>' } : program,
        argv: [argv0, ...rest],
        executable: path,
        uid: owner.uid,
        gid: owner.gid,
      };
      const output: Record<1 | 2, Buffer[]> = { 1: [], 2: [] };
      const bash = new justBash.Bash({
        fs: withoutSyncWrites(ctx.fs),
        cwd: ctx.cwd,
        env: {},
        python: true,
        defenseInDepth: false,
        commands: [],
        fetch: async (url, options) => {
          if (url !== outUrl) return runInGuest(url, options?.body, ctx);
          const { fd, data } = JSON.parse(options?.body ?? '{}') as { fd: number; data: string };
          output[fd === 2 ? 2 : 1].push(Buffer.from(data, 'base64'));
          return answer(url, 200, {});
        },
        executionLimits: { maxPythonTimeoutMs: pythonTimeoutMs },
      });
      const result = await bash.exec('python3', {
        env: Object.fromEntries(ctx.env),
        replaceEnv: true,
        cwd: ctx.cwd,
        args: ['-c', `${shim}\n_reflex_main(${JSON.stringify(JSON.stringify(spec))})\n`],
        stdin: 'stdin' in program ? '' : stdin,
        stdinKind: 'bytes',
        signal: ctx.signal,
        rawScript: true,
      });
      // What reached the WASM's own descriptors (a failure to start, os.write(1, …)) comes first.
      const [out, err] = [Buffer.concat(output[1]), Buffer.concat(output[2])];
      // Bytes that are not UTF-8 make the output bytes, one character a byte, the text before them in UTF-8.
      const raw = !isUtf8(out);
      return {
        stdout: raw ? Buffer.concat([Buffer.from(result.stdout), out]).toString('latin1') : result.stdout + out.toString('utf8'),
        stderr: result.stderr + textOf(err),
        exitCode: result.exitCode,
        ...(raw ? { stdoutKind: 'bytes' as const } : {}),
      };
    },
  };
}

/** Variables the shell keeps itself (read-only in just-bash): not passed on as assignments. */
const shellOwn = new Set(['SHELLOPTS', 'BASHOPTS', 'BASH_VERSINFO', 'EUID', 'UID', 'PPID']);

/** One command the interpreter's Popen runs. */
interface ExecRequest {
  argv: string[];
  cwd?: string;
  env: Record<string, string>;
  /** Base64. */
  stdin: string;
}

/** Answers the interpreter's Popen: runs its command in the guest, through the guest's own shell. */
async function runInGuest(url: string, body: string | undefined, ctx: CommandContext): Promise<FetchResult> {
  const reply = (status: number, value: unknown): FetchResult => answer(url, status, value);
  if (url !== execUrl || !body || !ctx.exec) return reply(404, { error: 'no network in the guest' });
  const req = JSON.parse(body) as ExecRequest;
  // The environment as assignments before the program: the program (a shell too) gets it exported.
  const assignments = Object.entries(req.env)
    .filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !shellOwn.has(k))
    .map(([k, v]) => `${k}=${shellQuote(v)} `)
    .join('');
  const run = await ctx.exec(assignments + req.argv.map(shellQuote).join(' '), {
    cwd: req.cwd ?? ctx.cwd,
    env: req.env,
    replaceEnv: true,
    stdin: Buffer.from(req.stdin, 'base64').toString('latin1'),
    stdinKind: 'bytes',
  });
  // A program the shell cannot find: Popen raises FileNotFoundError, as the kernel's execve fails.
  const notFound = run.exitCode === 127 && /: (command )?not found\n?$|No such file or directory\n?$/.test(run.stderr) && run.stdout === '';
  return reply(200, {
    rc: run.exitCode,
    notFound,
    stdout: bytesOf(run.stdout).toString('base64'),
    stderr: bytesOf(run.stderr).toString('base64'),
  });
}

/** The bridge's answer to the interpreter: JSON. */
function answer(url: string, status: number, value: unknown): FetchResult {
  return {
    status,
    statusText: status === 200 ? 'OK' : 'Not Found',
    headers: { 'content-type': 'application/json' },
    body: new TextEncoder().encode(JSON.stringify(value)),
    url,
  };
}

/** Output bytes as just-bash carries them: valid UTF-8 as text, anything else one character per byte. */
function textOf(bytes: Buffer): string {
  return isUtf8(bytes) ? bytes.toString('utf8') : bytes.toString('latin1');
}

/**
 * The guest's filesystem without its synchronous writers: a Bash made over it then lays out
 * nothing (just-bash writes `/bin/NAME` stubs and `/dev`, `/proc` entries into a filesystem that has them).
 */
function withoutSyncWrites(fs: IFileSystem): IFileSystem {
  return new Proxy(fs, {
    get(target, prop, receiver) {
      if (prop === 'writeFileSync' || prop === 'mkdirSync') return undefined;
      return Reflect.get(target, prop, receiver) as unknown;
    },
    has(target, prop) {
      return prop === 'writeFileSync' || prop === 'mkdirSync' ? false : Reflect.has(target, prop);
    },
  });
}

/**
 * The bytes of just-bash's output text, read as the guest reads a command's output (guests.ts):
 * valid UTF-8 comes decoded, anything else one character per byte; text in the Latin-1 range is
 * UTF-8 unless it also carries control bytes (binary).
 */
function bytesOf(text: string): Buffer {
  // eslint-disable-next-line no-control-regex
  const binary = !/[^\u0000-\u00ff]/.test(text) && /[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/.test(text) && /[\u0080-\u00ff]/.test(text);
  return Buffer.from(text, binary ? 'latin1' : 'utf8');
}

/**
 * The Python that runs before the program (see the module's comment). It runs inside just-bash's
 * wrapper (a `try:` around its own set-up), so it defines functions and names that start with
 * `_reflex`, and leaves the program's globals alone.
 */
const shim = String.raw`
def _reflex_main(spec_json):
    import builtins, io, _io, os, posix, sys, json, types, collections
    spec = json.loads(spec_json)
    g = globals()

    # 1. Take back just-bash's redirection of a few functions to /host: the guest becomes the root.
    builtins.open = io.open = _io.open
    io.open_code = _io.open_code
    for name in ('listdir', 'mkdir', 'remove', 'rmdir', 'getcwd', 'chdir', 'scandir'):
        setattr(os, name, getattr(posix, name))
    import glob, shutil
    from pathlib import Path
    for mod, name, orig in ((os, 'makedirs', '_orig_makedirs'), (os, 'walk', '_orig_walk'), (os.path, 'exists', '_orig_exists'),
                            (os.path, 'isfile', '_orig_isfile'), (os.path, 'isdir', '_orig_isdir'), (glob, 'glob', '_orig_glob'),
                            (glob, 'iglob', '_orig_iglob'), (shutil, 'copy', '_orig_shutil_copy'), (shutil, 'copy2', '_orig_shutil_copy2'),
                            (shutil, 'copyfile', '_orig_shutil_copyfile'), (shutil, 'copytree', '_orig_shutil_copytree'),
                            (shutil, 'move', '_orig_shutil_move'), (shutil, 'rmtree', '_orig_shutil_rmtree')):
        if orig in g:
            setattr(mod, name, g[orig])
    for name in [a for a in vars(Path) if a.startswith('_orig_')]:
        setattr(Path, name[len('_orig_'):], getattr(Path, name))

    cwd = posix.getcwd()
    keep = {'lib', 'dev', 'proc', 'host', '_jb_http', '_reflex'}

    def clear(p):
        for n in posix.listdir(p):
            c = p + '/' + n
            if posix.lstat(c).st_mode & 0o170000 == 0o040000:
                clear(c)
                posix.rmdir(c)
            else:
                posix.unlink(c)

    for n in posix.listdir('/host'):
        if n in keep:
            continue
        p = '/' + n
        try:
            if posix.lstat(p).st_mode & 0o170000 == 0o040000:
                clear(p)
                posix.rmdir(p)
            else:
                posix.unlink(p)
        except FileNotFoundError:
            pass
        posix.symlink('/host/' + n, p)
    posix.chdir(cwd)

    def strip(p):
        if isinstance(p, bytes):
            return (p[5:] or b'/') if p == b'/host' or p.startswith(b'/host/') else p
        return (p[5:] or '/') if p == '/host' or p.startswith('/host/') else p

    os.getcwd = lambda: strip(posix.getcwd())
    os.getcwdb = lambda: strip(posix.getcwdb())
    import posixpath
    realpath = posixpath.realpath
    posixpath.realpath = os.path.realpath = lambda p, *a, **k: strip(realpath(p, *a, **k))
    sys.executable = spec['executable']
    # A directory's size is 4096, as the guest's stat and ls say (the files' store keeps none).
    extra = ('st_atime', 'st_mtime', 'st_ctime', 'st_atime_ns', 'st_mtime_ns', 'st_ctime_ns', 'st_blksize', 'st_blocks', 'st_rdev')

    def sized(fn):
        def stat(*a, **k):
            st = fn(*a, **k)
            if st.st_mode & 0o170000 != 0o040000 or st.st_size:
                return st
            fields = list(st[:10])
            fields[6] = 4096
            return os.stat_result(fields, {n: getattr(st, n) for n in extra if hasattr(st, n)})
        return stat

    os.stat, os.lstat, os.fstat = sized(posix.stat), sized(posix.lstat), sized(posix.fstat)
    # The process's ids (the WASM's are always 0) and what the WASM lacks of them.
    uid, gid = spec['uid'], spec['gid']
    os.getuid = os.geteuid = lambda: uid
    os.getgid = os.getegid = lambda: gid
    os.getgroups = lambda: [gid]
    if not hasattr(os, 'lchown'):
        os.lchown = lambda path, u, g: os.chown(path, u, g, follow_symlinks=False)

    # 2. pwd and grp from the guest's files; fcntl without effect.
    def table(path, fields, convert):
        rows = []
        try:
            with _io.open(path, encoding='utf-8', errors='surrogateescape') as f:
                for line in f:
                    parts = line.rstrip('\n').split(':')
                    if len(parts) == len(fields):
                        rows.append(convert(parts))
        except OSError:
            pass
        return rows

    pwd = types.ModuleType('pwd')
    pwd.struct_passwd = collections.namedtuple('struct_passwd', 'pw_name pw_passwd pw_uid pw_gid pw_gecos pw_dir pw_shell')
    users = lambda: table('/etc/passwd', pwd.struct_passwd._fields, lambda p: pwd.struct_passwd(p[0], p[1], int(p[2]), int(p[3]), p[4], p[5], p[6]))
    pwd.getpwall = users
    def finder(rows, field, message):
        def find(key):
            for row in rows():
                if getattr(row, field) == key:
                    return row
            raise KeyError(message % key)
        return find
    pwd.getpwuid = finder(users, 'pw_uid', 'getpwuid(): uid not found: %d')
    pwd.getpwnam = finder(users, 'pw_name', "getpwnam(): name not found: '%s'")
    grp = types.ModuleType('grp')
    grp.struct_group = collections.namedtuple('struct_group', 'gr_name gr_passwd gr_gid gr_mem')
    groups = lambda: table('/etc/group', ('n', 'p', 'g', 'm'), lambda p: grp.struct_group(p[0], p[1], int(p[2]), [m for m in p[3].split(',') if m]))
    grp.getgrall = groups
    grp.getgrgid = finder(groups, 'gr_gid', 'getgrgid(): gid not found: %d')
    grp.getgrnam = finder(groups, 'gr_name', "getgrnam(): name not found: '%s'")
    fcntl = types.ModuleType('fcntl')
    for name, value in (('F_DUPFD', 0), ('F_GETFD', 1), ('F_SETFD', 2), ('F_GETFL', 3), ('F_SETFL', 4), ('F_GETLK', 5), ('F_SETLK', 6),
                        ('F_SETLKW', 7), ('FD_CLOEXEC', 1), ('LOCK_SH', 1), ('LOCK_EX', 2), ('LOCK_NB', 4), ('LOCK_UN', 8)):
        setattr(fcntl, name, value)
    fcntl.fcntl = lambda fd, cmd, arg=0: arg if isinstance(arg, (bytes, bytearray)) else 0
    fcntl.ioctl = lambda fd, request, arg=0, mutate_flag=True: arg if isinstance(arg, (bytes, bytearray)) else 0
    fcntl.flock = lambda fd, operation: None
    fcntl.lockf = lambda fd, cmd, len=0, start=0, whence=0: None
    for name, mod in (('pwd', pwd), ('grp', grp), ('fcntl', fcntl)):
        if name not in sys.modules:
            sys.modules[name] = mod

    # 3. subprocess.Popen runs the command in the guest (the HTTP bridge's private URL).
    import subprocess, base64, errno, itertools
    try:
        posix.mkdir('/_reflex')
    except FileExistsError:
        pass
    counter = itertools.count(1)

    def bridge(url, body):
        req = json.dumps({'url': url, 'method': 'POST', 'headers': None, 'body': json.dumps(body)})
        with _io.open('/_jb_http/request', 'w') as f:
            f.write(req)
        with _io.open('/_jb_http/request', 'r') as f:
            resp = json.loads(f.read())
        if 'bodyBase64' not in resp:
            raise OSError(errno.EIO, resp.get('error', 'the guest did not answer'))
        return json.loads(base64.b64decode(resp['bodyBase64']))

    def guest_exec(argv, cwd, env, stdin):
        return bridge(${JSON.stringify(execUrl)}, {'argv': argv, 'cwd': cwd, 'env': env, 'stdin': base64.b64encode(stdin).decode()})

    # stdout and stderr byte for byte through the bridge too (the WASM's own descriptors 1 and 2
    # end every write at a newline and decode it as text).
    class GuestOut(io.RawIOBase):
        def __init__(self, fd):
            self._fd = fd
        def writable(self):
            return True
        def fileno(self):
            return self._fd
        def write(self, b):
            b = bytes(b)
            if b:
                bridge(${JSON.stringify(outUrl)}, {'fd': self._fd, 'data': base64.b64encode(b).decode()})
            return len(b)

    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(GuestOut(1), 65536), encoding='utf-8', errors='surrogateescape')
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(GuestOut(2), 65536), encoding='utf-8', errors='backslashreplace', line_buffering=True)

    class StdinPipe(io.BytesIO):
        def __init__(self, proc):
            super().__init__()
            self._proc = proc
        def close(self):
            if not self.closed:
                self._proc._input = self.getvalue()
                super().close()
                self._proc._run()

    class Popen:
        def __init__(self, args, bufsize=-1, executable=None, stdin=None, stdout=None, stderr=None, preexec_fn=None, close_fds=True,
                     shell=False, cwd=None, env=None, universal_newlines=None, startupinfo=None, creationflags=0, restore_signals=True,
                     start_new_session=False, pass_fds=(), *, user=None, group=None, extra_groups=None, encoding=None, errors=None,
                     text=None, umask=-1, pipesize=-1, process_group=None):
            self.args = args
            if isinstance(args, (str, bytes, os.PathLike)):
                argv = [os.fsdecode(args)]
            else:
                argv = [os.fsdecode(a) for a in args]
            if shell:
                argv = [os.fsdecode(executable) if executable else '/bin/sh', '-c'] + argv
            elif executable:
                argv[0] = os.fsdecode(executable)
            self._argv = argv
            self._cwd = os.fsdecode(os.path.abspath(cwd)) if cwd is not None else os.getcwd()
            self._env = {os.fsdecode(k): os.fsdecode(v) for k, v in (os.environ if env is None else env).items()}
            self._text = bool(text or universal_newlines or encoding or errors)
            self._encoding, self._errors = encoding, errors
            self._stdout_to, self._stderr_to = stdout, stderr
            self.pid = 100 + next(counter)
            self.returncode = None
            self._input = b''
            self._ran = False
            self.stdin = self.stdout = self.stderr = None
            self._files = {}
            for name, target in (('stdout', stdout), ('stderr', stderr)):
                if target == subprocess.PIPE:
                    path = '/_reflex/%d.%s' % (self.pid, name)
                    _io.open(path, 'wb').close()
                    self._files[name] = path
                    f = _io.open(path, 'rb')
                    if self._text:
                        f = io.TextIOWrapper(f, encoding=encoding or 'utf-8', errors=errors or 'strict')
                    setattr(self, name, f)
            if stdin == subprocess.PIPE:
                self.stdin = StdinPipe(self)
                if self._text:
                    self.stdin = io.TextIOWrapper(self.stdin, encoding=encoding or 'utf-8', errors=errors or 'strict', write_through=True)
            else:
                if stdin not in (None, subprocess.DEVNULL):
                    fd = stdin if isinstance(stdin, int) else stdin.fileno()
                    chunks = []
                    while True:
                        b = os.read(fd, 65536)
                        if not b:
                            break
                        chunks.append(b)
                    self._input = b''.join(chunks)
                self._run()

        def _run(self):
            if self._ran:
                return
            self._ran = True
            result = guest_exec(self._argv, self._cwd, self._env, self._input)
            if result['notFound']:
                raise FileNotFoundError(2, 'No such file or directory', self._argv[0])
            out = base64.b64decode(result['stdout'])
            err = base64.b64decode(result['stderr'])
            if self._stderr_to == subprocess.STDOUT:
                out, err = out + err, b''
            for name, data, target in (('stdout', out, self._stdout_to), ('stderr', err, self._stderr_to)):
                if name in self._files:
                    with _io.open(self._files[name], 'wb') as f:
                        f.write(data)
                elif target is None:
                    stream = sys.stdout if name == 'stdout' else sys.stderr
                    stream.flush()
                    stream.buffer.write(data)
                    stream.flush()
                elif target not in (subprocess.DEVNULL, subprocess.STDOUT):
                    fd = target if isinstance(target, int) else target.fileno()
                    os.write(fd, data)
            self.returncode = result['rc']

        def poll(self):
            if self.stdin is None or self.stdin.closed:
                self._run()
            return self.returncode

        def wait(self, timeout=None):
            if self.stdin is not None and not self.stdin.closed:
                self.stdin.close()
            self._run()
            return self.returncode

        def communicate(self, input=None, timeout=None):
            if self.stdin is not None and not self.stdin.closed:
                if input:
                    self.stdin.write(input)
                self.stdin.close()
            self._run()
            out = self.stdout.read() if self.stdout is not None else None
            err = self.stderr.read() if self.stderr is not None else None
            for f in (self.stdout, self.stderr):
                if f is not None:
                    f.close()
            return out, err

        def send_signal(self, sig):
            pass

        def terminate(self):
            pass

        def kill(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            for f in (self.stdout, self.stderr, self.stdin):
                if f is not None:
                    f.close()
            self.wait()

    subprocess.Popen = Popen

    # 4. The program. An exception it does not catch is printed from its own frames on, as python3 does.
    import runpy, traceback
    sys.argv = spec['argv']
    program = spec['program']
    try:
        _reflex_run(program, spec, runpy, types, builtins)
    except SystemExit:
        raise
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in ('/tmp/_jb_script.py', '<frozen runpy>'):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        raise SystemExit(1)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass


def _reflex_run(program, spec, runpy, types, builtins):
    import os, sys
    if 'path' in program:
        path = program['path']
        if not os.path.exists(path):
            sys.stderr.write("%s: can't open file %r: [Errno 2] No such file or directory\n" % (spec['executable'], os.path.join(os.getcwd(), path)))
            raise SystemExit(2)
        sys.path[0:0] = [os.path.dirname(os.path.realpath(path))]
        runpy.run_path(path, run_name='__main__')
    elif 'module' in program:
        sys.path[0:0] = [os.getcwd()]
        runpy.run_module(program['module'], run_name='__main__', alter_sys=True)
    else:
        sys.path[0:0] = ['']
        main = types.ModuleType('__main__')
        main.__builtins__ = builtins
        sys.modules['__main__'] = main
        exec(compile(program['code'], program.get('name', '<string>'), 'exec'), main.__dict__)
`;
