/**
 * The WebRTC signalling of {@link RtcTransport}, inside the Noise link of each pair of compute
 * parties: JSON messages, in this order (the lower id L offers, the higher id H answers).
 *
 * ```text
 * L → H   offer, ice*, use {via, why?}        `use` is L's last message: its decision
 * H → L   answer, ice*, ok {via, why?}        `ok` is H's last: H confirms, or says relay
 *         (no-rtc {why} instead of an answer when H cannot take part)
 * ```
 *
 * L decides `webrtc` once its channel is open, or `relay` when the channel does not open in
 * time, the connection fails or H said `no-rtc`; H confirms `webrtc` once its own end is open.
 * After its last message a side sends no more signalling, so on a pair that stays on the relay
 * the Noise link carries frames right after it, and both ends agree on where frames go.
 * @internal
 * @module
 */

import { RingfenceError } from './errors.js';
import type { NoiseRelayLinks } from './noise.js';
import { DataChannelLink, type ChannelCounters } from './rtc-channel.js';
import type { RtcIceCandidateInit, RtcIceServer, RtcLinkKind, RtcPeerConnectionConstructor, RtcPeerConnectionLike } from './transport-rtc.js';

/** The signalling messages, inside the Noise link of one pair (JSON). */
type Signal =
  | { t: 'offer' | 'answer'; sdp: string }
  | { t: 'ice'; candidate: RtcIceCandidateInit }
  | { t: 'no-rtc'; why: string }
  | { t: 'use' | 'ok'; via: RtcLinkKind; why?: string };

/** What the signalling of one pair settled on. @internal */
export type PairOutcome = { via: 'webrtc'; channel: DataChannelLink } | { via: 'relay'; why: string };

/** Everything one pair's signalling needs. @internal */
export interface PairContext {
  peer: number;
  links: NoiseRelayLinks;
  Ctor: RtcPeerConnectionConstructor | undefined;
  /** Why there is no WebRTC here, when `Ctor` is absent. */
  noRtc: string;
  iceServers: RtcIceServer[];
  rtcTimeoutMs: number;
  timeoutMs: number;
  /** Signalling gives up at this time (`Date.now()`). */
  deadline: number;
  counters: ChannelCounters;
  /** Every DataChannel opened, to close them if `connect` fails. */
  opened: DataChannelLink[];
}

const messageOf = (e: unknown) => String((e as { message?: unknown })?.message ?? e);

/** The signalling channel of one pair: JSON messages in its Noise link. */
class Signalling {
  readonly #ctx: PairContext;
  #finished = false;

  constructor(ctx: PairContext) {
    this.#ctx = ctx;
  }

  /** Sends `msg` unless this side already sent its last signalling message. */
  send(msg: Signal): void {
    if (this.#finished) return;
    this.#ctx.links.send(this.#ctx.peer, new TextEncoder().encode(JSON.stringify(msg)));
  }

  /** Sends this side's last signalling message: frames may follow it on the link. */
  finish(msg: Signal): void {
    this.send(msg);
    this.#finished = true;
  }

  /** The next message from the peer (waiting until the pair's deadline). */
  async next(): Promise<Signal> {
    const { links, peer, deadline } = this.#ctx;
    for (;;) {
      let bytes: Uint8Array;
      try {
        bytes = await links.recv(peer);
      } catch (e) {
        const code = (e as { code?: unknown })?.code;
        if (code === 'TIMEOUT' && Date.now() < deadline) continue;
        if (code === 'TIMEOUT') throw new RingfenceError('TIMEOUT', `party ${peer} did not finish the WebRTC signalling in time`, { cause: e, peer });
        if (e instanceof RingfenceError) throw e;
        throw new RingfenceError('TRANSPORT', `the link to party ${peer} ended during the WebRTC signalling: ${messageOf(e)}`, { cause: e, peer });
      }
      return parseSignal(bytes, peer);
    }
  }
}

function parseSignal(bytes: Uint8Array, peer: number): Signal {
  let m: Record<string, unknown> | undefined;
  try {
    m = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as Record<string, unknown>;
  } catch {
    m = undefined;
  }
  const str = (k: string) => typeof m?.[k] === 'string';
  const ok =
    typeof m === 'object' && m !== null &&
    (((m.t === 'offer' || m.t === 'answer') && str('sdp')) ||
      (m.t === 'ice' && typeof m.candidate === 'object' && m.candidate !== null) ||
      (m.t === 'no-rtc' && str('why')) ||
      ((m.t === 'use' || m.t === 'ok') && (m.via === 'webrtc' || m.via === 'relay') && (m.why === undefined || str('why'))));
  if (!ok) {
    throw new RingfenceError(
      'PEER_MISBEHAVED',
      `party ${peer} sent something other than WebRTC signalling (${bytes.length} bytes): every compute party must connect with RtcTransport`,
      { peer },
    );
  }
  return m as Signal;
}

function unexpected(m: Signal, peer: number, when: string): RingfenceError {
  return new RingfenceError('PEER_MISBEHAVED', `party ${peer} sent a WebRTC "${m.t}" ${when}`, { peer });
}

/** A peer connection with its negotiated channel; candidates wait until the description is sent. */
interface Rtc {
  pc: RtcPeerConnectionLike;
  channel: DataChannelLink;
  /** Sends the local description, then the candidates gathered so far. */
  describe(kind: 'offer' | 'answer'): void;
}

function openRtc(ctx: PairContext, Ctor: RtcPeerConnectionConstructor, sig: Signalling): Rtc {
  const pc = new Ctor({ iceServers: ctx.iceServers });
  let described = false;
  const early: RtcIceCandidateInit[] = [];
  pc.onicecandidate = (ev: { candidate?: (RtcIceCandidateInit & { toJSON?(): RtcIceCandidateInit }) | null }) => {
    const c = ev.candidate;
    if (!c?.candidate) return; // the end of the candidates needs no message
    const init = typeof c.toJSON === 'function' ? c.toJSON() : { candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex, usernameFragment: c.usernameFragment };
    if (!described) return void early.push(init);
    try {
      sig.send({ t: 'ice', candidate: init });
    } catch {
      // The link is gone: the pair's next read reports it.
    }
  };
  const dc = pc.createDataChannel('ringfence', { negotiated: true, id: 0, ordered: true });
  const channel = new DataChannelLink(dc, ctx.peer, ctx.timeoutMs, ctx.counters, () => pc.sctp?.maxMessageSize, () => pc.close());
  ctx.opened.push(channel);
  return {
    pc,
    channel,
    describe(kind) {
      sig.send({ t: kind, sdp: pc.localDescription?.sdp ?? '' });
      described = true;
      for (const c of early.splice(0)) sig.send({ t: 'ice', candidate: c });
    },
  };
}

/** Resolves with `undefined` once `opened` resolves, or with why not within `ms`. */
function openWithin(opened: Promise<void>, ms: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(`the DataChannel did not open within ${ms} ms`), ms);
    opened.then(
      () => resolve(undefined),
      (e: unknown) => resolve(`the DataChannel failed: ${messageOf(e)}`),
    ).finally(() => clearTimeout(timer));
  });
}

/**
 * The lower id of a pair: offers a channel, decides (`use`) once it opens or the time is up,
 * and takes the peer's confirmation (`ok`), which may still say relay.
 */
export async function offer(ctx: PairContext): Promise<PairOutcome> {
  const sig = new Signalling(ctx);
  const { peer } = ctx;
  let rtc: Rtc | undefined;
  let why: string | undefined;
  try {
    rtc = ctx.Ctor ? openRtc(ctx, ctx.Ctor, sig) : undefined;
  } catch (e) {
    why = `RTCPeerConnection failed: ${messageOf(e)}`;
  }
  if (!rtc) {
    sig.finish({ t: 'use', via: 'relay', why: why ?? ctx.noRtc });
    const ok = await sig.next();
    if (ok.t !== 'ok') throw unexpected(ok, peer, 'instead of confirming the relay');
    return { via: 'relay', why: why ?? ctx.noRtc };
  }
  const { pc, channel } = rtc;
  let fallBack!: (why: string) => void;
  const fellBack = new Promise<string>((resolve) => (fallBack = resolve));
  pc.onconnectionstatechange = () => {
    if (pc.connectionState === 'failed') fallBack('ICE or DTLS failed');
  };
  // Reads the answer, candidates and the confirmation; ends with the confirmation.
  let decided = false;
  const reader = (async () => {
    for (;;) {
      const m = await sig.next();
      if (m.t === 'answer') {
        await pc.setRemoteDescription({ type: 'answer', sdp: m.sdp }).catch((e: unknown) => fallBack(`the answer was refused: ${messageOf(e)}`));
      } else if (m.t === 'ice') {
        // A candidate this platform cannot use is skipped, as browsers do.
        await pc.addIceCandidate(m.candidate).catch(() => {});
      } else if (m.t === 'no-rtc') {
        fallBack(m.why);
      } else if (m.t === 'ok' && decided) {
        return m;
      } else {
        throw unexpected(m, peer, 'out of turn');
      }
    }
  })();
  try {
    await pc.setLocalDescription(await pc.createOffer());
    rtc.describe('offer');
  } catch (e) {
    fallBack(`making the offer failed: ${messageOf(e)}`);
  }
  why = await Promise.race([openWithin(channel.opened, ctx.rtcTimeoutMs), fellBack, reader.then(() => 'unreachable')]);
  decided = true;
  sig.finish({ t: 'use', via: why === undefined ? 'webrtc' : 'relay', ...(why === undefined ? {} : { why }) });
  const ok = await reader;
  if (why === undefined && ok.via === 'webrtc') return { via: 'webrtc', channel };
  channel.abandon();
  return { via: 'relay', why: why ?? ok.why ?? 'the peer kept the relay' };
}

/**
 * The higher id of a pair: answers the offer, and confirms the offerer's decision (`use`)
 * once its own end of the channel is open, or says relay.
 */
export async function answer(ctx: PairContext): Promise<PairOutcome> {
  const sig = new Signalling(ctx);
  const { peer } = ctx;
  let rtc: Rtc | undefined;
  let refused = false;
  for (;;) {
    const m = await sig.next();
    if (m.t === 'offer' && !rtc && !refused) {
      try {
        if (!ctx.Ctor) throw new Error(ctx.noRtc);
        rtc = openRtc(ctx, ctx.Ctor, sig);
        await rtc.pc.setRemoteDescription({ type: 'offer', sdp: m.sdp });
        await rtc.pc.setLocalDescription(await rtc.pc.createAnswer());
        rtc.describe('answer');
      } catch (e) {
        refused = true;
        rtc?.channel.abandon();
        rtc = undefined;
        sig.send({ t: 'no-rtc', why: ctx.Ctor ? `answering the offer failed: ${messageOf(e)}` : ctx.noRtc });
      }
    } else if (m.t === 'ice') {
      await rtc?.pc.addIceCandidate(m.candidate).catch(() => {});
    } else if (m.t === 'use') {
      let why = m.via === 'relay' ? (m.why ?? 'the peer kept the relay') : undefined;
      if (m.via === 'webrtc') why = rtc ? await openWithin(rtc.channel.opened, ctx.rtcTimeoutMs) : 'no channel on this side';
      sig.finish({ t: 'ok', via: why === undefined ? 'webrtc' : 'relay', ...(why === undefined ? {} : { why }) });
      if (why === undefined && rtc) return { via: 'webrtc', channel: rtc.channel };
      rtc?.channel.abandon();
      return { via: 'relay', why: why ?? 'no channel' };
    } else {
      throw unexpected(m, peer, 'out of turn');
    }
  }
}
