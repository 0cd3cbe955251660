import type { ClientOptions } from 'ws';
import type { Target } from './target.js';
import { pinnedTlsConnect } from './tls-pin.js';
import { targetPin } from './transport.js';

/** Event types of `/1.0/events` (LXD 5.0; Incus adds `network-acl`, newer LXD `ovn`, `security`). */
export type EventType = 'operation' | 'lifecycle' | 'logging' | (string & {});

/** Where and how to open the events WebSocket of a target (for the `ws` package). */
export interface EventsEndpoint {
  /** `ws+unix:///path:/1.0/events?…` for a socket, `wss://host:port/1.0/events?…` for HTTPS. */
  url: string;
  /** Passed to `new WebSocket(url, options)`: client certificate and server-certificate pinning. */
  options: {
    cert?: string;
    key?: string;
    ca?: string;
    rejectUnauthorized?: boolean;
    createConnection?: ClientOptions['createConnection'];
  };
  /** Called by the subscriber when this address is unreachable: a cluster target moves to its next address. */
  unreachable?: () => void;
}

/**
 * The events endpoint for `types`, in one project or across all of them (the daemon refuses
 * `all-projects` together with `project`). An HTTPS target with a pin gets a connection
 * factory that checks the server certificate like the REST transport does.
 */
export function eventsEndpoint(target: Target, types: EventType[], scope: { project?: string; allProjects?: boolean } = {}): EventsEndpoint {
  const q = new URLSearchParams();
  if (types.length) q.set('type', types.join(','));
  if (scope.allProjects) q.set('all-projects', 'true');
  else if (scope.project) q.set('project', scope.project);
  if (target.kind === 'unix') return { url: `ws+unix://${target.socketPath}:/1.0/events?${q}`, options: {} };
  const url = `${target.origin.replace(/^https/, 'wss')}/1.0/events?${q}`;
  const pin = targetPin(target);
  if (!pin) return { url, options: { cert: target.cert, key: target.key, rejectUnauthorized: true } };
  return {
    url,
    options: {
      cert: target.cert,
      key: target.key,
      rejectUnauthorized: false,
      createConnection: pinnedTlsConnect(pin, { cert: target.cert, key: target.key }) as unknown as ClientOptions['createConnection'],
    },
  };
}
