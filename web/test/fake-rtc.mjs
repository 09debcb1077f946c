// An in-process stand-in for RTCPeerConnection, for the RtcTransport tests in Node: no network,
// no ICE. Peer connections of one `fakeWebRtc()` world find each other through the tokens in
// their SDP; once both have the other's description and a candidate, their negotiated channels
// open. The channel is strict where browsers are: a message above `maxMessageSize` throws, and
// so does a send that would queue more than `sendQueueLimit` bytes (Chromium's send queue is
// 16 MiB), so a transport without back-pressure or chunking fails here.

/**
 * Returns an RTCPeerConnection constructor. `connect: false` makes channels that never open (a
 * path ICE cannot find); `stats` counts messages and the largest buffered amount seen.
 */
export function fakeWebRtc({ maxMessageSize = 16 << 10, sendQueueLimit = 16 << 20, connect = true } = {}) {
  const world = new Map(); // token → FakePeerConnection
  const stats = { messages: 0, maxBuffered: 0 };
  let next = 0;

  class FakeChannel {
    binaryType = 'blob';
    readyState = 'connecting';
    bufferedAmount = 0;
    bufferedAmountLowThreshold = 0;
    onopen = null;
    onmessage = null;
    onclose = null;
    onerror = null;
    onbufferedamountlow = null;
    peer = null;
    #inFlight = 0;

    send(data) {
      if (this.readyState !== 'open') throw new Error(`InvalidStateError: channel is ${this.readyState}`);
      if (!(data instanceof Uint8Array)) throw new TypeError('this fake takes Uint8Arrays');
      if (data.byteLength > maxMessageSize) throw new TypeError(`message of ${data.byteLength} bytes above maxMessageSize ${maxMessageSize}`);
      if (this.bufferedAmount + data.byteLength > sendQueueLimit) throw new Error('OperationError: send queue is full');
      const copy = data.slice().buffer;
      this.bufferedAmount += copy.byteLength;
      stats.maxBuffered = Math.max(stats.maxBuffered, this.bufferedAmount);
      stats.messages += 1;
      this.#inFlight += 1;
      setTimeout(() => {
        this.#inFlight -= 1;
        const before = this.bufferedAmount;
        this.bufferedAmount -= copy.byteLength;
        if (this.peer?.readyState === 'open' || this.peer?.readyState === 'closing') this.peer.onmessage?.({ data: copy });
        if (before > this.bufferedAmountLowThreshold && this.bufferedAmount <= this.bufferedAmountLowThreshold) this.onbufferedamountlow?.({});
        if (this.readyState === 'closing' && this.#inFlight === 0) this.#closeBoth();
      }, 0);
    }

    close() {
      if (this.readyState === 'closed' || this.readyState === 'closing') return;
      this.readyState = 'closing';
      if (this.#inFlight === 0) setTimeout(() => this.#closeBoth(), 0);
    }

    /** Ends both ends (delivered messages first, as the SCTP stream reset does). */
    #closeBoth() {
      for (const ch of [this, this.peer]) {
        if (!ch || ch.readyState === 'closed') continue;
        ch.readyState = 'closed';
        ch.onclose?.({});
      }
    }

    abort() {
      if (this.readyState === 'closed') return;
      this.readyState = 'closed';
      this.onclose?.({});
    }

    open() {
      this.readyState = 'open';
      this.onopen?.({});
    }
  }

  class FakePeerConnection {
    localDescription = null;
    connectionState = 'new';
    sctp = null;
    onicecandidate = null;
    onconnectionstatechange = null;
    #token = `fake-${++next}`;
    #remote = undefined;
    #candidate = false;
    #channel = undefined;

    constructor(config) {
      if (!Array.isArray(config?.iceServers)) throw new TypeError('iceServers must be an array');
    }

    createDataChannel(label, init) {
      if (!init?.negotiated || init.id !== 0 || init.ordered !== true) throw new Error(`unexpected channel options ${JSON.stringify(init)}`);
      this.#channel = new FakeChannel();
      return this.#channel;
    }

    async createOffer() {
      return { type: 'offer', sdp: `v=0 ${this.#token}` };
    }

    async createAnswer() {
      if (!this.#remote) throw new Error('InvalidStateError: no remote offer');
      return { type: 'answer', sdp: `v=0 ${this.#token}` };
    }

    async setLocalDescription(d) {
      this.localDescription = { type: d.type, sdp: d.sdp };
      world.set(this.#token, this);
      setTimeout(() => {
        const candidate = `candidate:1 1 udp 1 ${this.#token} 9 typ host`;
        this.onicecandidate?.({ candidate: { candidate, sdpMid: '0', sdpMLineIndex: 0, toJSON: () => ({ candidate, sdpMid: '0', sdpMLineIndex: 0 }) } });
        this.onicecandidate?.({ candidate: null });
      }, 0);
    }

    async setRemoteDescription(d) {
      const token = /fake-\d+/.exec(d.sdp)?.[0];
      if (!token) throw new Error('malformed SDP');
      this.#remote = token;
      this.sctp = { maxMessageSize };
      this.#maybeConnect();
    }

    async addIceCandidate(c) {
      if (!this.#remote) throw new Error('InvalidStateError: no remote description');
      if (!c.candidate?.includes(this.#remote)) throw new Error('candidate of another connection');
      this.#candidate = true;
      this.#maybeConnect();
    }

    get ready() {
      return this.#remote !== undefined && this.#candidate;
    }

    #maybeConnect() {
      const peer = world.get(this.#remote);
      if (!connect || !this.ready || !peer?.ready || this.connectionState === 'connected') return;
      for (const [a, b] of [[this, peer], [peer, this]]) {
        a.connectionState = 'connected';
        a.#channel.peer = b.#channel;
      }
      setTimeout(() => {
        for (const pc of [this, peer]) {
          pc.onconnectionstatechange?.({});
          pc.#channel.open();
        }
      }, 0);
    }

    close() {
      if (this.connectionState === 'closed') return;
      this.connectionState = 'closed';
      world.delete(this.#token);
      this.#channel?.abort();
      this.#channel?.peer?.abort();
    }
  }

  return { RTCPeerConnection: FakePeerConnection, stats };
}
