/**
 * The transport a compute party runs over, and an in-memory network for tests.
 * @module
 */

import { FrameInbox, linkError } from './inbox.js';

/**
 * Moves frames between this party and its peers. Frames are opaque bytes; the protocol checks
 * session, step and length of every frame it receives.
 *
 * - `send` only queues: it must never wait for the peer to read (two parties send to each other
 *   in the same round).
 * - `recv` resolves with the next frame from `from`, in order. To fail, reject with an error
 *   whose `code` is `'CLOSED'` (the link is gone) or `'TIMEOUT'` (with `timeoutMs`); any other
 *   rejection is reported as a `TRANSPORT` error carrying its message.
 * - `allocFrame` and `releaseFrame` (optional, each on its own) let a transport recycle frame
 *   buffers instead of allocating one per frame: the party writes its next frame to `to` into
 *   the buffer `allocFrame` returns, then passes it to `send`; and once it has copied a received
 *   frame into its own memory it hands the frame to `releaseFrame`, which may reuse its buffer
 *   or give it back to the sender (e.g. by transferring it over a `MessagePort`).
 */
export interface Transport {
  /** Queues `frame` for party `to`. */
  send(to: number, frame: Uint8Array): void;
  /** The next frame from party `from`. */
  recv(from: number): Promise<Uint8Array>;
  /** Releases the link (optional). */
  close?(): void;
  /**
   * A buffer of exactly `length` bytes, which the party fills with its next frame to `to` and
   * then passes to `send` (optional; without it each frame is a new `Uint8Array`).
   */
  allocFrame?(to: number, length: number): Uint8Array;
  /** The party is done with `frame`, received from `from`; its buffer is free (optional). */
  releaseFrame?(from: number, frame: Uint8Array): void;
}

/** Options of {@link InMemoryNetwork}. */
export interface InMemoryNetworkOptions {
  /**
   * Rejects a `recv` with `code: 'TIMEOUT'` when no frame arrives within this many
   * milliseconds.
   * @defaultValue no timeout
   */
  timeoutMs?: number;
  /**
   * Sees every frame in flight and returns what to deliver instead (`null` drops it). For
   * tests of misbehaving peers; settable later through {@link InMemoryNetwork.tamper}.
   */
  tamper?: (from: number, to: number, frame: Uint8Array) => Uint8Array | null;
}

/**
 * `n` parties connected by in-memory queues, for tests and single-process demos. Frames are
 * delivered in order, asynchronously, with counters of everything sent.
 */
export class InMemoryNetwork {
  /** The tamper hook (see {@link InMemoryNetworkOptions.tamper}). */
  tamper: InMemoryNetworkOptions['tamper'];
  /** Frames and bytes sent so far over all links (before tampering). */
  readonly stats: {
    /** Frames sent. */
    frames: number;
    /** Bytes sent. */
    bytes: number;
  } = { frames: 0, bytes: 0 };
  readonly #n: number;
  /** `#links[from * n + to]`: what `to` received from `from`. */
  readonly #links: FrameInbox[];
  #closed = false;

  constructor(parties: number, options: InMemoryNetworkOptions = {}) {
    this.#n = parties;
    this.tamper = options.tamper;
    this.#links = Array.from({ length: parties * parties }, (_, i) => new FrameInbox(Math.floor(i / parties), options.timeoutMs));
  }

  /** The transport of party `id`. */
  transport(id: number): Transport {
    this.#check(id, 'party');
    return {
      send: (to, frame) => this.#send(id, to, frame),
      recv: (from) => this.#recv(from, id),
      close: () => this.close(),
    };
  }

  /** Closes every link: pending and later `recv`s reject with `code: 'CLOSED'`. */
  close(): void {
    this.#closed = true;
    for (const link of this.#links) link.fail(linkError('CLOSED', 'in-memory network closed'));
  }

  #check(id: number, what: string): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.#n) throw new RangeError(`no ${what} ${id} in a network of ${this.#n}`);
  }

  #link(from: number, to: number): FrameInbox {
    this.#check(from, 'sender');
    this.#check(to, 'receiver');
    return this.#links[from * this.#n + to]!;
  }

  #send(from: number, to: number, frame: Uint8Array): void {
    if (this.#closed) throw linkError('CLOSED', 'in-memory network closed');
    const link = this.#link(from, to);
    this.stats.frames += 1;
    this.stats.bytes += frame.byteLength;
    const delivered = this.tamper ? this.tamper(from, to, frame) : frame;
    if (delivered !== null) link.push(delivered);
  }

  #recv(from: number, to: number): Promise<Uint8Array> {
    return this.#link(from, to).recv();
  }
}
