/**
 * One party's frame link to one peer over an `RTCDataChannel`: framing, chunking, back-pressure
 * and the receive queue of {@link RtcTransport}. The signalling that opens the channel lives in
 * `transport-rtc.ts`.
 *
 * Wire, on one ordered reliable channel: a frame of `len` bytes travels as the byte string
 * `len (u32 LE) ‖ frame`, cut into messages of at most `chunk` bytes (the channel's largest
 * message, capped). The receiver knows from the length where each frame ends, so continuation
 * messages carry no header and are views of the sender's one copy of the frame.
 * @internal
 * @module
 */

import { FrameInbox, linkError } from './inbox.js';

/** The part of an `RTCDataChannel` the transport uses (browsers', or a Node implementation's). */
export interface RtcDataChannelLike {
  /** Set to `'arraybuffer'` so binary messages arrive as `ArrayBuffer`s. */
  binaryType: string;
  /** `'connecting'`, `'open'`, `'closing'` or `'closed'`. */
  readonly readyState: string;
  /** Bytes queued by `send` and not yet handed to the network. */
  readonly bufferedAmount: number;
  /** `onbufferedamountlow` fires when `bufferedAmount` falls to this. */
  bufferedAmountLowThreshold: number;
  /** Queues one binary message. */
  send(data: Uint8Array<ArrayBuffer>): void;
  /** Closes the channel once the queued messages are sent. */
  close(): void;
  // Handlers take `never`: the platform's event types all fit, and the transport reads only
  // what it declares where it assigns them.
  /** Called once the channel is open. */
  onopen: ((ev: never) => void) | null;
  /** Called with each message (`ev.data`). */
  onmessage: ((ev: never) => void) | null;
  /** Called once the channel is closed (by either side). */
  onclose: ((ev: never) => void) | null;
  /** Called when the channel fails (`ev.error`). */
  onerror: ((ev: never) => void) | null;
  /** Called when `bufferedAmount` falls to `bufferedAmountLowThreshold`. */
  onbufferedamountlow: ((ev: never) => void) | null;
}

/** Frames and bytes that went one way (frame bytes: length prefixes and chunking excluded). */
export interface FrameCounters {
  /** Frames sent. */
  framesSent: number;
  /** Frame bytes sent. */
  bytesSent: number;
  /** Frames received. */
  framesReceived: number;
  /** Frame bytes received. */
  bytesReceived: number;
}

/** {@link FrameCounters} of DataChannels, with the messages the frames were cut into. */
export interface ChannelCounters extends FrameCounters {
  /** Messages sent (a frame above the channel's message size takes several). */
  messagesSent: number;
}

/** The largest frame accepted from a peer: the core's largest frame (256 MiB payload + header). */
export const MAX_FRAME = (256 << 20) + 28;
/** Message size when the channel does not say its largest (the size every browser accepts). */
const DEFAULT_CHUNK = 64 << 10;
/** Largest message used even when the channel allows more (keeps one message's latency low). */
const MAX_CHUNK = 256 << 10;
/** `send` hands chunks to the channel while less than this is buffered in it... */
const HIGH_WATER = 4 << 20;
/** ...and resumes when the channel's buffer falls to this. */
const LOW_WATER = 1 << 20;
/** How long a closing channel may take to deliver what it holds before the connection goes. */
const CLOSE_GRACE_MS = 10_000;

/** The message size for a channel whose largest message is `max` bytes. */
function chunkSize(max: number | undefined): number {
  if (max === Infinity) return MAX_CHUNK;
  // Room for the length prefix in a first message.
  if (max !== undefined && Number.isFinite(max) && max > 8) return Math.min(Math.floor(max), MAX_CHUNK);
  return DEFAULT_CHUNK;
}

/** A frame being reassembled: its buffer and the bytes received so far. */
interface Partial {
  frame: Uint8Array;
  filled: number;
}

/**
 * The frame link to one peer over one DataChannel. Frames that arrive before anyone asks are
 * queued from the moment the channel exists, so nothing the peer sends right after opening is
 * lost.
 * @internal
 */
export class DataChannelLink {
  /** Resolves when the channel opens; rejects if it closes or fails first. */
  readonly opened: Promise<void>;
  readonly #dc: RtcDataChannelLike;
  readonly #peer: number;
  readonly #counters: ChannelCounters;
  /** Releases the underlying connection (called once the channel is done). */
  readonly #release: () => void;
  #chunk = DEFAULT_CHUNK;
  /** Chunks not yet handed to the channel (back-pressure), oldest first. */
  readonly #outbox: Uint8Array<ArrayBuffer>[] = [];
  readonly #inbox: FrameInbox;
  #partial: Partial | undefined;
  #closing = false;
  #released = false;
  #grace: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param dc - A negotiated, ordered, reliable channel, not yet open.
   * @param peer - The peer's party id (for messages).
   * @param timeoutMs - How long `recv` waits for a frame.
   * @param counters - Updated with every frame sent and received.
   * @param maxMessageSize - Read when the channel opens: the peer connection's
   *   `sctp.maxMessageSize` (`0`, absent or not finite: a default), which sizes the chunks.
   * @param release - Closes the peer connection; called once, when the channel is done.
   */
  constructor(
    dc: RtcDataChannelLike,
    peer: number,
    timeoutMs: number,
    counters: ChannelCounters,
    maxMessageSize: () => number | undefined,
    release: () => void,
  ) {
    this.#dc = dc;
    this.#peer = peer;
    this.#inbox = new FrameInbox(peer, timeoutMs);
    this.#counters = counters;
    this.#release = release;
    dc.binaryType = 'arraybuffer';
    dc.bufferedAmountLowThreshold = LOW_WATER;
    this.opened = new Promise<void>((resolve, reject) => {
      dc.onopen = () => {
        this.#chunk = chunkSize(maxMessageSize());
        resolve();
      };
      dc.onclose = () => {
        reject(new Error('the DataChannel closed'));
        this.#onClose();
      };
      dc.onerror = (ev: { error?: { message?: string } }) => {
        const why = `the DataChannel to party ${peer} failed: ${ev?.error?.message ?? 'error'}`;
        reject(new Error(why));
        this.#inbox.fail(linkError('TRANSPORT', why));
      };
    });
    // Nobody may be waiting when it fails (e.g. after a fallback to the relay).
    this.opened.catch(() => {});
    dc.onmessage = (ev: { data: unknown }) => this.#onMessage(ev.data);
    dc.onbufferedamountlow = () => this.#flush();
  }

  /** Whether the channel is open now. */
  get isOpen(): boolean {
    return this.#dc.readyState === 'open';
  }

  /** The largest message this link sends (set when the channel opens). */
  get chunkSize(): number {
    return this.#chunk;
  }

  /** Queues `frame` (copied once); never waits. */
  send(frame: Uint8Array): void {
    if (this.#inbox.ended) throw this.#inbox.ended;
    if (this.#closing) throw linkError('CLOSED', `the link to party ${this.#peer} is closed`);
    const len = frame.byteLength;
    const wire = new Uint8Array(len + 4);
    new DataView(wire.buffer).setUint32(0, len, true);
    wire.set(frame, 4);
    for (let off = 0; off < wire.length; off += this.#chunk) this.#outbox.push(wire.subarray(off, off + this.#chunk));
    this.#counters.framesSent += 1;
    this.#counters.bytesSent += len;
    this.#flush();
  }

  /** The next frame from the peer. */
  recv(): Promise<Uint8Array> {
    return this.#inbox.recv();
  }

  /**
   * Closes the link once everything queued is handed to the channel; the channel delivers it
   * before it closes, and the peer connection is released after (or after a grace period).
   */
  close(): void {
    if (this.#closing) return;
    this.#closing = true;
    this.#inbox.fail(linkError('CLOSED', `the link to party ${this.#peer} is closed`));
    if (!this.isOpen) return this.#releaseOnce();
    this.#grace = setTimeout(() => this.#releaseOnce(), CLOSE_GRACE_MS);
    this.#flush();
  }

  /** Drops the channel at once, without delivering anything (it will not be used). */
  abandon(): void {
    this.#closing = true;
    this.#outbox.length = 0;
    this.#inbox.fail(linkError('CLOSED', `the link to party ${this.#peer} was not used`));
    this.#releaseOnce();
  }

  /** Hands queued chunks to the channel until its buffer is full; closes it when closing. */
  #flush(): void {
    const dc = this.#dc;
    if (dc.readyState !== 'open') return;
    try {
      while (this.#outbox.length > 0 && dc.bufferedAmount < HIGH_WATER) {
        dc.send(this.#outbox.shift()!);
        this.#counters.messagesSent += 1;
      }
    } catch (e) {
      this.#inbox.fail(linkError('TRANSPORT', `sending to party ${this.#peer}: ${(e as Error)?.message ?? String(e)}`));
      return;
    }
    if (this.#closing && this.#outbox.length === 0) dc.close();
  }

  #onMessage(data: unknown): void {
    if (this.#inbox.ended) return;
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
    if (!bytes) return this.#fail(`party ${this.#peer} sent a message that is not binary`);
    let rest = bytes;
    while (rest.length > 0) {
      let p = this.#partial;
      if (!p) {
        if (rest.length < 4) return this.#fail(`party ${this.#peer} sent a frame start of ${rest.length} bytes`);
        const len = new DataView(rest.buffer, rest.byteOffset, 4).getUint32(0, true);
        if (len > MAX_FRAME) return this.#fail(`party ${this.#peer} announced a frame of ${len} bytes (limit ${MAX_FRAME})`);
        rest = rest.subarray(4);
        if (rest.length >= len) {
          // The whole frame in one message: no copy.
          this.#deliver(rest.subarray(0, len));
          rest = rest.subarray(len);
          continue;
        }
        p = this.#partial = { frame: new Uint8Array(len), filled: 0 };
      }
      const take = Math.min(rest.length, p.frame.length - p.filled);
      p.frame.set(rest.subarray(0, take), p.filled);
      p.filled += take;
      rest = rest.subarray(take);
      if (p.filled === p.frame.length) {
        this.#partial = undefined;
        this.#deliver(p.frame);
      }
    }
  }

  #deliver(frame: Uint8Array): void {
    this.#counters.framesReceived += 1;
    this.#counters.bytesReceived += frame.byteLength;
    this.#inbox.push(frame);
  }

  #onClose(): void {
    const cut = this.#partial ? ` in the middle of a frame (${this.#partial.filled} of ${this.#partial.frame.length} bytes)` : '';
    this.#inbox.fail(linkError(cut ? 'TRANSPORT' : 'CLOSED', `party ${this.#peer} closed its link${cut}`));
    this.#releaseOnce();
  }

  /** Ends the link for a malformed message from the peer and closes the channel. */
  #fail(why: string): void {
    this.#inbox.fail(linkError('TRANSPORT', why));
    this.#outbox.length = 0;
    this.#closing = true;
    this.#dc.close();
  }

  #releaseOnce(): void {
    if (this.#released) return;
    this.#released = true;
    clearTimeout(this.#grace);
    this.#release();
  }
}
