import type { Duplex } from 'node:stream';
import type { ClusterMembers } from './cluster.js';
import { Transport, type TransportHandlers } from './transport.js';

/**
 * Cluster mode with `memberListeners`: each member also answers on its own HTTPS address, as the
 * members of a real cluster do. All share the one store, event hub and certificate (members share
 * the cluster certificate), so any member serves the whole cluster; a member's listener can be
 * taken away and given back to test a client's failover.
 */
export class MemberListeners {
  private readonly listeners = new Map<string, { transport: Transport; upgraded: Set<Duplex> }>();

  constructor(
    private readonly cluster: ClusterMembers,
    private readonly handlers: TransportHandlers,
    private readonly tls: { cert: string; key: string },
  ) {}

  /** Binds one `https://127.0.0.1:<free port>` per member; the member's `url` becomes that address. */
  async listen(): Promise<void> {
    for (const member of this.cluster.list()) {
      const upgraded = new Set<Duplex>();
      const transport = new Transport(
        [{ kind: 'https', host: '127.0.0.1', port: 0 }],
        {
          request: this.handlers.request,
          upgrade: (req, socket, head, id) => {
            // Upgraded sockets (event streams) leave the HTTP server's books: tracked to be cut on down().
            upgraded.add(socket);
            socket.once('close', () => upgraded.delete(socket));
            this.handlers.upgrade(req, socket, head, id);
          },
        },
        this.tls,
      );
      await transport.listen();
      member.url = transport.httpsUrl!;
      this.listeners.set(member.name, { transport, upgraded });
    }
  }

  /** The member's own address. */
  url(member: string): string {
    return this.cluster.get(member).url;
  }

  /** Takes the member's address away: stops listening and cuts its connections and event sockets. */
  async down(member: string): Promise<void> {
    const l = this.get(member);
    for (const s of l.upgraded) s.destroy();
    await l.transport.close();
  }

  /** Listens on the member's address again (the same port). */
  async up(member: string): Promise<void> {
    await this.get(member).transport.listen();
  }

  async close(): Promise<void> {
    for (const name of this.listeners.keys()) await this.down(name);
  }

  private get(member: string): { transport: Transport; upgraded: Set<Duplex> } {
    const l = this.listeners.get(member);
    if (!l) throw new Error(`no cluster member "${member}"`);
    return l;
  }
}
