"""Drives `CLIENT console REMOTE:NAME` through a pty (test/lxc-client/console.test.ts): waits for
the client's banner and for the console to be attached, plays each step, detaches with Ctrl-a q,
and prints the terminal's transcript (the probe of the attach left out) and the client's exit code
as JSON.

Usage: python3 pty-console.py CLIENT REMOTE:NAME STEP...

A step is:
  @exec COMMAND   `CLIENT exec REMOTE:NAME -- sh -c COMMAND` runs to its end (its output is not kept)
  @keys TEXT      TEXT (Python escapes) typed in one write
  @until TEXT     the next step comes once TEXT (Python escapes) ends what the terminal showed
and the session ends with Ctrl-a q (q typed until the client ends: see below).

The daemons open a console's sockets before forkconsole has attached liblxc's console, and keys
typed before that are lost: `z` is typed until one is echoed (each after the last had half a second
to come back), then Ctrl-U and Enter, which erase and end the line; the steps start once the Enter's
echo is out, and the transcript leaves all that out.
"""
import json
import os
import select
import signal
import subprocess
import sys
import time

client, target = sys.argv[1], sys.argv[2]
steps = sys.argv[3:]

master, slave = os.openpty()
pid = os.fork()
if pid == 0:
    os.close(master)
    os.login_tty(slave)
    os.execvp(client, [client, 'console', target])
# The parent keeps the pty's other end open: the transcript is read to the client's exit, not to the pty's end.
out = b''

def read_for(seconds, done=None):
    """Reads the terminal for `seconds`, or until done() holds; False once the client has closed it."""
    global out
    end = time.time() + seconds
    while time.time() < end:
        if done and done():
            return True
        r, _, _ = select.select([master], [], [], 0.02)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            out += chunk
    return bool(done and done())

def escapes(text):
    return text.encode('latin1').decode('unicode_escape').encode('latin1')

banner = b'To detach from the console, press: <ctrl>+a q\n\r'
ok = read_for(15.0, lambda: out.startswith(banner))
after = len(banner)
end = time.time() + 15
while ok and b'z' not in out[after:] and time.time() < end:
    os.write(master, b'z')
    read_for(0.5, lambda: b'z' in out[after:])
ok = ok and b'z' in out[after:]
os.write(master, b'\x15\r')
ok = ok and read_for(15.0, lambda: out.endswith(b'\r\r\r\n'))
mark = len(out)

for step in steps:
    if not ok:
        break
    if step.startswith('@exec '):
        subprocess.run([client, 'exec', target, '--', 'sh', '-c', step[len('@exec '):]], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    elif step.startswith('@keys '):
        os.write(master, escapes(step[len('@keys '):]))
    elif step.startswith('@until '):
        text = escapes(step[len('@until '):])
        ok = read_for(15.0, lambda: out.endswith(text))

# Ctrl-a q. The client looks at the first byte of each read it makes of the terminal: a read that
# starts with Ctrl-a arms it (and drops the read, a q with it if both came in one read), a read that
# starts with q once armed detaches. So q is typed until the client has ended, each after the last
# had a second to end it; a q can only come after the Ctrl-a, so none reaches the console.
os.write(master, b'\x01')
end = time.time() + 30
status = None
while status is None and time.time() < end:
    os.write(master, b'q')
    stop = time.time() + 1
    while status is None and time.time() < stop:
        read_for(0.05)
        ended, st = os.waitpid(pid, os.WNOHANG)
        if ended:
            status = st
# What the client wrote before it ended is in the pty already: take it all.
while select.select([master], [], [], 0)[0]:
    chunk = os.read(master, 4096)
    if not chunk:
        break
    out += chunk
if status is None:
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
print(json.dumps({
    'transcript': (out[:after] + out[mark:]).decode('latin1'),
    'attached': ok,
    'code': os.waitstatus_to_exitcode(status),
}))
