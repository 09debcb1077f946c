/**
 * A {@link Transport} whose links between the three compute parties are direct WebRTC
 * DataChannels, set up through the parties' authenticated Noise links over the relay, with the
 * relay links as the fallback.
 * @module
 */

import { RingfenceError, toRingfenceError } from './errors.js';
import { NoiseRelayLinks, checkSecureOptions, type SecureRelayTransportOptions } from './noise.js';
import type { PartySeeds } from './party.js';
import { COMPUTE_PARTIES, computeParties, nextParty, prevParty } from './roster.js';
import { linkError } from './inbox.js';
import { DataChannelLink, type ChannelCounters, type FrameCounters, type RtcDataChannelLike } from './rtc-channel.js';
import { answer, offer, type PairContext, type PairOutcome } from './rtc-signalling.js';
import type { Transport } from './transport.js';

export type { ChannelCounters, FrameCounters, RtcDataChannelLike } from './rtc-channel.js';

/** How frames travel to a peer: a direct DataChannel, or the Noise link through the relay. */
export type RtcLinkKind = 'webrtc' | 'relay';

/** A STUN or TURN server, as `RTCPeerConnection` takes it. */
export interface RtcIceServer {
  /** The server's URL(s), e.g. `stun:stun.example.org:3478`. */
  urls: string | string[];
  /** The TURN user name. */
  username?: string;
  /** The TURN credential. */
  credential?: string;
}

/** An ICE candidate as signalled (`RTCIceCandidate.toJSON()`). */
export interface RtcIceCandidateInit {
  /** The candidate line. */
  candidate?: string;
  /** The media stream it belongs to. */
  sdpMid?: string | null;
  /** The index of that media stream. */
  sdpMLineIndex?: number | null;
  /** The ICE user fragment. */
  usernameFragment?: string | null;
}

/** The kind of a session description. */
export type RtcSdpType = 'offer' | 'answer' | 'pranswer' | 'rollback';

/** A session description as `createOffer` and `createAnswer` give it. */
export interface RtcDescription {
  /** Its kind. */
  type?: RtcSdpType;
  /** The SDP text. */
  sdp?: string;
}

/** The part of `RTCSctpTransport` the transport uses. */
export interface RtcSctpTransportLike {
  /** The largest message the peer accepts, in bytes (`Infinity`: no limit). */
  readonly maxMessageSize: number;
}

/** The part of `RTCPeerConnection` the transport uses (browsers', or a Node implementation's). */
export interface RtcPeerConnectionLike {
  /** The local offer or answer, once set. */
  readonly localDescription: RtcDescription | null;
  /** `'failed'` makes the transport fall back at once instead of waiting for the timeout. */
  readonly connectionState?: string;
  /** The SCTP transport, once the remote description is set: its message size sizes the chunks. */
  readonly sctp?: RtcSctpTransportLike | null;
  /** Creates the (negotiated) data channel. */
  createDataChannel(label: string, init: { negotiated: boolean; id: number; ordered: boolean }): RtcDataChannelLike;
  /** Creates an offer. */
  createOffer(): Promise<RtcDescription>;
  /** Creates an answer. */
  createAnswer(): Promise<RtcDescription>;
  /** Applies the local offer or answer. */
  setLocalDescription(description: RtcDescription): Promise<void>;
  /** Applies the peer's offer or answer. */
  setRemoteDescription(description: { type: 'offer' | 'answer'; sdp: string }): Promise<void>;
  /** Adds a candidate of the peer. */
  addIceCandidate(candidate: RtcIceCandidateInit): Promise<void>;
  /** Called with each local candidate (`ev.candidate`, `null` at the end). */
  onicecandidate: ((ev: never) => void) | null;
  /** Called when `connectionState` changes. */
  onconnectionstatechange: ((ev: never) => void) | null;
  /** Closes the connection. */
  close(): void;
}

/** An `RTCPeerConnection` constructor (`globalThis.RTCPeerConnection`, or a Node implementation's). */
export type RtcPeerConnectionConstructor = new (config: { iceServers: RtcIceServer[] }) => RtcPeerConnectionLike;

/** Options of {@link RtcTransport.connect}: those of {@link SecureRelayTransport}, and WebRTC's. */
export interface RtcTransportOptions extends SecureRelayTransportOptions {
  /**
   * STUN and TURN servers. Without any, only host candidates are tried: parties on one host or
   * one network. Parties behind NATs need STUN, and TURN where no direct path exists.
   * @defaultValue `[]`
   */
  iceServers?: RtcIceServer[];
  /**
   * How long the DataChannels may take to open; a pair whose channel is not open by then keeps
   * its relay link.
   * @defaultValue 10000
   */
  rtcTimeoutMs?: number;
  /**
   * The `RTCPeerConnection` implementation; `null` turns WebRTC off (every link stays on the
   * relay).
   * @defaultValue `globalThis.RTCPeerConnection` (none in Node: the links stay on the relay)
   */
  RTCPeerConnection?: RtcPeerConnectionConstructor | null;
  /**
   * Receives the message saying which links fell back to the relay, and why.
   * @defaultValue `console.warn`
   */
  onWarning?: (message: string) => void;
}

/** Frames carried so far by each kind of link (signalling excluded). */
export interface RtcTransportStats {
  /** Over the DataChannels. */
  readonly webrtc: Readonly<ChannelCounters>;
  /** Over the Noise links through the relay (the fallback, and the links to clients). */
  readonly relay: Readonly<FrameCounters>;
}

const counters = (): FrameCounters => ({ framesSent: 0, bytesSent: 0, framesReceived: 0, bytesReceived: 0 });
const random32 = () => globalThis.crypto.getRandomValues(new Uint8Array(32));

/**
 * A {@link Transport} between the three compute parties over direct WebRTC DataChannels:
 * browsers compute with each other without the relay in the path.
 *
 * 1. Each party joins the session at the relay and authenticates a Noise link to every other
 *    participant, exactly as {@link SecureRelayTransport} does; the pairwise seeds come from
 *    these handshakes.
 * 2. Those links carry the WebRTC signalling (offer, answer, ICE candidates), so the relay can
 *    neither read nor swap them: the DTLS fingerprints in the SDP are authenticated by the
 *    parties' keys. The lower id of each pair offers one ordered, reliable, negotiated
 *    DataChannel.
 * 3. A pair whose channel opens within `rtcTimeoutMs` moves its frames to it (DTLS-encrypted,
 *    chunked to the channel's message size, sent under `bufferedAmount` back-pressure); a pair
 *    whose channel does not open keeps its Noise link through the relay, and the transport says
 *    so ({@link RtcTransport.kind}, `onWarning`). Both ends of a pair always agree.
 * 4. Once no link needs it (every compute pair on WebRTC, no client), the relay connection is
 *    closed. Links to clients (ids from 3, e.g. a {@link Client}) stay on the relay.
 *
 * ```ts
 * await init();
 * const transport = await RtcTransport.connect({ url, sessionId, id, keypair, publicKeys });
 * console.log(transport.kind); // 'webrtc' (or 'relay' / 'mixed' after a fallback)
 * const party = await Party.join({ id, sessionId, seeds: transport.seeds, transport });
 * // ... operations ...
 * transport.close();
 * ```
 *
 * All three compute parties must speak its signalling (it runs before any frame): browsers
 * with `RtcTransport`, native parties with `--webrtc` (`ringfence session-party`,
 * `interop-party`); {@link SecureRelayTransport} does not.
 */
export class RtcTransport implements Transport {
  /** The keys for {@link Party.join}: `prev`/`next` from the Noise handshakes, `own` fresh. */
  readonly seeds: PartySeeds;
  /**
   * Where the compute parties' frames go: `'webrtc'` when both links are DataChannels,
   * `'relay'` when both fell back, `'mixed'` otherwise (see {@link RtcTransport.via}).
   */
  readonly kind: RtcLinkKind | 'mixed';
  /** Why links fell back to the relay (`undefined` when none did). */
  readonly fallbackReason: string | undefined;
  readonly #id: number;
  readonly #seeds: Map<number, Uint8Array>;
  readonly #channels: (DataChannelLink | undefined)[];
  readonly #stats: { webrtc: ChannelCounters; relay: FrameCounters };
  /** The Noise links through the relay, while any link uses them. */
  #links: NoiseRelayLinks | undefined;
  #closed = false;

  private constructor(id: number, links: NoiseRelayLinks, parties: number, outcomes: Map<number, PairOutcome>, webrtc: ChannelCounters) {
    this.#id = id;
    this.#seeds = new Map(Array.from({ length: parties }, (_, j) => j).filter((j) => j !== id).map((j) => [j, links.seedWith(j)]));
    this.seeds = { prev: this.seedWith(prevParty(id)), next: this.seedWith(nextParty(id)), own: random32() };
    this.#channels = Array.from({ length: parties }, (_, j) => {
      const o = outcomes.get(j);
      return o?.via === 'webrtc' ? o.channel : undefined;
    });
    this.#stats = { webrtc, relay: counters() };
    const fallbacks = [...outcomes].flatMap(([j, o]) => (o.via === 'relay' ? [`party ${j}: ${o.why}`] : []));
    this.kind = fallbacks.length === 0 ? 'webrtc' : fallbacks.length === outcomes.size ? 'relay' : 'mixed';
    this.fallbackReason = fallbacks.length ? fallbacks.join('; ') : undefined;
    if (fallbacks.length === 0 && parties === COMPUTE_PARTIES) {
      // Every frame now goes over the DataChannels: leave the relay (the last signalling
      // message is delivered first).
      links.close();
    } else {
      this.#links = links;
    }
  }

  /**
   * Joins the session at the relay, authenticates the Noise links, and opens a DataChannel to
   * each other compute party through them (or keeps the relay link where that fails).
   */
  static async connect(options: RtcTransportOptions): Promise<RtcTransport> {
    const parties = checkSecureOptions(options, 'RtcTransport');
    const o = options;
    const bad = (m: string) => new RingfenceError('INVALID_ARGUMENT', `RtcTransport: ${m}`);
    const rtcTimeoutMs = o.rtcTimeoutMs ?? 10_000;
    if (!(Number.isFinite(rtcTimeoutMs) && rtcTimeoutMs > 0)) throw bad(`rtcTimeoutMs must be a positive number, got ${String(rtcTimeoutMs)}`);
    if (o.iceServers !== undefined && !Array.isArray(o.iceServers)) throw bad('iceServers must be an array of { urls, username?, credential? }');
    const given = o.RTCPeerConnection;
    if (given !== undefined && given !== null && typeof given !== 'function') throw bad('RTCPeerConnection must be a constructor, or null');
    const global = (globalThis as { RTCPeerConnection?: RtcPeerConnectionConstructor }).RTCPeerConnection;
    const Ctor = given === null ? undefined : (given ?? global);
    const noRtc = given === null ? 'WebRTC is turned off (RTCPeerConnection: null)' : 'this runtime has no RTCPeerConnection (options.RTCPeerConnection can provide one)';

    const links = await NoiseRelayLinks.open({ ...o, parties });
    const timeoutMs = o.timeoutMs ?? 30_000;
    const webrtc: ChannelCounters = { ...counters(), messagesSent: 0 };
    const opened: DataChannelLink[] = [];
    const ctx = (peer: number): PairContext => ({
      peer, links, Ctor, noRtc, iceServers: o.iceServers ?? [], rtcTimeoutMs, timeoutMs,
      deadline: Date.now() + rtcTimeoutMs + timeoutMs, counters: webrtc, opened,
    });
    let failure: unknown;
    const peers = computeParties().filter((j) => j !== o.id);
    const pairs = peers.map((j) =>
      (o.id < j ? offer(ctx(j)) : answer(ctx(j))).catch((e: unknown) => {
        // The first failure ends every pair: their pending reads reject once the links close.
        if (failure === undefined) {
          failure = e;
          links.close();
          for (const c of opened) c.abandon();
        }
        throw e;
      }),
    );
    const settled = await Promise.allSettled(pairs);
    if (failure !== undefined) throw toRingfenceError(failure);
    const outcomes = new Map(settled.map((r, i) => [peers[i]!, (r as PromiseFulfilledResult<PairOutcome>).value]));
    const transport = new RtcTransport(o.id, links, parties, outcomes, webrtc);
    if (transport.fallbackReason) {
      (o.onWarning ?? console.warn)(`RtcTransport: party ${o.id}'s links go through the relay to ${transport.fallbackReason}`);
    }
    return transport;
  }

  /** How frames travel to `peer`. */
  via(peer: number): RtcLinkKind {
    this.#check(peer);
    return this.#channels[peer] ? 'webrtc' : 'relay';
  }

  /** The pairwise key shared with `peer` (secret), from the Noise handshake. */
  seedWith(peer: number): Uint8Array {
    const seed = this.#seeds.get(peer);
    if (!seed) throw new RangeError(`party ${this.#id} shares no key with ${String(peer)}`);
    return seed.slice();
  }

  /** Frames and bytes carried so far, per kind of link. */
  stats(): RtcTransportStats {
    return { webrtc: { ...this.#stats.webrtc }, relay: { ...this.#stats.relay } };
  }

  send(to: number, frame: Uint8Array): void {
    this.#check(to);
    if (this.#closed) throw linkError('CLOSED', 'WebRTC transport closed');
    const channel = this.#channels[to];
    if (channel) return channel.send(frame);
    this.#relay().send(to, frame);
    this.#stats.relay.framesSent += 1;
    this.#stats.relay.bytesSent += frame.byteLength;
  }

  async recv(from: number): Promise<Uint8Array> {
    this.#check(from);
    if (this.#closed) throw linkError('CLOSED', 'WebRTC transport closed');
    const channel = this.#channels[from];
    if (channel) return channel.recv();
    const frame = await this.#relay().recv(from);
    this.#stats.relay.framesReceived += 1;
    this.#stats.relay.bytesReceived += frame.byteLength;
    return frame;
  }

  /** Leaves the session: frames already sent are delivered first, then the channels close. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const c of this.#channels) c?.close();
    this.#links?.close();
    this.#links = undefined;
  }

  #check(peer: number): void {
    if (!Number.isInteger(peer) || peer < 0 || peer >= this.#channels.length || peer === this.#id) {
      throw new RangeError(`party ${this.#id} has no link to ${String(peer)} (session of ${this.#channels.length})`);
    }
  }

  #relay(): NoiseRelayLinks {
    // Unreachable while open: the relay is left only when no link uses it.
    if (!this.#links) throw linkError('CLOSED', 'the relay connection is closed');
    return this.#links;
  }
}
