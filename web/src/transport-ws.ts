/**
 * A {@link Transport} through a ringfence relay (`ringfence relay`) over one WebSocket, in
 * browsers (the global `WebSocket`) and in Node (the `ws` package, loaded on demand).
 * @module
 */

import { RingfenceError } from './errors.js';
import { linkError } from './inbox.js';
import { MODES, RelayPeers, relayPath } from './relay-peers.js';
import { COMPUTE_PARTIES } from './roster.js';
import type { Transport } from './transport.js';

/**
 * The one mode of {@link WebSocketTransport}, and it is **insecure**: frames cross the relay in
 * plaintext and the pairwise seeds must come from {@link insecureTestSeeds} with a label every
 * party knows. The relay (and anyone on the path) sees every share, so nothing is private.
 * Native parties offer the same mode (`--danger-insecure-test-seeds LABEL`) to compute with SDK
 * parties in tests. For private computations use {@link SecureRelayTransport}: end-to-end
 * Noise between the parties, the same as native parties use.
 */
export type WebSocketLinkSecurity = 'danger-insecure-test-seeds';

/** The part of the WebSocket API the transport uses (browsers' `WebSocket`, Node's `ws`). */
export interface WebSocketLike {
  /** Set to `'arraybuffer'` so binary messages arrive as `ArrayBuffer`s. */
  binaryType: string;
  /** Sends one binary message. */
  send(data: Uint8Array): void;
  /** Closes the connection. */
  close(code?: number, reason?: string): void;
  /** Called once the connection is open. */
  onopen: ((ev: unknown) => void) | null;
  /** Called with each received message. */
  onmessage: ((ev: { data: unknown }) => void) | null;
  /** Called when the connection closes, with the close code and reason. */
  onclose: ((ev: { code?: number; reason?: string }) => void) | null;
  /** Called when the connection fails. */
  onerror: ((ev: { message?: string; error?: unknown }) => void) | null;
}

/** A WebSocket constructor (`globalThis.WebSocket`, or `WebSocket` from the `ws` package). */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

/**
 * The relay's WebSocket subprotocol for clients that learn of their admission in-band (a
 * browser cannot read the HTTP status of a refused upgrade): the relay answers `admitted`
 * first, or closes with 4000 + the HTTP status of its refusal and the reason.
 */
const IN_BAND_ADMISSION = 'ringfence.admission';

/**
 * What to do about the relay's refusal to admit a connection, for the error message: `status`
 * is the HTTP status of the refusal (over WebSocket the close code 4000 + status, over
 * WebTransport the admission answer's code), `reason` the relay's. @internal
 */
export function refusalMessage(status: number, reason: string, o: Pick<WebSocketTransportOptions, 'id' | 'token' | 'invite'>): string {
  const relay = `(relay: ${status} ${reason})`;
  switch (status) {
    case 401:
      return o.token === undefined
        ? 'the relay requires a join token for this session: pass `token` (`ringfence local-deployment --dev` serves one at ' +
            `http://127.0.0.1:8787/session?key=HEX; a deployment's backend issues them with \`ringfence token issue\`) ${relay}`
        : `the relay did not accept the join token (malformed, expired, or not signed by a deployment it trusts): get a fresh token for this session ${relay}`;
    case 403:
      return `the join token is not for this connection: pass the token issued for this session id and participant ${o.id} ${relay}`;
    case 404:
      return `the relay has no deployment ${JSON.stringify(o.invite?.deployment ?? '')}: check \`deployment\` (\`ringfence local-deployment\` serves "local") ${relay}`;
    default:
      return `the relay refused the connection ${relay}`;
  }
}

/** Options of {@link WebSocketTransport.connect}. */
export interface WebSocketTransportOptions {
  /** The relay's base URL, e.g. `ws://127.0.0.1:9000` (the session path is appended). */
  url: string;
  /** The session id, 16 bytes, the same at all parties. */
  sessionId: Uint8Array;
  /** This party's index. */
  id: number;
  /**
   * Must be given explicitly: see {@link WebSocketLinkSecurity} (there is no default, so an
   * insecure link is never chosen silently).
   */
  security: WebSocketLinkSecurity;
  /**
   * Number of parties in the session.
   * @defaultValue 3
   */
  parties?: number;
  /**
   * Rejects a `recv` with `code: 'TIMEOUT'` when no frame arrives within this many ms.
   * @defaultValue 30000
   */
  timeoutMs?: number;
  /**
   * Time allowed to open the connection to the relay.
   * @defaultValue 10000
   */
  connectTimeoutMs?: number;
  /**
   * The join token, for a relay that requires one (`ringfence relay --deployment`): issued by
   * the deployment for this session and party id (`ringfence token issue`).
   */
  token?: string;
  /**
   * Opening a session with a deployment's long-running server parties: the relay invites the
   * parties of this deployment and hands them `clientKey`, this client's Noise public key.
   * @internal
   */
  invite?: { deployment: string; clientKey: Uint8Array };
  /**
   * The relay's largest message (`ringfence relay --max-message-bytes`); a frame travels in one
   * message, so larger frames fail to send.
   * @defaultValue 16 MiB + 1
   */
  maxMessageBytes?: number;
  /**
   * The WebSocket implementation.
   * @defaultValue `globalThis.WebSocket`, else the `ws` package (Node)
   */
  WebSocket?: WebSocketConstructor;
}

/** Largest payload the native client and the Noise links put in one relay message. */
export const NOISE_CHUNK = 64 << 10;

/** Throws `bad(reason)` unless the connection options are usable. @internal */
export function checkOptions(o: Omit<WebSocketTransportOptions, 'security'>, bad: (m: string) => Error): void {
  const parties = o.parties ?? COMPUTE_PARTIES;
  if (!Number.isInteger(parties) || parties < 2 || parties > 255) throw bad(`parties must be 2..255, got ${String(parties)}`);
  if (!Number.isInteger(o.id) || o.id < 0 || o.id >= parties) throw bad(`id must be 0..${parties - 1}, got ${String(o.id)}`);
  if (!(o.sessionId instanceof Uint8Array) || o.sessionId.length !== 16) throw bad('sessionId must be 16 bytes');
  if (typeof o.url !== 'string' || !/^wss?:\/\//.test(o.url)) throw bad(`url must start with ws:// or wss://, got ${String(o.url)}`);
  if (o.token !== undefined && (typeof o.token !== 'string' || !/^[A-Za-z0-9._-]{1,512}$/.test(o.token))) {
    throw bad('token must be the string `ringfence token issue` printed');
  }
}

async function defaultWebSocket(): Promise<WebSocketConstructor> {
  const global = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (global) return global;
  // Node 20 has no global WebSocket: `ws` is the package's optional dependency, which npm
  // installs with it. A variable specifier keeps bundlers from pulling it into browser builds.
  const name = 'ws';
  try {
    const mod = (await import(/* @vite-ignore */ name)) as { WebSocket?: WebSocketConstructor; default?: WebSocketConstructor };
    const ctor = mod.WebSocket ?? mod.default;
    if (ctor) return ctor;
  } catch {
    // fall through to the error below
  }
  throw new RingfenceError(
    'INVALID_ARGUMENT',
    'no WebSocket implementation: this runtime has no global WebSocket (Node < 22) and the `ws` package, an optional ' +
      'dependency of ringfence, is not installed (npm skips it with --omit=optional): `npm install ws`, or pass options.WebSocket',
  );
}

/**
 * The links of one party to the others of a session, through a relay.
 *
 * Wire: binary messages `[to: u8] ‖ frame` out, `[from: u8] ‖ frame` in; the one-byte message
 * `[from]` says that party left. `send` never waits; frames from each peer arrive in order;
 * `recv` rejects with `code: 'CLOSED'` once the peer left or the relay connection closed (after
 * the frames already received), or `code: 'TIMEOUT'` after `timeoutMs`.
 *
 * ```ts
 * const sessionId = ...; // 16 bytes agreed by all parties
 * const transport = await WebSocketTransport.connect({
 *   url: 'ws://127.0.0.1:9000', sessionId, id, security: 'danger-insecure-test-seeds',
 * });
 * const party = await Party.join({ id, sessionId, seeds: await insecureTestSeeds('demo', id), transport });
 * // ... operations ...
 * transport.close();
 * ```
 */
export class WebSocketTransport implements Transport {
  /** Why the relay connection closed, once it did (the relay's close reason, if any). */
  closeReason: string | undefined;
  readonly #ws: WebSocketLike;
  readonly #maxMessage: number;
  readonly #peers: RelayPeers;
  /** Settles `connect` (`undefined` = admitted); cleared once called. */
  #opened: ((failure?: string) => void) | undefined;
  /** The options it was opened with (what a refusal's message refers to). */
  #options: Pick<WebSocketTransportOptions, 'id' | 'token' | 'invite'> | undefined;

  private constructor(ws: WebSocketLike, id: number, parties: number, timeoutMs: number, maxMessage: number) {
    this.#ws = ws;
    this.#maxMessage = maxMessage;
    this.#peers = new RelayPeers(id, parties, timeoutMs);
    // Open is not admitted yet: the relay's first message says so (IN_BAND_ADMISSION).
    ws.onopen = () => {};
    ws.onmessage = (ev) => this.#onMessage(ev.data);
    ws.onclose = (ev) => this.#shutdown(this.#closeMessage(ev.code, ev.reason));
    ws.onerror = (ev) => this.#shutdown(`relay connection failed: ${ev.message ?? String(ev.error ?? 'error')}`);
  }

  #settle(failure?: string): void {
    const opened = this.#opened;
    this.#opened = undefined;
    opened?.(failure);
  }

  /** Joins the session at the relay; resolves once the connection is open. */
  static async connect(options: WebSocketTransportOptions): Promise<WebSocketTransport> {
    const o = options;
    const bad = (m: string) => new RingfenceError('INVALID_ARGUMENT', `WebSocketTransport: ${m}`);
    if (typeof o !== 'object' || o === null) throw bad('needs an options object');
    if (o.security !== 'danger-insecure-test-seeds') {
      throw bad(
        "security must be named: 'danger-insecure-test-seeds' (plaintext through the relay, seeds from " +
          'insecureTestSeeds; tests and demos only). For private computations use SecureRelayTransport.',
      );
    }
    checkOptions(o, bad);
    return WebSocketTransport.open(o, 'plain');
  }

  /**
   * Opens a relay connection of either kind (options already checked but for `security`).
   * `noise`: a byte link for {@link SecureRelayTransport}, not a frame transport.
   * @internal
   */
  static async open(o: Omit<WebSocketTransportOptions, 'security'>, kind: keyof typeof MODES): Promise<WebSocketTransport> {
    const parties = o.parties ?? COMPUTE_PARTIES;
    const timeoutMs = o.timeoutMs ?? 30_000;
    const connectMs = o.connectTimeoutMs ?? 10_000;
    const maxMessage = o.maxMessageBytes ?? (16 << 20) + 1;
    const Ctor = o.WebSocket ?? (await defaultWebSocket());
    const ws = new Ctor(`${o.url.replace(/\/+$/, '')}${relayPath(o, kind)}`, IN_BAND_ADMISSION);
    ws.binaryType = 'arraybuffer';
    // Wired before the connection opens: messages queued for this party at the relay can
    // arrive in the same read as the handshake answer, before `connect` resumes.
    const transport = new WebSocketTransport(ws, o.id, parties, timeoutMs, maxMessage);
    transport.#options = o;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        transport.close();
        reject(linkError('CLOSED', `joining the relay at ${o.url}: no connection within ${connectMs} ms`));
      }, connectMs);
      transport.#opened = (failure) => {
        clearTimeout(timer);
        if (failure === undefined) resolve();
        else reject(linkError('CLOSED', `joining the relay at ${o.url}: ${failure}`));
      };
    });
    return transport;
  }

  send(to: number, frame: Uint8Array): void {
    this.#peers.check(to);
    if (this.#peers.closed) throw linkError('CLOSED', `relay connection closed${this.closeReason ? `: ${this.closeReason}` : ''}`);
    if (frame.length + 1 > this.#maxMessage) {
      throw new Error(`frame of ${frame.length} bytes exceeds the relay's ${this.#maxMessage}-byte message limit`);
    }
    const msg = new Uint8Array(frame.length + 1);
    msg[0] = to;
    msg.set(frame, 1);
    this.#ws.send(msg);
  }

  recv(from: number): Promise<Uint8Array> {
    return this.#peers.recv(from);
  }

  /** Leaves the session: frames already sent are delivered first, then the others see `CLOSED`. */
  close(): void {
    if (this.#peers.closed) return;
    this.#ws.close(1000, 'done');
    this.#shutdown('closed by this party');
  }

  /** Why the relay closed the connection: what to do about it, for a refusal. */
  #closeMessage(code: number | undefined, reason: string | undefined): string {
    if (code !== undefined && code >= 4000 && code < 5000 && this.#options) return refusalMessage(code - 4000, reason ?? '', this.#options);
    return `relay connection closed (${code ?? ''})${reason ? `: ${reason}` : ''}`;
  }

  #onMessage(data: unknown): void {
    if (this.#opened && data === 'admitted') return this.#settle();
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data instanceof Uint8Array ? data : null;
    const malformed = bytes ? this.#peers.deliver(bytes) : `the relay sent a malformed message (${typeof data})`;
    if (malformed !== undefined) {
      this.#shutdown(malformed);
      this.#ws.close(1002, 'malformed message');
    }
  }

  #shutdown(reason: string): void {
    this.#settle(reason);
    if (this.#peers.shutdown(reason)) this.closeReason = reason;
  }
}
