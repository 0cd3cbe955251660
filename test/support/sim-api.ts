import { request } from 'node:http';
import type { RunningSimulator } from '../../src/simulator/simulator.js';

/** One request to the simulator's socket, for what the client does not offer (a rename): its HTTP status. */
export function simApi(sim: RunningSimulator, method: string, path: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: sim.socketPath, path, method, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
