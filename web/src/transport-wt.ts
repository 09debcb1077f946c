/**
 * The relay over WebTransport (HTTP/3, the relay's `--webtransport` front end), and the choice
 * between it and the WebSocket: WebTransport first when it is configured and the runtime has
 * it, WebSocket otherwise or when WebTransport cannot connect.
 * @module
 */

import { fromHex } from './hex.js';
import { linkError } from './inbox.js';
import type { ReadableStreamLike, ReadableStreamReaderLike, WritableStreamLike, WritableStreamWriterLike } from './platform.js';
import { MODES, RelayPeers, relayPath } from './relay-peers.js';
import { COMPUTE_PARTIES } from './roster.js';
import type { Transport } from './transport.js';
import { WebSocketTransport, refusalMessage, type WebSocketTransportOptions } from './transport-ws.js';

/** How a relay connection reached the relay. */
export type RelayTransportKind = 'webtransport' | 'websocket';

/** Where the relay's WebTransport front end is (`ringfence relay --webtransport ADDR` prints it). */
export interface WebTransportOptions {
  /** The front end's base URL, e.g. `https://127.0.0.1:9001` (the session path is appended). */
  url: string;
  /**
   * The SHA-256 hash of the relay's self-signed certificate (64 hex digits, as the relay prints
   * it, or 32 bytes), passed to the browser as `serverCertificateHashes`. Leave it out when the
   * relay's certificate is one the browser trusts.
   */
  certificateHash?: string | Uint8Array;
  /**
   * Time allowed for the WebTransport connection and the relay's admission answer before the
   * WebSocket is tried instead.
   * @defaultValue 5000 (at most the connection timeout)
   */
  connectTimeoutMs?: number;
}

/** The part of a WebTransport bidirectional stream the transport uses. */
export interface WebTransportStreamLike {
  /** Bytes from the relay. */
  readable: ReadableStreamLike<Uint8Array>;
  /** Bytes to the relay. */
  writable: WritableStreamLike<Uint8Array>;
}

/** The part of the WebTransport API the transport uses (browsers' `WebTransport`). */
export interface WebTransportLike {
  /** Resolves once the session is established. */
  readonly ready: Promise<unknown>;
  /** Settles once the session ended. */
  readonly closed: Promise<unknown>;
  /** Streams the server opened. */
  readonly incomingBidirectionalStreams: ReadableStreamLike<WebTransportStreamLike>;
  /** Ends the session. */
  close(info?: { closeCode?: number; reason?: string }): void;
}

/** A WebTransport constructor (`globalThis.WebTransport`). */
export type WebTransportConstructor = new (
  url: string,
  options?: { serverCertificateHashes?: { algorithm: string; value: Uint8Array<ArrayBuffer> }[] },
) => WebTransportLike;

/** The connection options of either front end (already checked). @internal */
export type RelayOpenOptions = Omit<WebSocketTransportOptions, 'security'> & {
  webTransport?: WebTransportOptions | undefined;
  WebTransport?: WebTransportConstructor | undefined;
};

/** A relay connection, of either kind, and how the choice went. @internal */
export interface OpenedRelay {
  /** The connection. */
  raw: Transport & { close(): void };
  /** Which front end it reached. */
  kind: RelayTransportKind;
  /** Why WebTransport was not used although it was configured. */
  webTransportError?: string;
}

/** The first body byte of a relay control message (no party has this index). */
const CONTROL = 0xff;
/** Control codes: the admission answer's "admitted", and the relay's last message. */
const ADMITTED = 200;
const CLOSING = 1000;
/** Longest control message body the relay sends (1 + 2 + 1024 bytes of text). */
const MAX_CONTROL = 1027;
/** How long `close` waits for the relay's answer before ending the session anyway. */
const LINGER_MS = 5000;

/** The relay refused the request (not a transport failure: WebSocket would be refused too). */
class Refusal extends Error {}

/** Throws `bad(reason)` unless `o` is usable WebTransport options. @internal */
export function checkWebTransportOptions(o: unknown, bad: (m: string) => Error): void {
  if (o === undefined) return;
  if (typeof o !== 'object' || o === null) throw bad('webTransport must be { url, certificateHash? }');
  const { url, certificateHash: h, connectTimeoutMs: ms } = o as WebTransportOptions;
  if (typeof url !== 'string' || !/^https:\/\/[^/]/.test(url)) throw bad(`webTransport.url must start with https://, got ${String(url)}`);
  const okHash = h === undefined || (h instanceof Uint8Array && h.length === 32) || (typeof h === 'string' && /^[0-9a-fA-F]{64}$/.test(h.replace(/:/g, '')));
  if (!okHash) throw bad('webTransport.certificateHash must be 64 hex digits or 32 bytes (the relay prints it)');
  if (ms !== undefined && !(Number.isInteger(ms) && ms > 0)) throw bad(`webTransport.connectTimeoutMs must be a positive integer, got ${String(ms)}`);
}

/**
 * Opens a relay connection: over WebTransport when `o.webTransport` is given and the runtime
 * has WebTransport (browsers; not Node), falling back to the WebSocket when that fails;
 * otherwise over the WebSocket. A refusal by the relay is final (WebSocket would be refused the
 * same way). @internal
 */
export async function openRelay(o: RelayOpenOptions, kind: keyof typeof MODES): Promise<OpenedRelay> {
  let failure: string | undefined;
  if (o.webTransport) {
    const Ctor = o.WebTransport ?? (globalThis as { WebTransport?: WebTransportConstructor }).WebTransport;
    if (!Ctor) {
      failure = 'this runtime has no WebTransport';
    } else {
      try {
        return { raw: await WebTransportRelayConnection.open(o, o.webTransport, kind, Ctor), kind: 'webtransport' };
      } catch (e) {
        if (e instanceof Refusal) throw linkError('CLOSED', e.message);
        failure = e instanceof Error ? e.message : String(e);
      }
    }
  }
  const raw = await WebSocketTransport.open(o, kind);
  return { raw, kind: 'websocket', ...(failure !== undefined ? { webTransportError: failure } : {}) };
}

/**
 * The links of one party to the others of a session, through the relay's WebTransport front
 * end: one bidirectional stream that the relay opens, carrying length-prefixed messages
 * (`len: u32 LE ‖ [to] ‖ frame` out, `len ‖ [from] ‖ frame` in, the relay's control messages
 * `len ‖ 0xFF ‖ code: u16 LE ‖ text`: the admission answer first, the reason it ends the
 * connection last). The same guarantees as {@link WebSocketTransport}: `send` never waits,
 * frames from each peer arrive in order, `recv` rejects with `CLOSED` or `TIMEOUT`.
 * @internal
 */
export class WebTransportRelayConnection implements Transport {
  /** Why the relay connection closed, once it did (the relay's reason, if it gave one). */
  closeReason: string | undefined;
  readonly #wt: WebTransportLike;
  readonly #peers: RelayPeers;
  readonly #maxMessage: number;
  #writer: WritableStreamWriterLike<Uint8Array> | undefined;
  /** Settles the admission (the relay's first message); cleared once called. */
  #admitted: ((code: number, text: string) => void) | undefined;
  #linger: ReturnType<typeof setTimeout> | undefined;
  #ended = false;

  private constructor(wt: WebTransportLike, id: number, parties: number, timeoutMs: number, maxMessage: number) {
    this.#wt = wt;
    this.#peers = new RelayPeers(id, parties, timeoutMs);
    this.#maxMessage = maxMessage;
    // Settles (rejects, if the connection failed) whether or not anyone waits for it.
    wt.closed.then(
      () => this.#shutdown('the WebTransport session closed'),
      (e: unknown) => this.#shutdown(`relay connection lost: ${describe(e)}`),
    );
  }

  /** Opens the session and waits for the relay's admission answer (options already checked). */
  static async open(o: RelayOpenOptions, w: WebTransportOptions, kind: keyof typeof MODES, Ctor: WebTransportConstructor): Promise<WebTransportRelayConnection> {
    const connectMs = Math.min(w.connectTimeoutMs ?? 5000, o.connectTimeoutMs ?? 10_000);
    const url = `${w.url.replace(/\/+$/, '')}${relayPath(o, kind)}`;
    const hash = w.certificateHash;
    const options = hash === undefined ? {} : { serverCertificateHashes: [{ algorithm: 'sha-256', value: hashBytes(hash) }] };
    const where = `the relay's WebTransport at ${w.url}`;
    let wt: WebTransportLike;
    try {
      wt = new Ctor(url, options);
    } catch (e) {
      throw new Error(`${where}: ${describe(e)}`);
    }
    const c = new WebTransportRelayConnection(wt, o.id, o.parties ?? COMPUTE_PARTIES, o.timeoutMs ?? 30_000, o.maxMessageBytes ?? (16 << 20) + 1);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${where}: no connection within ${connectMs} ms`)), connectMs);
    });
    try {
      await Promise.race([c.#start(o), timeout]);
      return c;
    } catch (e) {
      c.#end();
      if (e instanceof Refusal) throw new Refusal(`joining the relay at ${w.url}: ${e.message}`);
      throw new Error(e instanceof Error && e.message.startsWith(where) ? e.message : `${where}: ${describe(e)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for the session and the relay's stream, starts reading, waits for the admission. */
  async #start(o: RelayOpenOptions): Promise<void> {
    const admission = new Promise<void>((resolve, reject) => {
      this.#admitted = (code, text) => {
        if (code === ADMITTED) resolve();
        else if (code >= 400 && code < 600) reject(new Refusal(refusalMessage(code, text, o)));
        else reject(new Error(text));
      };
    });
    // A failure before the answer settles it through #shutdown.
    admission.catch(() => {});
    await this.#wt.ready;
    const streams = this.#wt.incomingBidirectionalStreams.getReader();
    const { value: stream, done } = await streams.read();
    streams.releaseLock();
    if (done || !stream) throw new Error('the relay opened no stream');
    this.#writer = stream.writable.getWriter();
    void this.#pump(stream.readable.getReader());
    await admission;
  }

  send(to: number, frame: Uint8Array): void {
    this.#peers.check(to);
    if (this.#peers.closed || !this.#writer) throw linkError('CLOSED', `relay connection closed${this.closeReason ? `: ${this.closeReason}` : ''}`);
    if (frame.length + 1 > this.#maxMessage) {
      throw new Error(`frame of ${frame.length} bytes exceeds the relay's ${this.#maxMessage}-byte message limit`);
    }
    const msg = new Uint8Array(5 + frame.length);
    new DataView(msg.buffer).setUint32(0, frame.length + 1, true);
    msg[4] = to;
    msg.set(frame, 5);
    // A failed write ends the stream, which the reading side reports.
    this.#writer.write(msg).catch(() => {});
  }

  recv(from: number): Promise<Uint8Array> {
    return this.#peers.recv(from);
  }

  /**
   * Leaves the session: frames already sent are delivered first (the stream is finished after
   * them), then the others see `CLOSED`. The session ends once the relay answered, or after a
   * few seconds.
   */
  close(): void {
    if (this.#peers.closed) return this.#end();
    this.#shutdown('closed by this party');
    this.#writer?.close().catch(() => {});
    this.#linger = setTimeout(() => this.#end(), LINGER_MS);
  }

  /** Reads the relay's messages until its stream ends; then ends the session. */
  async #pump(reader: ReadableStreamReaderLike<Uint8Array>): Promise<void> {
    const buf = new MessageBuffer(Math.max(this.#maxMessage, MAX_CONTROL));
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf.push(value);
        for (let body = buf.next(); body; body = buf.next()) this.#onMessage(body);
      }
      if (buf.pending) throw new Error('the stream ended inside a message');
      this.#shutdown('the relay ended the connection');
    } catch (e) {
      this.#shutdown(`relay connection lost: ${describe(e)}`);
    } finally {
      this.#end();
    }
  }

  #onMessage(body: Uint8Array): void {
    if (body[0] === CONTROL) {
      const code = body.length >= 3 ? body[1]! | (body[2]! << 8) : -1;
      const text = new TextDecoder().decode(body.subarray(3));
      const admitted = this.#admitted;
      this.#admitted = undefined;
      if (admitted) admitted(code, text);
      else if (code === CLOSING) this.#shutdown(`relay connection closed (${code})${text ? `: ${text}` : ''}`);
      else throw new Error(`the relay sent an unexpected control message (${code})`);
      return;
    }
    if (this.#admitted) throw new Error('the relay sent a message before admitting this party');
    const malformed = this.#peers.deliver(body);
    if (malformed !== undefined) throw new Error(malformed);
  }

  #shutdown(reason: string): void {
    this.#admitted?.(0, reason);
    this.#admitted = undefined;
    if (this.#peers.shutdown(reason)) this.closeReason = reason;
  }

  /** Ends the WebTransport session (once). */
  #end(): void {
    this.#shutdown('closed');
    clearTimeout(this.#linger);
    if (this.#ended) return;
    this.#ended = true;
    try {
      this.#wt.close({ closeCode: 0, reason: 'done' });
    } catch {
      // already closed
    }
  }
}

/** Accumulates stream chunks and cuts them into message bodies. */
class MessageBuffer {
  readonly #max: number;
  #buf = new Uint8Array(64 << 10);
  #start = 0;
  #end = 0;

  constructor(max: number) {
    this.#max = max;
  }

  /** Whether part of a message is buffered. */
  get pending(): boolean {
    return this.#end > this.#start;
  }

  push(chunk: Uint8Array): void {
    if (this.#end + chunk.length > this.#buf.length) {
      const live = this.#end - this.#start;
      if (live + chunk.length <= this.#buf.length) {
        this.#buf.copyWithin(0, this.#start, this.#end);
      } else {
        const next = new Uint8Array(Math.max(2 * this.#buf.length, live + chunk.length));
        next.set(this.#buf.subarray(this.#start, this.#end));
        this.#buf = next;
      }
      this.#start = 0;
      this.#end = live;
    }
    this.#buf.set(chunk, this.#end);
    this.#end += chunk.length;
  }

  /** The next complete message body (a copy), or `undefined`. */
  next(): Uint8Array | undefined {
    const have = this.#end - this.#start;
    if (have < 4) return undefined;
    const b = this.#buf;
    const s = this.#start;
    const len = (b[s]! | (b[s + 1]! << 8) | (b[s + 2]! << 16) | (b[s + 3]! << 24)) >>> 0;
    if (len === 0 || len > this.#max) throw new Error(`the relay sent a message of ${len} bytes`);
    if (have < 4 + len) return undefined;
    const body = b.slice(s + 4, s + 4 + len);
    this.#start += 4 + len;
    if (this.#start === this.#end) this.#start = this.#end = 0;
    return body;
  }
}

/** The hash's bytes, in a buffer of their own (a `BufferSource` for the DOM's types). */
function hashBytes(h: string | Uint8Array): Uint8Array<ArrayBuffer> {
  return h instanceof Uint8Array ? h.slice() : fromHex(h.replace(/:/g, ''));
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  if (typeof e === 'object' && e !== null && 'reason' in e) return String((e as { reason: unknown }).reason);
  return String(e);
}
