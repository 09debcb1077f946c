/**
 * A compute party of a 3-party session over Z_2^64 in any scheme the SDK knows ({@link BACKENDS}),
 * running in WebAssembly; it can also serve models to a classification client ({@link Party.serve}).
 * @module
 */

import type { Backend } from './backend.js';
import { RingfenceError, toRingfenceError } from './errors.js';
import { bindings } from './init.js';
import { Link } from './link.js';
import { COMPUTE_PARTIES } from './roster.js';
import type { AbortSignalLike } from './platform.js';
import { ServeRecorder, serveOptions, type ServeOptions, type ServeResult } from './serve.js';
import type { Transport } from './transport.js';
import type { WasmDaBitStore, WasmParty, WasmSharedBitVec, WasmSharedVec, WasmTruncPairStore } from './wasm-api.js';

/** The keys a party brings: 32 bytes each, from an authenticated key agreement. */
export interface PartySeeds {
  /** The key shared with the previous party in ring order, `id − 1` (party 2 for party 0). */
  prev: Uint8Array;
  /** The key shared with the next party in ring order, `id + 1` (party 0 for party 2). */
  next: Uint8Array;
  /** This party's private randomness. */
  own: Uint8Array;
}

/**
 * Named stages reported through {@link PartyOptions.onProgress}, in this order:
 *
 * - `connecting`: {@link Party.join} started (before anything is sent);
 * - `setup`: the parties agreed their common key (operation `'join'`), or a preprocessing
 *   operation finished (`'dabits'`, `'truncPairs'`);
 * - `online`: an operation on secret data finished (`'input'`, `'mul'`, `'lt'`, `'reveal'`, ...);
 * - `done`: {@link Party.finish} was called.
 *
 * {@link Party.serve} reports its stages as they start, with operation `'serve'`: `setup` when
 * the parties accepted the client's request, `online` when the setup is done, and `done` when
 * the client has its result.
 */
export type Stage = 'connecting' | 'setup' | 'online' | 'done';

/** Communication so far, as progress reports give it. */
export interface ProgressCounters {
  /** Frame bytes sent so far (headers included). */
  readonly bytesSent: number;
  /** Frame bytes received so far (headers included). */
  readonly bytesReceived: number;
  /** Communication rounds so far. */
  readonly rounds: number;
}

/**
 * A progress report: the stage, the operation that just finished and the counters so far.
 *
 * ```ts
 * const party = await Party.join({ ...options, onProgress: (e) =>
 *   console.log(`${e.stage} ${e.operation}: ${e.bytesSent} B out, ${e.bytesReceived} B in`) });
 * ```
 */
export interface ProgressEvent extends ProgressCounters {
  /** Where the session is (see {@link Stage}). */
  readonly stage: Stage;
  /** The operation (`'join'`, `'mul'`, `'dabits'`, ...). */
  readonly operation: string;
}

/** Communication counters of a party. */
export interface PartyStats {
  /** Frame bytes sent (headers included). */
  readonly bytesSent: number;
  /** Payload bytes sent (frame headers excluded). */
  readonly payloadBytesSent: number;
  /** Frames sent. */
  readonly framesSent: number;
  /** Communication rounds. */
  readonly rounds: number;
}

/** Options of {@link Party.join}. */
export interface PartyOptions {
  /** This party's index: 0 to `servers − 1`. */
  id: number;
  /** The session id, 16 bytes, the same at every party. */
  sessionId: Uint8Array;
  /** The correlated-randomness keys (see {@link PartySeeds}). */
  seeds: PartySeeds;
  /** The links to the two other parties (and to the clients, when `parties` counts any). */
  transport: Transport;
  /**
   * The protocol family, the same at all three parties. Every scheme has `input`, the local
   * operations, `mul`, `matmul`, their fixed-point forms and `reveal`. `'rep3'` and `'mal3'`
   * (every product checked: a party that deviates makes the others fail with `CHECK_FAILED`
   * at the next reveal) also have `random`, `lt`, `relu` and material made ahead (`dabits`,
   * `truncPairs`); on `'meteor'` those fail with `API_MISUSE`, and fixed-point products take
   * the number of fractional bits instead of a store.
   * @defaultValue `'rep3'`
   */
  scheme?: Backend;
  /**
   * Participants of the session: the compute parties, plus the clients (ids `servers`,
   * `servers + 1`, ...) when the session serves any ({@link Party.serve}; the transport must
   * reach them too, e.g. {@link SecureRelayTransport} with the same `parties`).
   * @defaultValue `servers`
   */
  parties?: number;
  /**
   * The compute parties of the session: 3, or with `scheme: 'rss'` 5 or 7 (any 2, or 3, of
   * them together learn nothing), or with `scheme: 'spdz2k'` 2 or more (all but one of them
   * may be corrupt and deviate; the parties make their material together by oblivious
   * transfer as the operations need it).
   * @defaultValue 3
   */
  servers?: number;
  /** Called after every operation with its stage and the counters. */
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Cancels the party. Once it aborts, the pending operation (even one waiting on a peer that
   * never answers) and every later call reject with a {@link RingfenceError} of code `ABORTED`
   * whose `cause` is the signal's `reason`, and the transport is closed. An already aborted
   * signal makes {@link Party.join} reject before anything is sent.
   *
   * ```ts
   * const party = await Party.join({ ...options, signal: AbortSignal.timeout(30_000) });
   * ```
   */
  signal?: AbortSignalLike;
}

/** Ring values accepted as input: two's complement (`BigInt64Array`) or unsigned. */
export type RingValues = BigInt64Array | BigUint64Array;

/** This party's shares of a vector over Z_2^64. Revealing consumes it. */
export class SharedVector {
  /** @internal */
  readonly raw: WasmSharedVec;
  /** The party holding these shares. */
  readonly holder: number;
  /** @internal */
  constructor(raw: WasmSharedVec, holder: number) {
    this.raw = raw;
    this.holder = holder;
  }
  /** Number of elements (0 once revealed or freed). */
  get length(): number {
    return this.raw.length;
  }
  /**
   * Frees the shares now; like a reveal, this consumes the vector. Optional: otherwise their
   * WebAssembly memory is freed when the garbage collector finalizes this object, which it does
   * not hurry to do (it sees a small object, not the 16 bytes per element behind it), so a loop
   * of large operations that drops its results keeps growing the module's memory.
   */
  free(): void {
    this.raw.release();
  }
}

/** This party's shares of bits (comparison results). Revealing consumes them. */
export class SharedBitVector {
  /** @internal */
  readonly raw: WasmSharedBitVec;
  /** @internal */
  constructor(raw: WasmSharedBitVec) {
    this.raw = raw;
  }
  /** Number of bits (0 once revealed or freed). */
  get length(): number {
    return this.raw.length;
  }
  /** Frees the shared bits now (see {@link SharedVector.free}); consumes them. */
  free(): void {
    this.raw.release();
  }
}

/** The material of ReLUs (daBits) made in the setup phase; `relu` takes what it needs, nothing is used twice. */
export class DaBitStore {
  /** @internal */
  readonly raw: WasmDaBitStore;
  /** @internal */
  constructor(raw: WasmDaBitStore) {
    this.raw = raw;
  }
  /** daBits left. */
  get length(): number {
    return this.raw.length;
  }
}

/**
 * The material of fixed-point products with `fracBits` fractional bits, made in the setup phase
 * (truncation pairs; in `'mal3'` also the checked triples).
 */
export class TruncPairStore {
  /** @internal */
  readonly raw: WasmTruncPairStore;
  /** @internal */
  constructor(raw: WasmTruncPairStore) {
    this.raw = raw;
  }
  /** Pairs left. */
  get length(): number {
    return this.raw.length;
  }
  /** The shift these pairs truncate by. */
  get fracBits(): number {
    return this.raw.fracBits;
  }
}

function check(cond: boolean, code: 'INVALID_ARGUMENT', message: string): asserts cond {
  if (!cond) throw new RingfenceError(code, message);
}

/**
 * A compute party. All three parties of a session call the same operations in the same order,
 * each awaiting the previous one; every operation is batched (one message per peer per round,
 * whatever the length). Arguments are checked before anything is sent. Round counts below are
 * rep3's; `'mal3'` adds its checks, `'meteor'` moves work to setup.
 *
 * ```ts
 * await init();
 * const p = await Party.join({ id, sessionId, seeds, transport, scheme: 'mal3' });
 * const x = await p.input(0, id === 0 ? new BigInt64Array([3n, 4n]) : null, 2);
 * const y = await p.mul(x, x);
 * console.log(await p.reveal(y)); // BigInt64Array [9n, 16n]
 * ```
 */
export class Party {
  readonly #raw: WasmParty;
  /** The session's compute parties (its first client follows them). */
  readonly #servers: number;
  readonly #link: Link;
  readonly #onProgress: PartyOptions['onProgress'];

  private constructor(raw: WasmParty, link: Link, onProgress: PartyOptions['onProgress'], servers: number) {
    this.#raw = raw;
    this.#servers = servers;
    this.#link = link;
    this.#onProgress = onProgress;
  }

  /**
   * Joins a session (1 round: the three parties agree a common key).
   *
   * ```ts
   * const party = await Party.join({ id, sessionId, seeds, transport, signal, onProgress });
   * ```
   */
  static async join(options: PartyOptions): Promise<Party> {
    const glue = bindings();
    check(typeof options === 'object' && options !== null, 'INVALID_ARGUMENT', 'Party.join() needs an options object');
    const t = options.transport;
    check(
      typeof t === 'object' && t !== null && typeof t.send === 'function' && typeof t.recv === 'function',
      'INVALID_ARGUMENT',
      'options.transport must have send(to, frame) and recv(from) methods',
    );
    const signal = options.signal;
    check(
      signal === undefined || (typeof signal === 'object' && signal !== null && typeof signal.aborted === 'boolean'),
      'INVALID_ARGUMENT',
      'options.signal must be an AbortSignal',
    );
    const link = new Link(t, signal);
    const early = link.abortError();
    if (early) throw early;
    options.onProgress?.({ stage: 'connecting', operation: 'join', bytesSent: 0, bytesReceived: 0, rounds: 0 });
    let raw: WasmParty;
    try {
      raw = await link.race(
        glue.Party.join(options.id, options.sessionId, options.seeds, link.transport, options.parties, options.scheme, options.servers),
      );
    } catch (e) {
      // No party will use this link: a later abort must not close the caller's transport.
      link.detach();
      throw toRingfenceError(e);
    }
    const party = new Party(raw, link, options.onProgress, options.servers ?? COMPUTE_PARTIES);
    party.#report('setup', 'join');
    return party;
  }

  /** This party's index. */
  get id(): number {
    return this.#raw.id;
  }

  /** The protocol family this party runs. */
  get scheme(): Backend {
    return this.#raw.scheme as Backend;
  }

  /** Communication counters as of the last finished operation. */
  stats(): PartyStats {
    return this.#raw.stats();
  }

  /** A fresh random sharing of `n` elements (local; `'rep3'` and `'mal3'`). */
  random(n: number): SharedVector {
    return this.#sync(() => this.#vec(this.#raw.random(n)));
  }

  /**
   * Secret-shares `n` values owned by party `owner`, who passes them; the others pass `null`
   * (1 round).
   */
  input(owner: number, values: RingValues | null, n: number): Promise<SharedVector> {
    return this.#op('online', 'input', () => this.#raw.input(owner, values, n), (v) => this.#vec(v));
  }

  /** `x + y` (local). */
  add(x: SharedVector, y: SharedVector): SharedVector {
    return this.#sync(() => this.#vec(this.#raw.add(raw(x), raw(y))));
  }

  /** `x − y` (local). */
  sub(x: SharedVector, y: SharedVector): SharedVector {
    return this.#sync(() => this.#vec(this.#raw.sub(raw(x), raw(y))));
  }

  /** `−x` (local). */
  neg(x: SharedVector): SharedVector {
    return this.#sync(() => this.#vec(this.#raw.neg(raw(x))));
  }

  /** Elementwise `x·y` mod 2^64 (1 round). */
  mul(x: SharedVector, y: SharedVector): Promise<SharedVector> {
    return this.#op('online', 'mul', () => this.#raw.mul(raw(x), raw(y), undefined), (v) => this.#vec(v));
  }

  /** Matrix product of `a` (m×k) and `b` (k×n), row-major (1 round). */
  matmul(a: SharedVector, b: SharedVector, m: number, k: number, n: number): Promise<SharedVector> {
    return this.#op('online', 'matmul', () => this.#raw.matmul(raw(a), raw(b), m, k, n, undefined), (v) => this.#vec(v));
  }

  /** `[x < y]` as signed 64-bit integers, exact on the whole ring (9 rounds). */
  lt(x: SharedVector, y: SharedVector): Promise<SharedBitVector> {
    return this.#op('online', 'lt', () => this.#raw.lt(raw(x), raw(y)), (b) => new SharedBitVector(b));
  }

  /** Makes the material of `n` later `relu`s (setup phase, 2 rounds). */
  dabits(n: number): Promise<DaBitStore> {
    return this.#op('setup', 'dabits', () => this.#raw.dabits(n), (s) => new DaBitStore(s));
  }

  /**
   * `max(x, 0)` as signed integers (9 rounds), taking `x.length` daBits from `store`, or making
   * them first when no store is given.
   */
  async relu(x: SharedVector, store?: DaBitStore): Promise<SharedVector> {
    const from = store === undefined ? await this.dabits(raw(x).length) : store;
    return this.#op('online', 'relu', () => this.#raw.relu(raw(x), of(from, DaBitStore).raw), (v) => this.#vec(v));
  }

  /** Makes `n` truncation pairs for fixed point with `fracBits` fractional bits (setup phase). */
  truncPairs(n: number, fracBits: number): Promise<TruncPairStore> {
    return this.#op('setup', 'truncPairs', () => this.#raw.truncPairs(n, fracBits), (s) => new TruncPairStore(s));
  }

  /**
   * Fixed-point `x·y` (1 round), truncated by `pairs.fracBits` using `x.length` pairs, or by
   * `pairs` bits with material made now when it is a number. The result is `⌊x·y / 2^f⌋` or
   * one less in the last place.
   */
  mulFixed(x: SharedVector, y: SharedVector, pairs: TruncPairStore | number): Promise<SharedVector> {
    return this.#op(
      'online',
      'mulFixed',
      () =>
        typeof pairs === 'number'
          ? this.#raw.mul(raw(x), raw(y), fracBits(pairs))
          : this.#raw.mulFixed(raw(x), raw(y), of(pairs, TruncPairStore).raw),
      (v) => this.#vec(v),
    );
  }

  /** Fixed-point matrix product (m×k by k×n), using `m·n` pairs or as {@link Party.mulFixed} (1 round). */
  matmulFixed(
    a: SharedVector,
    b: SharedVector,
    m: number,
    k: number,
    n: number,
    pairs: TruncPairStore | number,
  ): Promise<SharedVector> {
    return this.#op(
      'online',
      'matmulFixed',
      () =>
        typeof pairs === 'number'
          ? this.#raw.matmul(raw(a), raw(b), m, k, n, fracBits(pairs))
          : this.#raw.matmulFixed(raw(a), raw(b), m, k, n, of(pairs, TruncPairStore).raw),
      (v) => this.#vec(v),
    );
  }

  /** Opens `x` to all three parties (1 round); consumes `x`. */
  reveal(x: SharedVector): Promise<BigInt64Array> {
    return this.#op('online', 'reveal', () => this.#raw.reveal(raw(x)), (v) => v);
  }

  /** Opens shared bits to all three parties (1 round); consumes them. Resolves with 0/1 bytes. */
  revealBits(b: SharedBitVector): Promise<Uint8Array> {
    return this.#op('online', 'revealBits', () => this.#raw.revealBits(of(b, SharedBitVector).raw), (v) => v);
  }

  /**
   * Serves one private classification to the session's client (see {@link Client}): waits for
   * its request, checks with the two other parties that they received the same one, then
   * accepts it (the model is served and the batch within `maxBatch`) or refuses it with a
   * reason the client receives too. An accepted request runs its setup (P0 shares the weights;
   * masks and preprocessing) and its online phase, and ends with one word each way between the
   * three parties, as native parties do, so SDK and native parties can serve together. The
   * party must have joined with `parties: 4` (or more), over a transport that reaches the client.
   *
   * ```ts
   * // P0, the model owner, serves the ONNX file; P1 and P2 its shape file (no weights).
   * const file = new Uint8Array(await (await fetch(id === 0 ? '/models/nn-a.onnx' : '/models/nn-a.rfshape')).arrayBuffer());
   * const r = await party.serve({ models: { 'nn-a': { model: file, output: 'scores' } }, maxBatch: 1 });
   * if (r.outcome === 'refused') console.log('refused:', r.reason);
   * else console.log(r.request.model, r.stages.online.ms, r.stages.online.bytesSent);
   * ```
   *
   * Every model is loaded before anything is sent: a malformed file rejects with
   * `INVALID_MODEL` and the importer's reason, weights given to P1 or P2 (without `public`)
   * with `INVALID_ARGUMENT`, and the party stays fresh. A failure during the
   * protocol (a peer or the client gone, a timeout) rejects, and the party is lost with it:
   * every later call fails with the same error.
   */
  async serve(options: ServeOptions): Promise<ServeResult> {
    const o = serveOptions(options, this.#servers);
    const recorder = new ServeRecorder(this.#counters(), (stage, c) => this.#emit(stage, 'serve', c));
    const outcome = await this.#op(null, 'serve', () =>
      this.#raw.serve(o.models, o.maxBatch, o.client, o.comparisons, (stage, s) =>
        recorder.mark(stage, { bytesSent: s.bytesSent, bytesReceived: this.#link.bytesReceived, rounds: s.rounds }),
      ), (r) => r);
    return recorder.result(outcome, this.#counters());
  }

  /**
   * Reports the stage `done` (the session's work is over) and stops listening to the abort
   * signal; the caller closes the transport.
   */
  finish(): void {
    this.#link.detach();
    this.#report('done', 'finish');
  }

  #vec(v: WasmSharedVec): SharedVector {
    return new SharedVector(v, this.#raw.id);
  }

  #sync<T>(f: () => T): T {
    const aborted = this.#link.abortError();
    if (aborted) throw aborted;
    try {
      return f();
    } catch (e) {
      throw toRingfenceError(e);
    }
  }

  /** Runs one wasm operation, cancellable; reports `stage` after it unless `null`. */
  async #op<R, T>(stage: Stage | null, operation: string, start: () => Promise<R>, wrap: (r: R) => T): Promise<T> {
    const aborted = this.#link.abortError();
    if (aborted) throw aborted;
    let out: T;
    try {
      // `start()` throws synchronously on bad arguments: before anything is sent.
      out = wrap(await this.#link.race(start()));
    } catch (e) {
      throw toRingfenceError(e);
    }
    if (stage) this.#report(stage, operation);
    return out;
  }

  /** The counters as of the last finished operation. */
  #counters(): ProgressCounters {
    const s = this.#raw.stats();
    return { bytesSent: s.bytesSent, bytesReceived: this.#link.bytesReceived, rounds: s.rounds };
  }

  #report(stage: Stage, operation: string): void {
    if (this.#onProgress) this.#emit(stage, operation, this.#counters());
  }

  #emit(stage: Stage, operation: string, counters: ProgressCounters): void {
    this.#onProgress?.({ stage, operation, ...counters });
  }
}

/** A truncation given as a number: at least 1 (0 would be the exact product, `mul`). */
function fracBits(f: number): number {
  check(Number.isInteger(f) && f >= 1 && f <= 62, 'INVALID_ARGUMENT', `fracBits must be an integer in 1..=62, got ${f}`);
  return f;
}

function raw(x: SharedVector): WasmSharedVec {
  return of(x, SharedVector).raw;
}

function of<T>(x: unknown, cls: abstract new (...args: never[]) => T): T {
  if (!(x instanceof cls)) {
    throw new RingfenceError('INVALID_ARGUMENT', `expected a ${cls.name}, got ${x === null ? 'null' : typeof x}`);
  }
  return x;
}
