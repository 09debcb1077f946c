/**
 * A {@link Transport} over `MessagePort`s, for parties in different workers, windows or iframes
 * of one browser (or Node worker threads).
 * @module
 */

import { FrameInbox, linkError } from './inbox.js';
import type { RuntimeMessagePort } from './platform.js';
import type { Transport } from './transport.js';

/** The part of a `MessagePort` the transport uses (browsers' and Node's ports both fit). */
export interface MessagePortLike {
  /** Sends one message (structured clone). */
  postMessage(message: unknown): void;
  /** Called with each message; setting it starts the port. */
  onmessage: ((ev: { data: unknown }) => void) | null;
  /** Disconnects the port. */
  close(): void;
}

/** Options of {@link MessagePortTransport}. */
export interface MessagePortTransportOptions {
  /**
   * Rejects a `recv` with `code: 'TIMEOUT'` when no frame arrives within this many ms. A peer
   * whose worker was terminated sends nothing more, so this is how its loss is noticed.
   * @defaultValue 30000
   */
  timeoutMs?: number;
}

interface Peer {
  port: MessagePortLike;
  inbox: FrameInbox;
}

/**
 * A party's links to its peers, one `MessagePort` per peer (each port is one end of a
 * `MessageChannel` whose other end the peer holds). Frames are copied by `postMessage`. A party
 * that closes its transport tells its peers, whose pending `recv`s then reject with
 * `code: 'CLOSED'` once the frames already sent are read.
 *
 * Like `InMemoryNetwork`, this moves plaintext frames: fine inside one browser tab or process,
 * where every party is under the same control anyway (tests, demos, offloading a party to a
 * worker).
 *
 * ```ts
 * // Main thread: P0 and P1 here, P2 in a module worker.
 * const ports = MessagePortTransport.channels(3); // ports[i][j]: party i's end of the link to j
 * worker.postMessage({ ports: ports[2] }, [ports[2][0]!, ports[2][1]!]);
 * const t0 = new MessagePortTransport(ports[0]);
 * const t1 = new MessagePortTransport(ports[1]);
 *
 * // worker.js
 * onmessage = async (e) => {
 *   await init();
 *   const transport = new MessagePortTransport(e.data.ports);
 *   const party = await Party.join({ id: 2, sessionId, seeds, transport });
 *   // ... the same operations as P0 and P1 ...
 *   transport.close();
 * };
 * ```
 */
export class MessagePortTransport implements Transport {
  readonly #peers: (Peer | undefined)[];
  #closed = false;

  /**
   * @param ports - `ports[j]` is the link to party `j`; leave this party's own index empty.
   * @param options - See {@link MessagePortTransportOptions}.
   */
  constructor(ports: readonly (MessagePortLike | null | undefined)[], options: MessagePortTransportOptions = {}) {
    const timeoutMs = options.timeoutMs ?? 30_000;
    this.#peers = ports.map((port, j) => {
      if (port === null || port === undefined) return undefined;
      const peer: Peer = { port, inbox: new FrameInbox(j, timeoutMs) };
      port.onmessage = (ev) => this.#onMessage(peer.inbox, j, ev.data);
      return peer;
    });
  }

  /**
   * `MessageChannel`s linking `parties` parties pairwise: `result[i][j]` is party `i`'s end of
   * the link to party `j` (`result[i][i]` is `null`). Hand each party its row.
   */
  static channels(parties: number): (RuntimeMessagePort<MessagePortLike> | null)[][] {
    type Port = RuntimeMessagePort<MessagePortLike>;
    const rows: (Port | null)[][] = Array.from({ length: parties }, () => Array<Port | null>(parties).fill(null));
    for (let i = 0; i < parties; i++) {
      for (let j = i + 1; j < parties; j++) {
        const { port1, port2 } = new MessageChannel();
        rows[i]![j] = port1 as Port;
        rows[j]![i] = port2 as Port;
      }
    }
    return rows;
  }

  send(to: number, frame: Uint8Array): void {
    if (this.#closed) throw linkError('CLOSED', 'message-port transport closed');
    const peer = this.#peer(to);
    if (peer.inbox.ended) throw peer.inbox.ended;
    // A view into a larger buffer would clone the whole buffer: send just the frame's bytes.
    const whole = frame.byteOffset === 0 && frame.byteLength === frame.buffer.byteLength;
    peer.port.postMessage(whole ? frame : frame.slice());
  }

  recv(from: number): Promise<Uint8Array> {
    if (this.#closed) return Promise.reject(linkError('CLOSED', 'message-port transport closed'));
    return this.#peer(from).inbox.recv();
  }

  /** Tells the peers this party is gone and closes the ports; pending `recv`s reject. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const peer of this.#peers) {
      if (!peer) continue;
      // `null` is the goodbye: ports have no close event a peer could rely on.
      peer.port.postMessage(null);
      peer.port.close();
      peer.inbox.fail(linkError('CLOSED', 'message-port transport closed'));
    }
  }

  #peer(j: number): Peer {
    const peer = Number.isInteger(j) ? this.#peers[j] : undefined;
    if (!peer) throw new RangeError(`no port to party ${j}`);
    return peer;
  }

  #onMessage(inbox: FrameInbox, j: number, data: unknown): void {
    if (data === null) return inbox.fail(linkError('CLOSED', `party ${j} closed its link`));
    // Anything but a frame means the port is shared with something else: a broken link.
    if (!(data instanceof Uint8Array)) return inbox.fail(new Error(`party ${j} sent a message that is not a frame`));
    inbox.push(data);
  }
}
