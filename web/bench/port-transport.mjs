// A Transport over MessagePorts, one port per peer: what a party in a worker (Node
// worker_threads or a browser Web Worker) uses to reach the parties in the other workers.
//
// Frames from the wasm party are fresh, JS-owned buffers (one copy out of wasm memory), so
// send() transfers the ArrayBuffer instead of cloning it: no further copy on the way.

/** @param {Record<number, MessagePort>} ports the port to each peer, by party index */
export function portTransport(ports) {
  const queues = {};
  for (const [peer, port] of Object.entries(ports)) {
    const q = (queues[peer] = { frames: [], waiters: [] });
    port.on('message', (buf) => {
      const frame = new Uint8Array(buf);
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
    close() {
      for (const port of Object.values(ports)) port.close();
    },
  };
}
