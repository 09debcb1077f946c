/**
 * What both kinds of relay connection share: the request path, and the per-peer queues that
 * demultiplex the relay's `[from] ‖ frame` messages (the WebSocket and the WebTransport front
 * ends carry the same messages).
 * @internal
 * @module
 */

import { toHex } from './hex.js';
import { FrameInbox, linkError } from './inbox.js';
import { COMPUTE_PARTIES } from './roster.js';

/** The relay path's link mode of each kind of connection (as the native parties name them). */
export const MODES = { plain: 'plain-test-seeds', noise: 'noise-aesgcm' } as const;

/** What the relay path says about a connection (options already checked). */
export interface RelayPathOptions {
  /** The session id, 16 bytes. */
  sessionId: Uint8Array;
  /** This party's index. */
  id: number;
  /** Number of parties in the session. */
  parties?: number;
  /** The join token. */
  token?: string;
  /** Invite a deployment's server parties, handing them the client's key. */
  invite?: { deployment: string; clientKey: Uint8Array };
}

/** The request path and query (`/v1/{session}/{id}?parties=…&mode=…`) of either front end. */
export function relayPath(o: RelayPathOptions, kind: keyof typeof MODES): string {
  let path = `/v1/${toHex(o.sessionId)}/${o.id}?parties=${o.parties ?? COMPUTE_PARTIES}&mode=${MODES[kind]}`;
  if (o.token !== undefined) path += `&token=${encodeURIComponent(o.token)}`;
  if (o.invite) path += `&deployment=${o.invite.deployment}&client_key=${toHex(o.invite.clientKey)}`;
  return path;
}

/**
 * The frames received from each peer of one relay connection, and the `recv`s waiting for
 * them. Frames from each peer come out in order; once a peer left (its end-of-link marker) or
 * the connection ended, `recv` rejects with `code: 'CLOSED'` after the frames already received.
 */
export class RelayPeers {
  readonly #id: number;
  readonly #parties: number;
  readonly #peers: FrameInbox[];
  #closed = false;

  constructor(id: number, parties: number, timeoutMs: number) {
    this.#id = id;
    this.#parties = parties;
    this.#peers = Array.from({ length: parties }, (_, from) => new FrameInbox(from, timeoutMs));
  }

  /** Whether the connection ended. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Throws a `RangeError` unless `i` is another party of the session. */
  check(i: number): void {
    this.#peer(i);
  }

  /** The next frame from `from`. */
  recv(from: number): Promise<Uint8Array> {
    return this.#peer(from).recv();
  }

  /**
   * Takes one relay message `[from] ‖ frame` (or the end-of-link marker `[from]`); returns what
   * is wrong with it if it is malformed (the caller ends the connection), else `undefined`.
   */
  deliver(bytes: Uint8Array): string | undefined {
    const from = bytes[0];
    if (from === undefined || from >= this.#parties || from === this.#id) {
      return `the relay sent a malformed message (from ${String(from)})`;
    }
    const peer = this.#peers[from]!;
    if (bytes.length === 1) peer.fail(linkError('CLOSED', `party ${from} left the session`));
    else peer.push(bytes.subarray(1));
    return undefined;
  }

  /** Ends every link with `reason` (once); returns whether this call ended them. */
  shutdown(reason: string): boolean {
    if (this.#closed) return false;
    this.#closed = true;
    for (const p of this.#peers) p.fail(linkError('CLOSED', reason));
    return true;
  }

  #peer(i: number): FrameInbox {
    if (!Number.isInteger(i) || i < 0 || i >= this.#parties || i === this.#id) {
      throw new RangeError(`party ${this.#id} has no link to ${String(i)} (session of ${this.#parties})`);
    }
    return this.#peers[i]!;
  }
}
