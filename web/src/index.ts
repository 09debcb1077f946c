/**
 * ringfence: secure 3-party computation over Z_2^64 in WebAssembly, for Node, browsers and
 * workers.
 *
 * ```ts
 * import { init, Party } from 'ringfence';
 * await init();
 * const party = await Party.join({ id, sessionId, seeds, transport });
 * ```
 * @module
 */

export { init, simdSupported } from './init.js';
export type { InitOptions, RuntimeInfo, WasmSources } from './init.js';
export { RingfenceError } from './errors.js';
export type { RingfenceErrorCode, RingfenceErrorOptions } from './errors.js';
export { InMemoryNetwork } from './transport.js';
export type { InMemoryNetworkOptions, Transport } from './transport.js';
export { MessagePortTransport, type MessagePortLike, type MessagePortTransportOptions } from './transport-port.js';
export { WebSocketTransport, type WebSocketConstructor, type WebSocketLike, type WebSocketLinkSecurity, type WebSocketTransportOptions } from './transport-ws.js';
export { SecureRelayTransport, generateNoiseKeypair, type NoiseKeypair, type SecureRelayTransportOptions } from './noise.js';
export { DaBitStore, Party, SharedBitVector, SharedVector, TruncPairStore } from './party.js';
export type { PartyOptions, PartySeeds, PartyStats, ProgressEvent, RingValues, Stage } from './party.js';
export { insecureTestSeeds, randomSessionId } from './seeds.js';
export { DEFAULT_FRAC_BITS, decodeFixed, encodeFixed } from './fixed.js';
