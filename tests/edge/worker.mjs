// An ES module Worker (Cloudflare Workers / workerd) using the ringfence SDK, the way an edge
// deployment would: the SDK's modules and its SIMD wasm module are bundled with the script
// (workerd.mjs lists them in the workerd config; a bundler such as wrangler's esbuild does the
// same from node_modules), and the wasm arrives as a compiled `WebAssembly.Module` import,
// because Workers refuse to compile wasm from bytes at run time.
//
// Routes (POST, JSON bodies; byte strings as hex); a session lives within one request:
//   /classify      input provider: a `Client` of a deployment classifies `input` with `model`;
//                  answers `{ classes, transport, info }`
//   /serve         compute party `id` of a session: joins it through the relay (Noise links)
//                  and serves the bundled NN-A to the session's client; answers
//                  `{ outcome, request, info }`
//   /init-default  `init()` left to find the module itself (before any other request): answers
//                  the error's `{ code, message }`
// Failures answer HTTP 500 with `{ error: { name, code, message } }`.
import { Client, Party, SecureRelayTransport, init } from 'ringfence';
import simd from 'ringfence/wasm-simd.wasm';
import nnA from 'models/nn-a.onnx';

const fromHex = (h) => Uint8Array.from(h.match(/../g) ?? [], (b) => parseInt(b, 16));

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/init-default') {
      // init() left to find the module itself: a WASM_LOAD error saying to pass the module.
      const e = await init().then(() => ({ message: 'init() succeeded' }), (x) => x);
      return Response.json({ code: e.code, message: e.message });
    }
    try {
      // Not at module scope: Workers allow no I/O (and no timers) outside a request.
      const info = await init({ wasm: { simd } });
      const body = await request.json();
      if (pathname === '/classify') return Response.json({ info, ...(await classify(body)) });
      if (pathname === '/serve') return Response.json({ info, ...(await serve(body)) });
      return new Response(`no route ${pathname}`, { status: 404 });
    } catch (e) {
      return Response.json({ error: { name: e?.name, code: e?.code, message: String(e?.message ?? e) } }, { status: 500 });
    }
  },
};

/** The input provider: one classification by a deployment's parties. */
async function classify({ relay, deployment, session, token, keypair, parties, model, input, backend, timeoutMs }) {
  const client = await Client.connect({
    relay, deployment, session: fromHex(session), token, keypair, parties: parties.map(fromHex), timeoutMs,
  });
  try {
    const r = await client.classify(model, Float32Array.from(input), { backend });
    return { classes: r.classes, transport: client.transport };
  } finally {
    client.close();
  }
}

/** A compute party: joins the session as `id` of four participants and serves one request. */
async function serve({ relay, session, id, privateKey, publicKeys, timeoutMs }) {
  const keys = publicKeys.map(fromHex);
  const sessionId = fromHex(session);
  const transport = await SecureRelayTransport.connect({
    url: relay, sessionId, id, keypair: { privateKey: fromHex(privateKey), publicKey: keys[id] }, publicKeys: keys,
    parties: 4, timeoutMs,
  });
  try {
    const party = await Party.join({ id, sessionId, seeds: transport.seeds, transport, parties: 4 });
    // As P0, the model owner, it serves the ONNX file (P1 and P2 would serve its shape file);
    // the test's client asks for the scores.
    const r = await party.serve({ models: { 'nn-a': { model: new Uint8Array(nnA), output: 'scores' } } });
    party.finish();
    return { outcome: r.outcome, request: r.request, reason: r.reason };
  } finally {
    transport.close();
  }
}
