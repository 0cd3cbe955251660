import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';

/** Longest line read whole: 16 MiB. The store writes records far smaller (an event is kept whole up to 64 KiB). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** One line of a gzip file, numbered from 1; `text` is undefined when the line is longer than the limit (its bytes are skipped, not held). */
export interface GzipLine {
  line: number;
  text: string | undefined;
  bytes: number;
}

/** Options of {@link gzipLines}. */
export interface GzipLinesOptions {
  /** Reads the file's first `bytes` bytes only. Default: the whole file. */
  bytes?: number;
  /** Default {@link MAX_LINE_BYTES}. */
  maxLineBytes?: number;
}

/**
 * The lines of a gzip file (one member or several, as appending writes them), streamed: memory
 * stays within one chunk and one line whatever the file's size. A stream that ends early or is
 * corrupt throws after the last complete line before the damage, so a caller counts what was
 * readable; the error is zlib's (`code` Z_BUF_ERROR: cut; Z_DATA_ERROR: corrupt) or the file's.
 */
export async function* gzipLines(path: string, opts: GzipLinesOptions = {}): AsyncGenerator<GzipLine> {
  const max = opts.maxLineBytes ?? MAX_LINE_BYTES;
  const file = createReadStream(path, opts.bytes === undefined ? {} : { start: 0, end: opts.bytes - 1 });
  const gunzip = file.pipe(createGunzip());
  file.on('error', (err) => gunzip.destroy(err));
  let parts: Buffer[] = [];
  let held = 0;
  let size = 0;
  let line = 0;
  const take = (): GzipLine => {
    const text = size > max ? undefined : Buffer.concat(parts, held).toString('utf8');
    const out = { line: ++line, text, bytes: size };
    parts = [];
    held = 0;
    size = 0;
    return out;
  };
  const keep = (part: Buffer) => {
    size += part.length;
    if (size > max) {
      parts = [];
      held = 0;
    } else if (part.length) {
      parts.push(part);
      held += part.length;
    }
  };
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      let from = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
        keep(chunk.subarray(from, nl));
        yield take();
        from = nl + 1;
      }
      keep(chunk.subarray(from));
    }
    if (size > 0) yield take();
  } finally {
    gunzip.destroy();
    file.destroy();
  }
}
