/**
 * The shape of the wasm-bindgen glue (`dist/wasm-{simd,nosimd}/ringfence_wasm.js`, generated
 * from `wasm/src/bindings/`). Written by hand so the TypeScript build does not depend on the
 * wasm build; keep it in step with the Rust bindings.
 * @internal
 * @module
 */

import type { Backend } from './backend.js';
import type { Transport } from './transport.js';
import type { ServedModel } from './serve.js';

/** @internal */
export interface WasmFreeable {
  free(): void;
}

/** @internal */
export interface WasmSharedVec extends WasmFreeable {
  readonly length: number;
  readonly consumed: boolean;
  release(): void;
}

/** @internal */
export interface WasmSharedBitVec extends WasmFreeable {
  readonly length: number;
  release(): void;
}

/** @internal */
export interface WasmDaBitStore extends WasmFreeable {
  readonly length: number;
}

/** @internal */
export interface WasmTruncPairStore extends WasmFreeable {
  readonly length: number;
  readonly fracBits: number;
}

/** @internal */
export interface WasmStats {
  bytesSent: number;
  payloadBytesSent: number;
  framesSent: number;
  rounds: number;
}

/** @internal */
export interface WasmParty extends WasmFreeable {
  readonly id: number;
  readonly scheme: string;
  stats(): WasmStats;
  random(n: number): WasmSharedVec;
  input(owner: number, values: BigInt64Array | BigUint64Array | null, n: number): Promise<WasmSharedVec>;
  add(x: WasmSharedVec, y: WasmSharedVec): WasmSharedVec;
  sub(x: WasmSharedVec, y: WasmSharedVec): WasmSharedVec;
  neg(x: WasmSharedVec): WasmSharedVec;
  mul(x: WasmSharedVec, y: WasmSharedVec, fracBits: number | undefined): Promise<WasmSharedVec>;
  matmul(a: WasmSharedVec, b: WasmSharedVec, m: number, k: number, n: number, fracBits: number | undefined): Promise<WasmSharedVec>;
  lt(x: WasmSharedVec, y: WasmSharedVec): Promise<WasmSharedBitVec>;
  dabits(n: number): Promise<WasmDaBitStore>;
  relu(x: WasmSharedVec, store: WasmDaBitStore): Promise<WasmSharedVec>;
  truncPairs(n: number, fracBits: number): Promise<WasmTruncPairStore>;
  mulFixed(x: WasmSharedVec, y: WasmSharedVec, pairs: WasmTruncPairStore): Promise<WasmSharedVec>;
  matmulFixed(
    a: WasmSharedVec,
    b: WasmSharedVec,
    m: number,
    k: number,
    n: number,
    pairs: WasmTruncPairStore,
  ): Promise<WasmSharedVec>;
  reveal(x: WasmSharedVec): Promise<BigInt64Array>;
  revealBits(b: WasmSharedBitVec): Promise<Uint8Array>;
  serve(
    models: Record<string, Uint8Array | ServedModel>,
    maxBatch: number,
    client: number,
    comparisons: string | undefined,
    onStage: ((stage: WasmServeStage, stats: WasmStats) => void) | undefined,
  ): Promise<WasmServeOutcome>;
}

/** The points `Party.serve` reports, as the core names them. @internal */
export type WasmServeStage = 'accepted' | 'setup-done' | 'online-done';

/** @internal */
export type WasmServeOutcome =
  | { outcome: 'answered'; request: { model: string; backend: Backend; output: 'scores' | 'class'; batch: number } }
  | { outcome: 'refused'; reason: string };

/** @internal */
export interface WasmSeeds {
  prev: Uint8Array;
  next: Uint8Array;
  own: Uint8Array;
}

/** @internal */
export interface WasmModelInfo {
  inputLen: number;
  outputLen: number;
  fracBits: number;
  batch: number;
  inputRange: [number, number] | undefined;
  classLabels: (number | bigint | string)[] | undefined;
}

/** @internal */
export interface WasmClassification {
  classes: Uint32Array;
  labels: (number | bigint | string)[];
  scores: Float64Array | undefined;
  sent: [BigUint64Array, BigUint64Array, BigUint64Array];
}

/** @internal */
export interface WasmClient extends WasmFreeable {
  stats(): WasmStats;
  progress(): { making: string; done: number; total: number; madeBefore: number };
  request(model: string, backend: string, output: string, batch: number): Promise<WasmModelInfo>;
  setup(): Promise<void>;
  run(input: Float64Array): Promise<WasmClassification>;
}

/** @internal */
export interface WasmModule {
  default(init: { module_or_path: BufferSource | WebAssembly.Module }): Promise<unknown>;
  Party: {
    join(
      me: number,
      session: Uint8Array,
      seeds: WasmSeeds,
      transport: Transport,
      participants: number | undefined,
      scheme: string | undefined,
      servers: number | undefined,
    ): Promise<WasmParty>;
  };
  Client: new (session: Uint8Array, own: Uint8Array, transport: Transport, servers?: number) => WasmClient;
  encodeFixed(values: unknown, fracBits: number): BigInt64Array;
  modelShape(onnx: Uint8Array): Uint8Array;
  decodeFixed(values: unknown, fracBits: number): Float64Array;
  defaultFracBits(): number;
  backends(): string[];
  builtWithSimd(): boolean;
}
