import { SimHttpError } from './envelope.js';

/** Status of a cluster member as `GET /1.0/cluster/members` shows it. */
export type MemberStatus = 'Online' | 'Offline' | 'Evacuated';

/** One simulated cluster member. */
export interface SimMember {
  name: string;
  url: string;
  status: MemberStatus;
}

const messages: Record<MemberStatus, string> = {
  Online: 'Fully operational',
  // LXD reports the time since the last heartbeat; the simulator does not count it.
  Offline: 'No heartbeat for 20s',
  Evacuated: 'Unavailable due to maintenance',
};

/**
 * The members of a simulated cluster, in the order they were given. The first answers requests
 * (it is the `server_name` of `GET /1.0/cluster`); new instances go to the Online members in turn.
 */
export class ClusterMembers {
  private readonly members: SimMember[];
  private nextPlacement = 0;

  constructor(names: readonly string[]) {
    if (names.length === 0) throw new Error('A cluster needs at least one member');
    if (new Set(names).size !== names.length) throw new Error('Cluster member names must be unique');
    this.members = names.map((name, i) => ({ name, url: `https://10.0.0.${i + 1}:8443`, status: 'Online' }));
  }

  /** The member answering API requests. */
  get serverName(): string {
    return this.members[0]!.name;
  }

  /** Every member, in order. */
  list(): readonly SimMember[] {
    return this.members;
  }

  /** The member, or 404 "Cluster member not found". */
  get(name: string): SimMember {
    const m = this.members.find((x) => x.name === name);
    if (!m) throw new SimHttpError(404, 'Cluster member not found');
    return m;
  }

  /** True when the member answers (Online or Evacuated). */
  isReachable(name: string): boolean {
    return this.members.find((m) => m.name === name)?.status !== 'Offline';
  }

  /** The member for a new instance: `target` when given (404/400 when unusable), else the next Online one. */
  place(target?: string): string {
    if (target) {
      const m = this.get(target);
      if (m.status !== 'Online') throw new SimHttpError(400, `Target cluster member "${target}" is ${m.status.toLowerCase()}`);
      return m.name;
    }
    const online = this.members.filter((m) => m.status === 'Online');
    if (online.length === 0) throw new SimHttpError(500, 'No online cluster member to place the instance on');
    return online[this.nextPlacement++ % online.length]!.name;
  }

  /** The ClusterMember object, in the field order of LXD's struct. */
  render(m: SimMember): Record<string, unknown> {
    const database = this.members.indexOf(m) < 3;
    return {
      roles: database ? ['database'] : [],
      failure_domain: 'default',
      description: '',
      config: {},
      groups: ['default'],
      server_name: m.name,
      url: m.url,
      database,
      status: m.status,
      message: messages[m.status],
      architecture: 'x86_64',
    };
  }
}
