import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { InstanceClient } from '../../src/client/client.js';
import type { ExecResult } from '../../src/client/exec.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';

/** Fast timings so behaviour tests run in milliseconds. */
export const fastTimings = {
  startMs: 10,
  stopMs: 20,
  forceStopMs: 10,
  restartMs: 20,
  freezeMs: 2,
  taskMs: 5,
  stopHookMs: 40,
  failedStartMs: 20,
  crashLoopUptimeMs: 50,
  operationRetentionMs: 300,
};

/** A parsed HTTP answer. */
export interface ApiAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** An HTTP answer kept as its bytes. */
export interface BytesAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

/** A simulator plus a tiny client bound to its unix socket. */
export interface TestSim {
  sim: RunningSimulator;
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer>;
  /** Connects to /1.0/events and collects parsed frames. */
  events(query?: string): Promise<EventTap>;
  /** A request with a body of bytes (an image, a file), answered as bytes (an export). */
  bytes(method: string, path: string, body?: Buffer, headers?: Record<string, string>): Promise<BytesAnswer>;
  /** Waits for an operation to finish and returns its final object. */
  waitOp(answer: ApiAnswer): Promise<any>;
  close(): Promise<void>;
}

/** A connected events socket with everything it received. */
export interface EventTap {
  ws: WebSocket;
  frames: any[];
  raw: string[];
  /** Resolves when a frame matching `pred` has arrived (or rejects after `ms`). */
  until(pred: (f: any) => boolean, ms?: number): Promise<any>;
  lifecycle(): any[];
  close(): void;
}

/** A simulator with one running instance, and `sh -c SCRIPT` run in it: what the guest shell's tests need. */
export interface GuestShell {
  sim: RunningSimulator;
  client: InstanceClient;
  sh(script: string): Promise<ExecResult>;
  close(): Promise<void>;
}

export async function startGuestShell(name = 'g', config: Record<string, string> = {}): Promise<GuestShell> {
  const sim = await startSimulator({ timings: fastTimings });
  const client = new InstanceClient({ kind: 'unix', socketPath: sim.socketPath!, url: `unix://${sim.socketPath}` });
  sim.controls.addInstance({ name, status: 'Running', config });
  return {
    sim,
    client,
    sh: async (script) => (await client.exec(name, { command: ['sh', '-c', script] })).wait({ timeoutMs: 20_000 }),
    async close() {
      await client.close();
      await sim.stop();
    },
  };
}

/** Starts a simulator on a temporary unix socket with fast timings. */
export async function startTestSim(opts: SimulatorOptions = {}): Promise<TestSim> {
  const sim = await startSimulator({ ...opts, timings: { ...fastTimings, ...opts.timings } });
  const socketPath = sim.socketPath!;
  const agent = new Agent({ connect: { socketPath } });
  const taps: EventTap[] = [];
  const api: TestSim['api'] = (method, path, body, headers = {}) => rawCall(agent, method, path, body, headers);
  return {
    sim,
    api,
    async events(query = '') {
      const tap = await openTap(`ws+unix://${socketPath}:/1.0/events${query}`);
      taps.push(tap);
      return tap;
    },
    async bytes(method, path, body, headers = {}) {
      const res = await request(`http://sim${path}`, { method: method as 'GET', dispatcher: agent, headers, body });
      return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
    },
    async waitOp(answer) {
      const res = await api('GET', `${answer.body.operation}/wait?timeout=10`);
      return res.body.metadata;
    },
    async close() {
      for (const t of taps) t.close();
      await agent.close();
      await sim.stop();
    },
  };
}

/** Opens an events socket and resolves once it is open. */
export function openTap(url: string, wsOpts: WebSocket.ClientOptions = {}): Promise<EventTap> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, wsOpts);
    const frames: any[] = [];
    const raw: string[] = [];
    const waiters: { pred: (f: any) => boolean; resolve: (f: any) => void }[] = [];
    ws.on('message', (data) => {
      const text = data.toString();
      raw.push(text);
      const f = JSON.parse(text);
      frames.push(f);
      for (const w of [...waiters]) {
        if (w.pred(f)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(f);
        }
      }
    });
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        ws,
        frames,
        raw,
        // The bound only limits how long a failure takes to show: on a loaded CI, frames published
        // while the test awaited its operations can take seconds to be read.
        until(pred, ms = 15_000) {
          // One argument, as the waiters call it: a predicate reading a second one (find's index) would see another value.
          const hit = frames.find((f) => pred(f));
          if (hit) return Promise.resolve(hit);
          return new Promise((res, rej) => {
            const timer = setTimeout(() => rej(new Error('event did not arrive in time')), ms);
            waiters.push({ pred, resolve: (f) => (clearTimeout(timer), res(f)) });
          });
        },
        lifecycle() {
          return frames.filter((f) => f.type === 'lifecycle');
        },
        close() {
          ws.terminate();
        },
      }),
    );
  });
}

let markers = 0;

/**
 * Waits until every event emitted so far has reached the tap, instead of sleeping a while: emits
 * one marker lifecycle event about `instance` and waits for it (a socket delivers in order), then
 * drops the marker from the tap's frames. What the tap holds then is all it will get until now.
 */
export async function drained(sim: RunningSimulator, tap: EventTap, instance: string, project?: string): Promise<void> {
  const action = `test-marker-${++markers}`;
  sim.controls.storm(1, { name: instance, action, ...(project ? { project } : {}) });
  await tap.until((f) => f.metadata?.action === action);
  tap.frames.splice(
    tap.frames.findIndex((f) => f.metadata?.action === action),
    1,
  );
}

/**
 * A raw call on a simulator's socket through `agent`: its status, headers and body, parsed when it
 * is JSON (plain text and a file's bytes stay text). A body given is sent as JSON.
 */
export async function rawCall(agent: Agent, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await request(`http://sim${path}`, {
    method: method as 'GET',
    dispatcher: agent,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: stays text */
  }
  return { status: res.statusCode, headers: res.headers, body: parsed };
}
