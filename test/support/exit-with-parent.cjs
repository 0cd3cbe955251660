// Preloaded (`node --require`) into every `reflex` a test starts (test/support/reflex-process.ts).
// Its fd 3 is a pipe whose other end only the test's process holds. When that process dies — killed
// from outside, a crashed worker, a CI run stopped half-way — the pipe ends, and this process is
// sent SIGTERM, so it stops as on an operator's Ctrl-C. Without it a `reflex run` a killed test
// left behind (an installed prefix's, whose command line names no checkout) went on healing the
// shared LXD bed's instances under the next run's tests.
'use strict';
const net = require('node:net');

let pipe;
try {
  pipe = new net.Socket({ fd: 3, readable: true, writable: false });
} catch {
  pipe = undefined; // started without the pipe (by hand): nothing to watch
}
if (pipe) {
  const parentGone = () => {
    process.kill(process.pid, 'SIGTERM');
    // A shutdown that hangs must not leave it running either.
    setTimeout(() => process.exit(70), 15_000).unref();
  };
  pipe.once('end', parentGone);
  pipe.once('error', parentGone);
  pipe.resume();
  pipe.unref();
}
