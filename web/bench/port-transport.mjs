// A Transport over MessagePorts, one port per peer: what a party in a worker (Node
// worker_threads or a browser Web Worker) uses to reach the parties in the other workers.
//
// Frames move without a copy, and their buffers are recycled: send() transfers the frame's
// ArrayBuffer to the peer; once the wasm party has copied a received frame into its memory it
// calls releaseFrame(), which transfers the buffer back to its sender; the sender keeps it in a
// small pool, and allocFrame() hands it out again for a later frame of the same length. In a
// steady run of one operation no frame buffer is allocated (nor zeroed, nor collected).

/** Buffers kept per length: one per frame in flight to each peer is enough for `rep3`. */
const POOL_MAX = 4;

/** @param {Record<number, MessagePort>} ports the port to each peer, by party index */
export function portTransport(ports) {
  const queues = {};
  const pool = new Map(); // byteLength -> ArrayBuffer[]
  for (const [peer, port] of Object.entries(ports)) {
    const q = (queues[peer] = { frames: [], waiters: [] });
    port.on('message', (msg) => {
      if (!(msg instanceof ArrayBuffer)) {
        // { back: ArrayBuffer }: a buffer of ours, returned after the peer read the frame.
        const free = pool.get(msg.back.byteLength) ?? [];
        if (free.length < POOL_MAX) free.push(msg.back);
        pool.set(msg.back.byteLength, free);
        return;
      }
      const frame = new Uint8Array(msg);
      const w = q.waiters.shift();
      if (w) w(frame);
      else q.frames.push(frame);
    });
  }
  return {
    send(to, frame) {
      const whole = frame.byteOffset === 0 && frame.byteLength === frame.buffer.byteLength;
      const buf = whole ? frame.buffer : frame.slice().buffer;
      ports[to].postMessage(buf, [buf]);
    },
    recv(from) {
      const q = queues[from];
      const f = q.frames.shift();
      return f ? Promise.resolve(f) : new Promise((resolve) => q.waiters.push(resolve));
    },
    allocFrame(_to, length) {
      const buf = pool.get(length)?.pop();
      return buf ? new Uint8Array(buf) : new Uint8Array(length);
    },
    releaseFrame(from, frame) {
      const whole = frame.byteOffset === 0 && frame.byteLength === frame.buffer.byteLength;
      if (whole) ports[from].postMessage({ back: frame.buffer }, [frame.buffer]);
    },
    close() {
      for (const port of Object.values(ports)) port.close();
    },
  };
}
