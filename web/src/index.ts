/**
 * ringfence: secure 3-party computation over Z_2^64 in WebAssembly, for Node, browsers and
 * workers.
 *
 * A compute party:
 *
 * ```ts
 * import { init, Party } from 'ringfence';
 * await init();
 * const party = await Party.join({ id, sessionId, seeds, transport });
 * ```
 *
 * A compute party serving a model to a classification client (the session's fourth
 * participant):
 *
 * ```ts
 * const transport = await SecureRelayTransport.connect({ url, sessionId, id, keypair, publicKeys, parties: 4 });
 * const party = await Party.join({ id, sessionId, seeds: transport.seeds, transport, parties: 4 });
 * const result = await party.serve({ models: { 'nn-a': { model: id === 0 ? onnxBytes : shapeBytes, output: 'scores' } }, maxBatch: 1 });
 * ```
 *
 * An input provider: a private classification by three parties that serve a model (they see
 * only masked data; the client alone learns the answer):
 *
 * ```ts
 * import { init, Client } from 'ringfence';
 * await init();
 * // session (16 bytes) and the parties' public keys (32 bytes each) as bytes or hex
 * const client = await Client.connect({ relay: 'ws://127.0.0.1:9000', session, parties: [pk0, pk1, pk2], keypair });
 * const { classes, scores } = await client.classify('lenet', pixels, { backend: 'meteor' });
 * client.close();
 * ```
 * @module
 */

export { init, simdSupported } from './init.js';
export type { InitOptions, RuntimeInfo, WasmSource, WasmSources } from './init.js';
export { fromHex, toHex } from './hex.js';
export type {
  AbortSignalLike, BytesLike, CompiledWasmModule, ReadableStreamLike, ReadableStreamReaderLike, RuntimeMessagePort, UrlLike,
  WritableStreamLike, WritableStreamWriterLike,
} from './platform.js';
export { RingfenceError } from './errors.js';
export type { RingfenceErrorCode, RingfenceErrorOptions } from './errors.js';
export { InMemoryNetwork } from './transport.js';
export type { InMemoryNetworkOptions, Transport } from './transport.js';
export { MessagePortTransport, type MessagePortLike, type MessagePortTransportOptions } from './transport-port.js';
export { WebSocketTransport, type WebSocketConstructor, type WebSocketLike, type WebSocketLinkSecurity, type WebSocketTransportOptions } from './transport-ws.js';
export { SecureRelayTransport, generateNoiseKeypair, type NoiseKeypair, type SecureRelayTransportOptions } from './noise.js';
export {
  RtcTransport, type ChannelCounters, type FrameCounters, type RtcDataChannelLike, type RtcDescription, type RtcIceCandidateInit,
  type RtcIceServer, type RtcLinkKind, type RtcPeerConnectionConstructor, type RtcPeerConnectionLike, type RtcSctpTransportLike,
  type RtcSdpType, type RtcTransportOptions, type RtcTransportStats,
} from './transport-rtc.js';
export type {
  RelayTransportKind, WebTransportConstructor, WebTransportLike, WebTransportOptions, WebTransportStreamLike,
} from './transport-wt.js';
export { DaBitStore, Party, SharedBitVector, SharedVector, TruncPairStore } from './party.js';
export type { PartyOptions, PartySeeds, PartyStats, ProgressCounters, ProgressEvent, RingValues, Stage } from './party.js';
export { modelShape } from './serve.js';
export type { ServeAnswered, ServeOptions, ServeRefused, ServeResult, ServeStageFigures, ServeStages, ServedModel, ServedRequest } from './serve.js';
export { Client } from './client.js';
export type {
  Classification, ClassifyInput, ClassifyOptions, ClientOptions, ClientProgressEvent, ClientStage, ModelDescription, Prepared, PreprocessingProgress,
  PrepareOptions,
} from './client.js';
export { insecureTestSeeds, randomSessionId } from './seeds.js';
export { DEFAULT_FRAC_BITS, decodeFixed, encodeFixed } from './fixed.js';
export { BACKENDS, DEFAULT_BACKEND } from './backend.js';
export type { Backend } from './backend.js';
