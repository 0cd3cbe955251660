/**
 * The part of ssh2's SFTP protocol implementation (`lib/protocol/SFTP.js`, SFTP version 3) the
 * simulator serves with: the packet parser and writer of the server side, without ssh2's SSH
 * transport. ssh2 ships no types for this module.
 */
declare module 'ssh2/lib/protocol/SFTP.js' {
  import type { EventEmitter } from 'node:events';

  /** Attributes as ssh2 reads them from a request (only the fields whose flag was set). */
  export interface Ssh2Attrs {
    size?: number;
    uid?: number;
    gid?: number;
    mode?: number;
    atime?: number;
    mtime?: number;
  }

  /** One entry of a NAME answer. */
  export interface Ssh2Name {
    filename: string;
    longname: string;
    attrs: Ssh2Attrs;
  }

  /** The channel the protocol writes to: ssh2's SSH connection, or anything that takes its bytes. */
  export interface Ssh2ChannelShim {
    _protocol: { _remoteIdentRaw?: string; channelData(id: number, data: Buffer): void; channelClose(id: number): void };
  }

  export interface Ssh2ChannelInfo {
    type: string;
    incoming: { id: number; window: number; packetSize: number; state: string };
    outgoing: { id: number; window: number; packetSize: number; state: string };
  }

  export class SFTP extends EventEmitter {
    constructor(client: Ssh2ChannelShim, chanInfo: Ssh2ChannelInfo, cfg: { server: boolean; debug?: (msg: string) => void });
    /** Feeds bytes read from the peer (null: the peer is gone). */
    push(data: Buffer | null): void;
    status(reqid: number, code: number, message?: string): void;
    handle(reqid: number, handle: Buffer): void;
    data(reqid: number, data: Buffer): void;
    name(reqid: number, names: Ssh2Name[]): void;
    attrs(reqid: number, attrs: Ssh2Attrs): void;
  }

  const protocol: {
    SFTP: typeof SFTP;
    STATUS_CODE: { OK: 0; EOF: 1; NO_SUCH_FILE: 2; PERMISSION_DENIED: 3; FAILURE: 4; BAD_MESSAGE: 5; OP_UNSUPPORTED: 8 };
    OPEN_MODE: { READ: 1; WRITE: 2; APPEND: 4; CREAT: 8; TRUNC: 16; EXCL: 32 };
  };
  export default protocol;
}
