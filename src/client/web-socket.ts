import { createRequire } from 'node:module';
import type WebSocket from 'ws';

let loaded: typeof WebSocket | undefined;

/**
 * The `ws` package's WebSocket, loaded at the first socket the process opens: a command that only
 * reads (`reflex housekeeping plan`) opens none, and an `import` of `ws` cost a command's start
 * about 50 ms of CPU (Node 20 lexes each of its CommonJS files to learn their exports; `require`
 * does not, as redis/commonjs-packages.ts explains).
 */
export function webSocketClass(): typeof WebSocket {
  return (loaded ??= createRequire(import.meta.url)('ws') as typeof WebSocket);
}
