"""Drives `CLIENT exec REMOTE:NAME -- sh` through a pty (the client sees a terminal, so the exec is
interactive): waits for the shell, types each line with Enter, and prints the terminal's transcript
and the client's exit code as JSON (test/lxc-client/pty-exec.test.ts).

Usage: python3 pty-exec.py CLIENT REMOTE:NAME LINE...
"""
import json
import os
import pty
import select
import sys
import time

client, target = sys.argv[1], sys.argv[2]
lines = sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(client, [client, 'exec', target, '--', 'sh'])
out = b''
def read_for(seconds):
    global out
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            out += chunk
    return True
read_for(1.5)
for line in lines:
    os.write(fd, line.encode() + b'\r')
    if not read_for(1.0):
        break
read_for(1.0)
_, status = os.waitpid(pid, 0)
print(json.dumps({'transcript': out.decode('utf8', 'replace'), 'code': os.waitstatus_to_exitcode(status)}))
