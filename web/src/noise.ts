/**
 * End-to-end encrypted links through a relay: Noise KK between the parties, the relay sees
 * only ciphertext, and the pairwise seeds come from the handshakes. The handshake and record
 * layer are the native parties' own code compiled to wasm (crate `ringfence-link`), so SDK and
 * native parties can share a session.
 * @module
 */

import { RingfenceError, toRingfenceError } from './errors.js';
import { bindings } from './init.js';
import type { PartySeeds } from './party.js';
import { COMPUTE_PARTIES, DEPLOYMENT_SIZES, isComputeParty, nextParty, prevParty } from './roster.js';
import type { Transport } from './transport.js';
import { checkOptions, type WebSocketTransportOptions } from './transport-ws.js';
import {
  checkWebTransportOptions, openRelay, type OpenedRelay, type RelayTransportKind, type WebTransportConstructor,
  type WebTransportOptions,
} from './transport-wt.js';

/** A party's x25519 static identity keypair (32 bytes each). Keep `privateKey` secret. */
export interface NoiseKeypair {
  /** The 32-byte x25519 private key: keep it secret, never log it. */
  privateKey: Uint8Array;
  /** The 32-byte x25519 public key, given to the peers. */
  publicKey: Uint8Array;
}

/** Options of {@link SecureRelayTransport.connect}. */
export interface SecureRelayTransportOptions extends Omit<WebSocketTransportOptions, 'security' | 'maxMessageBytes'> {
  /** This party's keypair. */
  keypair: NoiseKeypair;
  /**
   * Every participant's public key, indexed by id (this party's own included): links
   * authenticate the peers against them. With `parties: 4`, the fourth is the classification
   * client's (see {@link Party.serve}).
   */
  publicKeys: Uint8Array[];
  /**
   * The compute parties of the session (ids `0 … servers − 1`; clients follow): 3, or 5 or 7
   * for rss ({@link Party.join} with the same `servers`).
   * @defaultValue 3
   */
  servers?: number;
  /**
   * The relay's WebTransport front end (`ringfence relay --webtransport`): when given and the
   * runtime has WebTransport (browsers; Node has none), the connection goes over WebTransport,
   * falling back to the WebSocket at `url` if that fails (see
   * {@link SecureRelayTransport.transport}).
   */
  webTransport?: WebTransportOptions;
  /**
   * The WebTransport implementation.
   * @defaultValue `globalThis.WebTransport`
   */
  WebTransport?: WebTransportConstructor;
}

/** The wasm exports this module uses (see `wasm/src/bindings/noise.rs`). @internal */
interface NoiseGlue {
  noiseKeypair(entropy: Uint8Array): NoiseKeypair;
  NoiseLinks: {
    establish(
      me: number,
      parties: number,
      session: Uint8Array,
      privateKey: Uint8Array,
      publicKeys: Uint8Array[],
      entropy: Uint8Array,
      link: Transport,
    ): Promise<WasmNoiseLinks>;
  };
}

/** @internal */
interface WasmNoiseLinks {
  seedWith(peer: number): Uint8Array;
  cipherWith(peer: number): string;
  send(to: number, frame: Uint8Array): void;
  recv(from: number): Promise<Uint8Array>;
  free(): void;
}

const closedError = () => Object.assign(new Error('secure relay transport closed'), { code: 'CLOSED' });
const glue = () => bindings() as unknown as NoiseGlue;
const random32 = () => globalThis.crypto.getRandomValues(new Uint8Array(32));

/** A fresh identity keypair (from the platform's CSPRNG). Requires `await init()`. */
export function generateNoiseKeypair(): NoiseKeypair {
  try {
    return glue().noiseKeypair(random32());
  } catch (e) {
    throw toRingfenceError(e);
  }
}

/**
 * Checks the options of a compute party's secure transport (`what` names it in messages);
 * returns the number of participants.
 * @internal
 */
export function checkSecureOptions(o: SecureRelayTransportOptions, what: string): number {
  const bad = (m: string) => new RingfenceError('INVALID_ARGUMENT', `${what}: ${m}`);
  if (typeof o !== 'object' || o === null) throw bad('needs an options object');
  checkOptions(o, bad);
  checkWebTransportOptions(o.webTransport, bad);
  const servers = o.servers ?? COMPUTE_PARTIES;
  if (!DEPLOYMENT_SIZES.includes(servers)) throw bad(`servers must be ${DEPLOYMENT_SIZES.join(', ')}, got ${String(servers)}`);
  const parties = o.parties ?? servers;
  if (parties < servers) throw bad(`a session has the ${servers} compute parties, then its clients`);
  if (!isComputeParty(o.id, servers)) throw bad(`id must be a compute party's (0 to ${servers - 1}), got ${o.id}: a client uses Client.connect`);
  if (!Array.isArray(o.publicKeys) || o.publicKeys.length !== parties) throw bad(`publicKeys must list the ${parties} participants' keys`);
  return parties;
}

/**
 * Noise links of one participant to every other of a session through the relay, for any number
 * of participants: the three compute parties ({@link SecureRelayTransport}) or, with a fourth,
 * the classification client ({@link Client}).
 * @internal
 */
export class NoiseRelayLinks implements Transport {
  /** Which of the relay's front ends the links go through, and why not WebTransport. */
  readonly relay: Omit<OpenedRelay, 'raw'>;
  readonly #raw: OpenedRelay['raw'];
  readonly #links: WasmNoiseLinks;
  #closed = false;

  private constructor({ raw, ...relay }: OpenedRelay, links: WasmNoiseLinks) {
    this.#raw = raw;
    this.relay = relay;
    this.#links = links;
  }

  /**
   * Joins the session at the relay as participant `o.id` of `o.parties` and authenticates a
   * link to every other participant (options already checked by the caller).
   */
  static async open(o: Omit<SecureRelayTransportOptions, 'parties'> & { parties: number }): Promise<NoiseRelayLinks> {
    let opened: OpenedRelay;
    try {
      opened = await openRelay(o, 'noise');
    } catch (e) {
      if (e instanceof RingfenceError) throw e;
      // The relay is unreachable, refused the session or never answered: no peer to blame.
      const { code, message } = e as { code?: unknown; message?: unknown };
      throw new RingfenceError(code === 'TIMEOUT' ? 'TIMEOUT' : 'TRANSPORT', String(message ?? e), { cause: e });
    }
    const raw = opened.raw;
    try {
      const kp = o.keypair;
      const links = await glue().NoiseLinks.establish(o.id, o.parties, o.sessionId, kp?.privateKey, o.publicKeys, random32(), raw);
      return new NoiseRelayLinks(opened, links);
    } catch (e) {
      raw.close();
      throw toRingfenceError(e);
    }
  }

  /** The pairwise key shared with `peer` (secret). */
  seedWith(peer: number): Uint8Array {
    return this.#links.seedWith(peer);
  }

  /** The AEAD of the link with `peer` (see {@link SecureRelayTransport.cipherWith}). */
  cipherWith(peer: number): string {
    return this.#links.cipherWith(peer);
  }

  send(to: number, frame: Uint8Array): void {
    if (this.#closed) throw closedError();
    this.#links.send(to, frame);
  }

  recv(from: number): Promise<Uint8Array> {
    if (this.#closed) return Promise.reject(closedError());
    return this.#links.recv(from);
  }

  /** Leaves the session (frames already sent are delivered first). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#raw.close();
    // Pending receives hold their own reference to the link state; this frees the handle.
    this.#links.free();
  }
}

/**
 * A {@link Transport} whose links to the other parties run through a relay, end-to-end
 * encrypted and mutually authenticated (Noise `KK_25519_AESGCM_SHA256`, bound to the session
 * and both party ids). {@link SecureRelayTransport.seeds} are the pairwise keys from the
 * handshakes, ready for {@link Party.join}.
 *
 * ```ts
 * await init();
 * const keypair = generateNoiseKeypair(); // publish keypair.publicKey to the other parties
 * const transport = await SecureRelayTransport.connect({ url, sessionId, id, keypair, publicKeys });
 * const party = await Party.join({ id, sessionId, seeds: transport.seeds, transport });
 * // ... operations ...
 * transport.close();
 * ```
 *
 * A party serving a classification client links to it too: `parties: 4`, the client's public
 * key fourth in `publicKeys`, and the same `parties` for {@link Party.join}.
 */
export class SecureRelayTransport implements Transport {
  /** The keys for {@link Party.join}: `prev`/`next` from the handshakes, `own` fresh. */
  readonly seeds: PartySeeds;
  /** Which of the relay's front ends the links go through. */
  readonly transport: RelayTransportKind;
  /**
   * Why the links do not go over WebTransport although `webTransport` was given (no
   * WebTransport in this runtime, or it could not connect); `undefined` otherwise.
   */
  readonly webTransportError: string | undefined;
  readonly #links: NoiseRelayLinks;

  private constructor(links: NoiseRelayLinks, id: number, servers: number) {
    this.#links = links;
    this.transport = links.relay.kind;
    this.webTransportError = links.relay.webTransportError;
    this.seeds = { prev: links.seedWith(prevParty(id, servers)), next: links.seedWith(nextParty(id, servers)), own: random32() };
  }

  /** Joins the session at the relay and authenticates a link to every other party. */
  static async connect(options: SecureRelayTransportOptions): Promise<SecureRelayTransport> {
    const parties = checkSecureOptions(options, 'SecureRelayTransport');
    return new SecureRelayTransport(await NoiseRelayLinks.open({ ...options, parties }), options.id, options.servers ?? COMPUTE_PARTIES);
  }

  /** The pairwise key shared with `peer` (secret). */
  seedWith(peer: number): Uint8Array {
    return this.#links.seedWith(peer);
  }

  /**
   * The AEAD protecting the records of the link with `peer`, as both ends agreed in the
   * handshake: `'chacha20-poly1305'` whenever one end is WebAssembly (it has no AES
   * instructions, so its AES-GCM would be several times slower), `'aes-256-gcm'` between two
   * native parties.
   *
   * @example
   * const t = await SecureRelayTransport.connect(options);
   * console.log(t.cipherWith(0)); // 'chacha20-poly1305'
   */
  cipherWith(peer: number): string {
    return this.#links.cipherWith(peer);
  }

  send(to: number, frame: Uint8Array): void {
    this.#links.send(to, frame);
  }

  recv(from: number): Promise<Uint8Array> {
    return this.#links.recv(from);
  }

  /** Leaves the session (frames already sent are delivered first). */
  close(): void {
    this.#links.close();
  }
}
