import { writeFileSync } from 'node:fs';

// @ts-check
/**
 * Preloaded into a command bench/commands.ts times (`node --import ./bench/cpu-at-exit.mjs …`;
 * plain JavaScript, so no TypeScript loader is timed with it): writes the
 * CPU the process used (user + system, ms) to BENCH_CPU_FILE as it exits, a figure a loaded
 * machine does not stretch as it stretches the wall time.
 */
const file = process.env.BENCH_CPU_FILE;
if (file)
  process.on('exit', () => {
    const u = process.cpuUsage();
    writeFileSync(file, String((u.user + u.system) / 1000));
  });
