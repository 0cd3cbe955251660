"""Drives `CLIENT exec REMOTE:NAME -- sh` through a pty (the client sees a terminal, so the exec is
interactive): waits for the shell, then plays each step and prints the terminal's transcript, where in
it the last step began, and the client's exit code as JSON (test/lxc-client/pty-exec.test.ts).

Usage: [PTY_SHELL_ON_HOST=1] python3 pty-exec.py CLIENT REMOTE:NAME STEP...

A step is a line typed with Enter, or:
  @size ROWS COLS   (first step only) the terminal's size when the client starts
  @run COMMAND      (first step, or after @size) the command run instead of `sh` (split as a
                    POSIX shell splits words); the steps start once it reads the terminal
  @resize ROWS COLS the terminal is resized (TIOCSWINSZ: the client gets SIGWINCH) once the
                    shell waits for a key, and the next step waits until it has redrawn its line
  @keys TEXT        keys typed without Enter, TEXT with Python escapes (\\x1b[A is up); each
                    key is written on its own, a moment apart: an escape sequence is one key,
                    and so is ESC with the character after it (Alt-b is \\x1bb, one write, as a
                    terminal sends it)
  @write TEXT       TEXT (Python escapes) written whole in one write, then a pause (1 s, as after
                    a lone ESC: far past busybox's 50 ms windows)
  @start LINE       LINE typed with Enter; the next step comes once the line has started its
                    program or reads the terminal (a shell on this host waits for the program,
                    or sleeps in read: the builtin `read`), not at the next prompt
  @paste TEXT       TEXT (Python escapes) written whole, as a paste, while a line reads the
                    terminal; the next step waits for the prompt after the lines in it
  @line LINE        LINE typed with Enter to a program that reads on (a `read` whose line goes on
                    after a backslash): the next step comes once the terminal has echoed it
  @until TEXT       the next step comes once TEXT (Python escapes) has been written to the terminal
                    (after what the last @until waited for)
  @wait             the next step comes once the shell waits (wait4) for a program it started,
                    and every process of the line has settled
  @reads            the next step comes once the session waits for its terminal: on this host
                    every process of it sleeps, on the simulator (PTY_SIM_SOCKET, its unix
                    socket) its exec says it reads (GET /sim/terminals), so that a Ctrl-C next
                    finds the lines typed read by the program that reads them, not in the pty
  @answer TEXT      keys typed as @keys does, to a program that reads the terminal; the last one
                    ends the line (`read -n 2`'s second key), so the next step waits for the prompt
"""
import fcntl
import http.client
import json
import os
import shlex
import signal
import re
import select
import socket
import struct
import sys
import termios
import time

client, target = sys.argv[1], sys.argv[2]
steps = sys.argv[3:]
rows, cols = 0, 0
if steps and steps[0].startswith('@size '):
    rows, cols = map(int, steps[0].split()[1:])
    steps = steps[1:]
command = ['sh']
if steps and steps[0].startswith('@run '):
    command = shlex.split(steps[0][len('@run '):])
    steps = steps[1:]

def set_size(fd, r, c):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', r, c, 0, 0))

# The shell's environment carries this mark, so that a shell that runs on this host (a daemon's
# container) can be found among its processes.
marker = 'REFLEX_PTY_SESSION=%d.%d' % (os.getpid(), time.time_ns())
# PTY_SHELL_ON_HOST=1: the shell runs on this host (a daemon's container), so it must be found.
on_host = os.environ.get('PTY_SHELL_ON_HOST') == '1'
sim_socket = os.environ.get('PTY_SIM_SOCKET')

shell_pid = None

def marked():
    """The processes with the mark (the shell and the programs it started, which inherit it): pid → parent pid."""
    mark = marker.encode() + b'\0'
    found = {}
    for name in os.listdir('/proc'):
        if name.isdigit():
            try:
                with open('/proc/%s/environ' % name, 'rb') as f:
                    if mark in f.read():
                        with open('/proc/%s/stat' % name) as stat:
                            found[name] = stat.read().rsplit(')', 1)[1].split()[1]
            except OSError:
                pass
    return found

def host_shell():
    """The shell's process on this host (a daemon's container), or None (the simulator has none):
    the process with the mark whose parent has none (the lowest pid is not always the shell, for
    pids wrap at pid_max), found once."""
    global shell_pid
    if shell_pid is None:
        found = marked()
        roots = [pid for pid, parent in found.items() if parent not in found]
        shell_pid = roots[0] if len(roots) == 1 else None
    return shell_pid

def shell_syscall(pid):
    """The shell's state letter and the syscall it is in (/proc), or None once it is gone."""
    try:
        with open('/proc/%s/stat' % pid) as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
        with open('/proc/%s/syscall' % pid) as f:
            return state, f.read().split()[0]
    except OSError:
        return None

def waits_for_a_key(pid):
    """The shell sleeps in poll or read (syscalls 7 and 0): its line editor waits for a key."""
    now = shell_syscall(pid)
    return now is None or (now[0] == 'S' and now[1] in ('0', '7'))

def editor_mode(pid):
    """Whether the shell's terminal is in its line editor's mode (neither icanon nor echo), or
    unknown (the shell is gone): busybox's `read` sleeps in poll too, but on a terminal in the
    pty's own modes (canonical, or echoing)."""
    try:
        fd = os.open('/proc/%s/fd/0' % pid, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return True
    try:
        lflag = termios.tcgetattr(fd)[3]
    finally:
        os.close(fd)
    return not lflag & (termios.ICANON | termios.ECHO)

def runs_its_line(pid):
    """The shell sleeps out of its line editor, which sleeps in poll (7) with the terminal in its
    mode: in wait4 (61) for the line's program, in read (0) of a command substitution's pipe, or in
    poll with the terminal in the pty's modes (its builtin `read` waits for the terminal); and every
    process it started has settled."""
    now = shell_syscall(pid)
    if now is None:
        return True
    return now[0] == 'S' and (now[1] in ('61', '0') or (now[1] == '7' and not editor_mode(pid))) and settled(pid)

def waits_for_its_program(pid):
    """The shell sleeps in wait4 (61) for a program it started, and every process it started has settled."""
    now = shell_syscall(pid)
    return now is None or (now[1] == '61' and settled(pid))

def settled(pid):
    """Every process the shell started has settled: one that started another waits for it (wait4, or
    read of its pipe), the last sleeps (a subshell just forked has not yet taken SIGINT's default
    action, so a Ctrl-C then would leave it running), interruptibly or not (`wc` reading the pipe
    from a `cat` of the terminal sleeps in D)."""
    found = marked()
    parents = set(found.values())
    for child in found:
        if child == pid:
            continue
        state = shell_syscall(child)
        if state is None:
            continue
        if child in parents and not (state[0] == 'S' and state[1] in ('61', '0')):
            return False
        if child not in parents and state[0] not in ('S', 'D'):
            return False
    return True

def sleeps(pid):
    """The shell (or the command run instead) sleeps, and every process it started has settled."""
    now = shell_syscall(pid)
    return now is None or (now[0] in ('S', 'D') and settled(pid))

class SimConnection(http.client.HTTPConnection):
    """HTTP to the simulator's unix socket."""
    def __init__(self, path):
        super().__init__('localhost', timeout=5)
        self.socket_path = path
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(self.socket_path)

def sim_reads(started=False):
    """Every running interactive exec of the simulator waits for its terminal (GET /sim/terminals);
    `started`: and there is one (the session's exec has started: its sockets are connected)."""
    conn = SimConnection(sim_socket)
    try:
        conn.request('GET', '/sim/terminals')
        terminals = json.loads(conn.getresponse().read())['metadata']
    finally:
        conn.close()
    return (not started or len(terminals) > 0) and all(t['reads'] for t in terminals)

def until_it_reads(started=False):
    """Until the session waits for its terminal (10 s at most): see @reads. `started`: once it has
    started (the command's first read, before which the simulator lists no exec)."""
    if on_host:
        return until_the_shell(sleeps)
    end = time.time() + 10
    while sim_socket and not sim_reads(started) and time.time() < end:
        time.sleep(0.01)

def until_the_shell(waits):
    """Until the shell on this host is where `waits` says (10 s at most); the simulator has no shell
    process, and takes a resize or a key whenever it comes."""
    end = time.time() + 10
    pid = host_shell()
    # A command just started may not be there yet.
    while pid is None and on_host and time.time() < end:
        time.sleep(0.01)
        pid = host_shell()
    if pid is None and on_host:
        sys.exit('pty-exec: the shell is not among this host\'s processes (no process has %s)' % marker)
    end = time.time() + 10
    while pid and not waits(pid) and time.time() < end:
        time.sleep(0.01)

master, slave = os.openpty()
set_size(slave, rows, cols)
pid = os.fork()
if pid == 0:
    os.close(master)
    os.login_tty(slave)
    os.execvp(client, [client, 'exec', target, '--env', marker, '--', *command])
os.close(slave)
fd = master
out = b''
def read_for(seconds, done=None):
    """Reads the terminal for `seconds`, or until done(what was read since the call) holds; False once the client has closed it."""
    global out
    start = len(out)
    end = time.time() + seconds
    while time.time() < end:
        if done and done(out[start:]):
            return True
        r, _, _ = select.select([fd], [], [], 0.02)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            out += chunk
    return True

def prompted(since):
    """The shell reads a line again: busybox's line editor sends its cursor-position query (ESC [ 6 n) after every prompt."""
    return since.endswith(b'\x1b[6n')

def redrawn(since):
    """The editor has redrawn its line after a resize: it ends the redraw with clear-to-end (ESC [ J)."""
    return b'\x1b[J' in since

def answered(since):
    """The editor has taken a key: it echoed it, moved the cursor or rang the bell."""
    return len(since) > 0

# Keys that end the editor's line (Enter, Ctrl-C, Ctrl-D): until the next prompt the terminal is
# out of the editor's raw mode, so a key typed then would be the kernel's to echo, not the editor's.
LINE_ENDS = (b'\r', b'\x03', b'\x04')

def printable(key):
    """An ASCII character the line editor puts in the line and echoes (not a control key, an escape sequence or one byte of a longer character)."""
    return len(key) == 1 and 0x20 <= key[0] < 0x7f

# One key: an escape sequence (CSI with its parameters, or SS3), ESC and one character (Alt-x), or one character.
key_pattern = re.compile(rb'\x1b\[[0-9;]*[~A-Za-z]|\x1bO.|\x1b.|.', re.S)
if command == ['sh']:
    alive = read_for(10.0, prompted)
else:
    # A command other than the shell prints no prompt: its keys are typed once the client has put
    # the terminal in raw mode (before, the terminal itself would echo them) and the command runs
    # (on this host: once it sleeps in its read, or, when it became an interactive shell, as `su`
    # and `sh -c 'exec sh'` do, once that shell's line editor waits for a key; on the simulator: once
    # its exec says it reads the terminal, as @reads).
    end = time.time() + 10
    while termios.tcgetattr(fd)[3] & termios.ECHO and time.time() < end:
        read_for(0.01)
    alive = True
    if on_host:
        until_the_shell(lambda pid: runs_its_line(pid) or (waits_for_a_key(pid) and editor_mode(pid)))
    else:
        until_it_reads(started=True)
# Where the last @until step found its text.
until_mark = 0
# Where in the transcript the last step began: what the session writes after it is what it writes as
# it ends (the test admits its loss on a real daemon, canonical/lxd#11890).
last_step_at = 0
for n_step, step in enumerate(steps):
    if not alive:
        break
    if n_step == len(steps) - 1:
        last_step_at = len(out)
    if step.startswith('@resize '):
        # A window resize is a signal, not input: busybox prints its prompt and asks for the cursor
        # before it installs its SIGWINCH handler (a signal before that is ignored), and one that
        # comes before it sleeps for a key is redrawn only after the next key.
        until_the_shell(waits_for_a_key)
        set_size(fd, *map(int, step.split()[1:]))
        # The client sends the new size on SIGWINCH and busybox's editor redraws its line, ending
        # with its clear-to-end (ESC [ J); the next step waits for that redraw, however late a
        # loaded daemon passes the resize on (a fixed pause let a line be typed before it came).
        alive = read_for(10.0, redrawn)
        continue
    elif step.startswith('@start '):
        os.write(fd, step.split(' ', 1)[1].encode() + b'\r')
        # The editor ends the line (its CR LF), then the shell starts the line's program.
        alive = read_for(10.0, lambda since: b'\r\n' in since)
        until_the_shell(runs_its_line)
        continue
    elif step.startswith('@until '):
        text = step.split(' ', 1)[1].encode('latin1').decode('unicode_escape').encode('utf8')
        alive = text in out[until_mark:] or read_for(10.0, lambda since: text in out[until_mark:])
        until_mark = out.find(text, until_mark) + len(text) if text in out[until_mark:] else len(out)
        continue
    elif step == '@wait':
        until_the_shell(waits_for_its_program)
        continue
    elif step == '@reads':
        until_it_reads()
        continue
    elif step.startswith('@line '):
        os.write(fd, step.split(' ', 1)[1].encode() + b'\r')
        alive = read_for(10.0, lambda since: b'\r\n' in since)
        continue
    elif step.startswith('@keys ') or step.startswith('@write ') or step.startswith('@answer ') or step.startswith('@paste '):
        text = step.split(' ', 1)[1].encode('latin1').decode('unicode_escape').encode('utf8')
        whole = step.startswith('@write ') or step.startswith('@paste ')
        keys = [text] if whole else key_pattern.findall(text)
        for n, key in enumerate(keys):
            os.write(fd, key)
            # busybox's line editor tells keys apart by time: after ESC it waits 50 ms for the rest of
            # a sequence, and after an unknown one it drops what comes within 50 ms. A lone ESC and a
            # whole write answer nothing: they are followed by a pause far past that window, so that
            # the next key arrives apart even when a loaded machine (CI) delays the bytes before it
            # by a few hundred ms. Any other key is typed once the editor has answered it (it answers
            # after the window, so the next key is apart): a printable character it always echoes,
            # so that one is waited for however late a loaded machine sends the echo (the next step
            # may be a resize, which travels apart from the keys); a control key may be answered
            # with nothing, so after 0.2 s the next goes anyway, and so may an escape sequence, but
            # after one it does not know busybox drops what comes within 50 ms: one answered with
            # nothing is followed by the lone ESC's pause (a CI run lost the Ctrl-D typed 0.2 s after
            # F5, and the shell never ended). A key that ends the line waits for the next prompt.
            if (step.startswith('@answer ') and n == len(keys) - 1) or step.startswith('@paste '):
                alive = read_for(10.0, prompted)
            elif whole or key == b'\x1b':
                alive = read_for(1.0)
            elif key in LINE_ENDS:
                alive = read_for(10.0, prompted)
            elif printable(key):
                alive = read_for(10.0, answered)
            else:
                alive = read_for(1.0 if key.startswith(b'\x1b') else 0.2, answered)
            if not alive:
                break
        continue
    else:
        os.write(fd, step.encode() + b'\r')
    # A line typed whole: its command has run once the next prompt is out (a line the shell answers
    # with no prompt, as `exit`, ends the session). The 10 s are a bound, not a pause: a loaded
    # daemon late with the prompt must not have the next line typed before it.
    alive = read_for(10.0, prompted)
# The session ends with the shell (exit, Ctrl-D): read until the client closes the terminal, so
# that what the shell wrote last is kept however late a loaded daemon sends it (a fixed second lost
# the bell and the newline of a Ctrl-D). A session that never ends is cut after a minute.
if alive:
    read_for(60.0)
# A client still running then is ended, so that the transcript says where the session stood (a wait
# without end would leave the test nothing but its own timeout); its code is then the signal's.
ended, status = os.waitpid(pid, os.WNOHANG)
if ended == 0:
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
print(json.dumps({
    'transcript': out.decode('utf8', 'replace'),
    'lastStepAt': len(out[:last_step_at].decode('utf8', 'replace')),
    'code': os.waitstatus_to_exitcode(status),
}))
