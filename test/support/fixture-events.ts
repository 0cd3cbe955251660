import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The 385 frames captured from a real LXD 5.0.2 daemon, as raw text lines (copied from shared/fixtures). */
export function capturedFrames(): string[] {
  const path = fileURLToPath(new URL('../fixtures/lxd-5.0.2-events.jsonl', import.meta.url));
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim());
}

/** The first captured frame whose timestamp starts with `prefix` (e.g. "2026-11-22T06:36:43.5"). */
export function capturedFrameAt(prefix: string, type = 'lifecycle'): string {
  const line = capturedFrames().find((l) => {
    const f = JSON.parse(l) as { timestamp: string; type: string };
    return f.timestamp.startsWith(prefix) && f.type === type;
  });
  if (!line) throw new Error(`no captured ${type} frame at ${prefix}`);
  return line;
}
