/**
 * The input provider of a private classification: a {@link Client} asks three compute parties
 * to run one of the models they serve on its input; the parties see only masked or
 * secret-shared data, and the client alone learns the result.
 * @module
 */

import { defaultBackend, type Backend } from './backend.js';
import { RingfenceError, toRingfenceError } from './errors.js';
import { bytesOf, toHex } from './hex.js';
import { bindings } from './init.js';
import { Link, abortError, untilAborted } from './link.js';
import { NoiseRelayLinks, generateNoiseKeypair, type NoiseKeypair } from './noise.js';
import type { ProgressCounters } from './party.js';
import type { AbortSignalLike } from './platform.js';
import { DEPLOYMENT_SIZES } from './roster.js';
import type { WebSocketConstructor } from './transport-ws.js';
import {
  checkWebTransportOptions, type RelayTransportKind, type WebTransportConstructor, type WebTransportOptions,
} from './transport-wt.js';
import type { WasmClient, WasmModelInfo } from './wasm-api.js';


/**
 * Named stages reported through {@link ClientOptions.onProgress}, in this order:
 *
 * - `connecting`: {@link Client.connect} started (before anything is sent);
 * - `request`: a classification starts: the request goes to the parties;
 * - `setup`: the parties accepted it and run the setup (weights, masks, preprocessing);
 * - `preprocessing` (spdz2k, where the client makes the run's material with the server): during
 *   the setup, every half second while it advances, with {@link ClientProgressEvent.preprocessing}
 *   saying what is being made and how much of it is done (a large network's setup takes minutes);
 * - `prepared`: the setup of a run started by {@link Client.prepare} finished; the parties wait
 *   for its input;
 * - `online`: the input goes out and the result comes back;
 * - `done`: the classification finished.
 *
 * Each stage of a classification is reported when it starts (`preprocessing` repeatedly), so a
 * UI can show it while it runs.
 */
export type ClientStage = 'connecting' | 'request' | 'setup' | 'preprocessing' | 'prepared' | 'online' | 'done';

/**
 * How far a computing client's preprocessing has come: `done` of `total` items of what it is
 * making now. The setup makes several kinds one after the other (e.g. multiplication triples, then
 * random bits, then edaBits), each from zero.
 *
 * ```ts
 * const client = await Client.connect({ ...options, onProgress: (e) => {
 *   if (e.preprocessing) bar.show(e.preprocessing.making, e.preprocessing.done / e.preprocessing.total);
 * } });
 * ```
 */
export interface PreprocessingProgress {
  /** What is being made, e.g. `'multiplication triples'`, `'edaBits'`, `'bit triples'`. */
  readonly making: string;
  /** Items of it made so far. */
  readonly done: number;
  /** Items of it asked for. */
  readonly total: number;
  /** Items of the kinds made before it in this session. */
  readonly madeBefore: number;
}

/** A progress report of a {@link Client}: the stage that starts and the counters so far. */
export interface ClientProgressEvent extends ProgressCounters {
  /** The stage that starts (see {@link ClientStage}). */
  readonly stage: ClientStage;
  /** Which of the relay's front ends the client reached (every stage after `connecting`). */
  readonly transport?: RelayTransportKind;
  /** With stage `preprocessing`: what is being made and how much of it. */
  readonly preprocessing?: PreprocessingProgress;
}

/** How often a running preprocessing is reported (when it advanced). */
const PREPROCESSING_REPORT_MS = 500;

/** Options of {@link Client.connect}. */
export interface ClientOptions {
  /** The relay's base URL, e.g. `ws://127.0.0.1:9000`. */
  relay: string;
  /**
   * The relay's WebTransport front end (`ringfence relay --webtransport` prints its URL and
   * certificate hash). When given and the runtime has WebTransport (browsers; Node has none),
   * the client connects over WebTransport and falls back to the WebSocket at `relay` if that
   * fails; {@link Client.transport} says which it used.
   */
  webTransport?: WebTransportOptions;
  /** The session id, 16 bytes or their 32 hex digits, the same as the parties'. */
  session: Uint8Array | string;
  /**
   * The compute parties' public keys (32 bytes each, or 64 hex digits), in order P0, P1, …:
   * the links authenticate the parties against them. Three for a deployment serving rep3,
   * METEOR and mal3; five or seven for one serving rss; one or two for one serving spdz2k.
   */
  parties: readonly (Uint8Array | string)[];
  /**
   * The deployment whose long-running server parties (`ringfence party`) serve this client:
   * the relay invites them into the session and hands them this client's public key. Without
   * it, the parties must already be in the session and know the client's key (see `keypair`).
   */
  deployment?: string;
  /**
   * The join token for this session as the participant after the servers (3, or 5 or 7): the
   * deployment's backend issues it (`ringfence token issue --party 3 --session HEX --client-key
   * HEX`). A client inviting a
   * `deployment` needs one bound to its public key (an `rf2.` token): the server parties check
   * the token themselves and refuse a key the relay hands them that is not the token's. So make
   * the `keypair` first ({@link generateNoiseKeypair}), send its public key to the backend, and
   * pass the same `keypair` here with the token it returns.
   */
  token?: string;
  /**
   * This client's keypair (each key 32 bytes or 64 hex digits). The parties authenticate the
   * client by its public key (Noise KK). When absent, a fresh keypair is generated; unless a
   * `deployment` is invited, its public key is handed to {@link ClientOptions.onPublicKey} first.
   * Required with a token bound to a client key (`rf2.`): the key it was issued for.
   */
  keypair?:
    | NoiseKeypair
    | {
        /** The 32-byte x25519 private key, or its 64 hex digits: keep it secret. */
        privateKey: Uint8Array | string;
        /** The 32-byte x25519 public key, or its 64 hex digits. */
        publicKey: Uint8Array | string;
      };
  /**
   * Called with a generated keypair's public key before connecting (required without
   * `keypair` or `deployment`): give it to the parties (e.g. through the deployment's session
   * service), and resolve once they have it.
   */
  onPublicKey?: (publicKey: Uint8Array) => void | Promise<void>;
  /**
   * How long to wait for the relay connection, and for each message from a party.
   * @defaultValue 30000
   */
  timeoutMs?: number;
  /**
   * Cancels the client. Once it aborts, the pending step (even one waiting on a party that
   * never answers) and every later call reject with a {@link RingfenceError} of code `ABORTED`
   * whose `cause` is the signal's `reason`, and the links are closed. An already aborted
   * signal makes {@link Client.connect} reject before anything is sent.
   */
  signal?: AbortSignalLike;
  /** Called when each stage starts, with the counters so far (see {@link ClientStage}). */
  onProgress?: (event: ClientProgressEvent) => void;
  /**
   * The WebSocket implementation.
   * @defaultValue `globalThis.WebSocket`, else the `ws` package (Node)
   */
  WebSocket?: WebSocketConstructor;
  /**
   * The WebTransport implementation.
   * @defaultValue `globalThis.WebTransport`
   */
  WebTransport?: WebTransportConstructor;
}

/** Options of {@link Client.classify}. */
export interface ClassifyOptions {
  /**
   * The protocol family (see {@link Backend}).
   * @defaultValue 'meteor' among three servers, 'rss' among five or seven, 'spdz2k' with one or two
   */
  backend?: Backend;
  /**
   * What the client learns: every class's score, or only the class (`'class'`: rep3, mal3 and
   * rss).
   * @defaultValue 'scores'
   */
  output?: 'scores' | 'class';
  /**
   * Samples in the input (the input holds `batch × inputLen` values, sample after sample).
   * @defaultValue 1
   */
  batch?: number;
  /**
   * The range `[min, max]` of input values the model was trained on (e.g. `[0, 1]` for the
   * shipped MNIST models, whose pixels are divided by 255): input outside it is refused with
   * `OUT_OF_RANGE` before anything is sent, instead of being classified into nonsense. Needed
   * only for models whose file does not say: the parties describe the range of a model whose
   * ONNX `metadata_props` has `ringfence.input_range` (`"MIN,MAX"`), as the shipped ones do,
   * and the input is checked against it once they did (before the setup).
   * @defaultValue the range the parties describe, if any
   */
  inputRange?: readonly [min: number, max: number];
}

/**
 * Options of {@link Client.prepare}: those of the classification it prepares. The
 * {@link Client.classify} that uses it passes the same model, backend, output and batch.
 */
export type PrepareOptions = Omit<ClassifyOptions, 'inputRange'>;

/** A classification whose request and setup ran ahead of its input ({@link Client.prepare}). */
export interface Prepared {
  /** What the parties told the client about the model. */
  readonly model: ModelDescription;
  /** The request's and the setup's communication. */
  readonly stats: ProgressCounters;
  /** Wall time of the request and of the setup, in milliseconds. */
  readonly timings: {
    /** Request sent until the parties accepted it. */
    readonly request: number;
    /** The setup (weights, masks, preprocessing). */
    readonly setup: number;
  };
}

/** What the parties told the client about the model. */
export interface ModelDescription {
  /** Values per input sample. */
  readonly inputLen: number;
  /** Scores per sample (classes). */
  readonly outputLen: number;
  /** Fractional bits of the fixed-point encoding (what `sent` is encoded with). */
  readonly fracBits: number;
  /**
   * The input range the input was checked against: {@link ClassifyOptions.inputRange}, else
   * the one the parties described (from the model file), if any.
   */
  readonly inputRange?: readonly [min: number, max: number];
  /**
   * The model's label of each class, in score order, when its file names them (ONNX-ML's
   * `classlabels_*`: scikit-learn's `classes_`), as the model owner's server tells them. A
   * label is a `string` for a model fitted on names, else a `number`, or a `bigint` where a
   * number could not hold it exactly (beyond ±2^53).
   */
  readonly classLabels?: readonly (number | bigint | string)[];
}

/** The result of {@link Client.classify}. */
export interface Classification {
  /** The class of each sample (the index of its largest score). */
  readonly classes: number[];
  /**
   * The label of each sample's class: the model's own ({@link ModelDescription.classLabels},
   * e.g. scikit-learn's `classes_[classes[i]]`), or the index itself when the model names
   * none. What to show a user.
   */
  readonly labels: (number | bigint | string)[];
  /** `batch × outputLen` scores (absent when only the class was asked for). */
  readonly scores?: Float64Array;
  /**
   * What each party received of the input, as raw 64-bit ring words (METEOR: the masked input,
   * the same for all three; rep3: party `i`'s additive component). Random to anyone but this
   * client: for display (e.g. to show what the servers saw).
   */
  readonly sent: [BigUint64Array, BigUint64Array, BigUint64Array];
  /** The model's sizes and encoding. */
  readonly model: ModelDescription;
  /** This classification's communication (not the connection's). */
  readonly stats: ProgressCounters;
  /** Wall time of each stage, in milliseconds. */
  readonly timings: {
    /** Request sent until the parties accepted it. */
    readonly request: number;
    /** The setup (weights, masks, preprocessing). */
    readonly setup: number;
    /** Input sent until the result was reconstructed. */
    readonly online: number;
    /**
     * How long the classification waited for a preparation ({@link Client.prepare}) still
     * running when it was called; 0 when the preparation had finished, or there was none.
     */
    readonly waited: number;
  };
}

/**
 * Input values accepted by {@link Client.classify}: numbers, or any typed array of numbers (a
 * canvas's `ImageData.data` is a `Uint8ClampedArray`: scale it to the model's range first).
 */
export type ClassifyInput =
  | readonly number[]
  | Float32Array
  | Float64Array
  | Uint8Array
  | Uint8ClampedArray
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array;

/**
 * The input provider of a private classification: connects to the deployment's compute parties
 * (three, or five or seven for rss) through the relay (Noise links, end to end), then asks them
 * to classify inputs with the models they serve. Each party sees only masked (METEOR) or
 * secret-shared (rep3, mal3, rss) values; the answer is reconstructed here.
 *
 * ```ts
 * await init();
 * const client = await Client.connect({ relay: 'ws://127.0.0.1:9000', session, parties, keypair });
 * const { classes, scores } = await client.classify('lenet', pixels, { backend: 'meteor' });
 * client.close();
 * ```
 *
 * Input is checked before anything is sent: wrong types fail with `INVALID_ARGUMENT`,
 * non-finite values and values outside {@link ClassifyOptions.inputRange} with `OUT_OF_RANGE`;
 * the length (`LENGTH_MISMATCH`) and range are checked
 * against the model as soon as the parties described it, before the setup. A classification
 * that fails after its request went out ends the session (the parties are left mid-protocol):
 * the client closes and every later call fails with the same error.
 */
export class Client {
  /** This client's public key (the parties know it). */
  readonly publicKey: Uint8Array;
  /** Which of the relay's front ends the client reached: `'webtransport'` or `'websocket'`. */
  readonly transport: RelayTransportKind;
  /**
   * Why the client is not on WebTransport although `webTransport` was given (no WebTransport in
   * this runtime, or it could not connect: the message says why); `undefined` otherwise.
   */
  readonly webTransportError: string | undefined;
  readonly #raw: WasmClient;
  readonly #link: Link;
  readonly #onProgress: ClientOptions['onProgress'];
  /** How many server parties the deployment has. */
  readonly #servers: number;
  #running = false;
  /** The run {@link Client.prepare} started, until a classification takes it. */
  #prepared: PendingRun | undefined;
  #closed = false;
  /** The error that ended the session, returned by every later call. */
  #failed: RingfenceError | undefined;

  private constructor(raw: WasmClient, link: Link, links: NoiseRelayLinks, publicKey: Uint8Array, onProgress: ClientOptions['onProgress'], servers: number) {
    this.#raw = raw;
    this.#servers = servers;
    this.#link = link;
    this.publicKey = publicKey;
    this.transport = links.relay.kind;
    this.webTransportError = links.relay.webTransportError;
    this.#onProgress = onProgress;
  }

  /**
   * Connects to the parties (as many as `parties` lists) through the relay and authenticates
   * the links (the parties must have joined the same session with this client's public key).
   */
  static async connect(options: ClientOptions): Promise<Client> {
    const glue = bindings();
    const o = checkClientOptions(options);
    const early = abortError(o.signal);
    if (early) throw early;
    let keypair = o.keypair;
    if (!keypair) {
      keypair = generateNoiseKeypair();
      if (o.deployment === undefined) {
        await untilAborted(Promise.resolve(o.onPublicKey?.(keypair.publicKey)), o.signal, () => {});
      }
    }
    o.onProgress?.({ stage: 'connecting', bytesSent: 0, bytesReceived: 0, rounds: 0 });
    const timeoutMs = o.timeoutMs ?? 30_000;
    const opening = NoiseRelayLinks.open({
      url: o.relay,
      sessionId: o.session,
      // The client is the participant after the servers.
      id: o.parties.length,
      parties: o.parties.length + 1,
      keypair,
      publicKeys: [...o.parties, keypair.publicKey],
      timeoutMs,
      connectTimeoutMs: timeoutMs,
      WebSocket: o.WebSocket,
      webTransport: o.webTransport,
      WebTransport: o.WebTransport,
      ...(o.token !== undefined ? { token: o.token } : {}),
      ...(o.deployment !== undefined ? { invite: { deployment: o.deployment, clientKey: keypair.publicKey } } : {}),
    });
    const links = await untilAborted(opening, o.signal, (late) => late.close());
    const link = new Link(links, o.signal);
    try {
      const own = globalThis.crypto.getRandomValues(new Uint8Array(32));
      const raw = new glue.Client(o.session, own, link.transport, o.parties.length);
      return new Client(raw, link, links, keypair.publicKey, o.onProgress, o.parties.length);
    } catch (e) {
      link.close();
      throw toRingfenceError(e);
    }
  }

  /**
   * Classifies `input` (`batch × inputLen` reals) with the served model `model`: sends the
   * request, takes part in the setup, sends the masked or shared input and reconstructs the
   * answer. Rejects with `REFUSED` (and the parties' reason) when they decline the request.
   *
   * ```ts
   * const r = await client.classify('nn-a', pixels, { backend: 'rep3', output: 'class' });
   * console.log(r.classes[0], r.timings.online, r.stats.bytesSent);
   * ```
   */
  async classify(model: string, input: ClassifyInput, options: ClassifyOptions = {}): Promise<Classification> {
    this.#checkUsable('classify');
    if (typeof options !== 'object' || options === null) throw invalid('classify options must be an object');
    const { key, run: runOptions } = this.#runOptions('classify', model, options);
    const range = checkRange(options.inputRange);
    const values = checkInput(input, range);
    const prepared = this.#prepared;
    if (prepared && prepared.key !== key) {
      throw new RingfenceError(
        'API_MISUSE',
        `classify: a run of ${prepared.key} is prepared on this client and its parties wait for its input: classify with the same model and options, or close the client`,
      );
    }
    this.#running = true;
    this.#prepared = undefined;
    const start = this.stats();
    const before = prepared?.before ?? start;
    // Whether the parties wait for this input (a prepared run's setup is done).
    let awaited = false;
    try {
      const waitStart = performance.now();
      const waiting = prepared !== undefined && !prepared.settled;
      const run = prepared
        ? await prepared.setUp
        : await this.#setUp(model, runOptions, (info) => checkFits(values, info, range));
      const waited = waiting ? performance.now() - waitStart : 0;
      if (prepared) {
        awaited = true;
        try {
          checkFits(values, run.info, range);
        } catch (e) {
          // Nothing of this input went out: the prepared run stays for a fitting input.
          this.#prepared = prepared;
          awaited = false;
          throw e;
        }
      }
      const tOnline = this.#report('online');
      const out = await this.#step(() => this.#raw.run(values));
      const tDone = this.#report('done');
      const after = this.stats();
      return {
        classes: Array.from(out.classes),
        labels: out.labels,
        ...(out.scores ? { scores: out.scores } : {}),
        sent: out.sent,
        model: describe(run.info, range),
        stats: since(before, after),
        timings: { request: run.timings.request, setup: run.timings.setup, online: tDone - tOnline, waited },
      };
    } catch (e) {
      const err = this.#link.abortError() ?? this.#closedError() ?? toRingfenceError(e);
      // The parties are mid-protocol with this client: the session cannot go on.
      if (awaited || this.stats().bytesSent !== start.bytesSent) this.#fail(err);
      throw err;
    } finally {
      this.#running = false;
    }
  }

  /**
   * Starts the request and the setup of a classification now, before its input is known, so
   * that the {@link Client.classify} that follows (with the same model and options) pays only
   * the online phase. With spdz2k the setup is the client's share of the preprocessing, made
   * with the server (seconds in a browser): start it when the page loads and classify when the
   * user submits. Resolves when the setup is done (progress: `request`, `setup`, then
   * `prepared`); a `classify` called earlier waits for it. One run is prepared at a time and the
   * parties wait for its input, at most their timeout (`timeout_ms` of `ringfence party`, 30 s
   * by default: raise it for a form that takes longer to fill); the prepared run is this
   * session's and used once. An input that does not fit the model leaves it prepared.
   *
   * ```ts
   * const ready = client.prepare('logreg', { output: 'class' });  // while the user types
   * // …
   * await ready;  // optional: classify waits for it too
   * const r = await client.classify('logreg', features, { output: 'class' });
   * console.log(r.classes[0], r.timings.online, r.timings.waited);
   * ```
   *
   * A preparation that fails after its request went out ends the session like a failed
   * classification (the parties are left mid-protocol): the promise rejects, and so do the
   * `classify` waiting for it and every later call.
   */
  async prepare(model: string, options: PrepareOptions = {}): Promise<Prepared> {
    this.#checkUsable('prepare');
    if (typeof options !== 'object' || options === null) throw invalid('prepare options must be an object');
    if (this.#prepared) {
      throw new RingfenceError('API_MISUSE', `prepare: a run of ${this.#prepared.key} is already prepared on this client: classify it first`);
    }
    const { key, run: runOptions } = this.#runOptions('prepare', model, options);
    const before = this.stats();
    const pending: PendingRun = {
      key,
      before,
      settled: false,
      setUp: this.#setUp(model, runOptions).then(
        (run) => {
          pending.settled = true;
          this.#report('prepared');
          return run;
        },
        (e: unknown) => {
          const err = this.#link.abortError() ?? this.#closedError() ?? toRingfenceError(e);
          if (this.#prepared === pending) this.#prepared = undefined;
          if (this.stats().bytesSent !== before.bytesSent) this.#fail(err);
          throw err;
        },
      ),
    };
    this.#prepared = pending;
    const run = await pending.setUp;
    return { model: describe(run.info, undefined), stats: run.stats, timings: run.timings };
  }

  /**
   * A run's options with their defaults, and its key in the words errors use (a prepared run
   * serves the classification of the same key).
   */
  #runOptions(what: string, model: string, options: PrepareOptions): { key: string; run: Required<PrepareOptions> } {
    if (typeof model !== 'string' || model.length === 0) throw invalid(`${what}: model must be a model's name`);
    const { backend = defaultBackend(this.#servers), output = 'scores', batch = 1 } = options;
    return { key: `'${model}' (backend ${backend}, output ${output}, batch ${batch})`, run: { backend, output, batch } };
  }

  /**
   * The request and the setup of a run, with their progress reports; `fits` judges the
   * parties' description of the model before the setup starts.
   */
  async #setUp(model: string, { backend, output, batch }: Required<PrepareOptions>, fits?: (info: WasmModelInfo) => void): Promise<SetUpRun> {
    const before = this.stats();
    const t0 = this.#report('request');
    const info = await this.#step(() => this.#raw.request(model, backend, output, batch));
    fits?.(info);
    const t1 = this.#report('setup');
    const stop = this.#reportPreprocessing();
    try {
      await this.#step(() => this.#raw.setup());
    } finally {
      stop();
    }
    const t2 = performance.now();
    return { info, timings: { request: t1 - t0, setup: t2 - t1 }, stats: since(before, this.stats()) };
  }

  /** Ends the session with `err` (the parties are mid-protocol with this client). */
  #fail(err: RingfenceError): void {
    this.#failed ??= err;
    this.#link.close();
  }

  /** Communication so far over this client's connection. */
  stats(): ProgressCounters {
    const s = this.#raw.stats();
    return { bytesSent: s.bytesSent, bytesReceived: this.#link.bytesReceived, rounds: s.rounds };
  }

  /** Closes the links to the parties (idempotent); later classifications fail with `API_MISUSE`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    // A step still running fails on the closed links. The wasm session is freed with this
    // object (wasm-bindgen's finalizer), so `stats()` keeps working.
    this.#link.close();
  }

  /** Throws unless a classification (or a preparation) may start now. */
  #checkUsable(what: string): void {
    const e = this.#link.abortError() ?? this.#closedError() ?? this.#failed;
    if (e) throw e;
    if (this.#running) throw new RingfenceError('API_MISUSE', `${what}: another classification is running on this client; await it first`);
  }

  #closedError(): RingfenceError | undefined {
    return this.#closed ? new RingfenceError('API_MISUSE', 'the client is closed') : undefined;
  }

  /** One wasm step, cancellable; `start()` throws synchronously on bad arguments (nothing sent). */
  async #step<T>(start: () => Promise<T>): Promise<T> {
    const e = this.#link.abortError() ?? this.#closedError();
    if (e) throw e;
    return this.#link.race(start());
  }

  /** Reports `stage` and returns the time it started. */
  #report(stage: ClientStage): number {
    this.#onProgress?.({ stage, ...this.stats(), transport: this.transport });
    return performance.now();
  }

  /**
   * Reports the preprocessing of a running setup while it advances; returns the function that
   * stops it. The counts are the wasm session's, readable while its setup step runs.
   */
  #reportPreprocessing(): () => void {
    const onProgress = this.#onProgress;
    if (!onProgress) return () => {};
    let last = '';
    const timer = setInterval(() => {
      const p = this.#raw.progress();
      const now = `${p.making}:${p.done}`;
      if (p.total === 0 || now === last) return;
      last = now;
      onProgress({ stage: 'preprocessing', ...this.stats(), transport: this.transport, preprocessing: { ...p } });
    }, PREPROCESSING_REPORT_MS);
    return () => clearInterval(timer);
  }
}

/** A run's request and setup, done. */
interface SetUpRun {
  readonly info: WasmModelInfo;
  readonly timings: { readonly request: number; readonly setup: number };
  readonly stats: ProgressCounters;
}

/** A run started by {@link Client.prepare}: its options' key, the counters before it, its setup. */
interface PendingRun {
  readonly key: string;
  readonly before: ProgressCounters;
  readonly setUp: Promise<SetUpRun>;
  /** Whether the setup is done (a classification then does not wait). */
  settled: boolean;
}

/** The communication between two readings of the counters. */
function since(before: ProgressCounters, after: ProgressCounters): ProgressCounters {
  return {
    bytesSent: after.bytesSent - before.bytesSent,
    bytesReceived: after.bytesReceived - before.bytesReceived,
    rounds: after.rounds - before.rounds,
  };
}

function invalid(message: string): RingfenceError {
  return new RingfenceError('INVALID_ARGUMENT', message);
}

/** {@link ClientOptions} checked, with every id and key as bytes. */
type CheckedOptions = Omit<ClientOptions, 'session' | 'parties' | 'keypair'> & {
  session: Uint8Array;
  parties: Uint8Array[];
  keypair: NoiseKeypair | undefined;
};

/** The options, checked without touching the network; hex ids and keys become bytes. */
function checkClientOptions(options: ClientOptions): CheckedOptions {
  const o = options;
  const bad = (m: string) => invalid(`Client.connect: ${m}`);
  if (typeof o !== 'object' || o === null) throw bad('needs an options object');
  if (typeof o.relay !== 'string' || !/^wss?:\/\//.test(o.relay)) throw bad(`relay must start with ws:// or wss://, got ${String(o.relay)}`);
  checkWebTransportOptions(o.webTransport, bad);
  const session = bytesOf(o.session, 16);
  if (!session) throw bad('session must be 16 bytes (a Uint8Array, or 32 hex digits)');
  const parties = Array.isArray(o.parties) && DEPLOYMENT_SIZES.includes(o.parties.length) ? o.parties.map((k) => bytesOf(k, 32)) : [];
  if (parties.length === 0 || !parties.every((k) => k !== undefined)) {
    throw bad(`parties must list the deployment's ${DEPLOYMENT_SIZES.join(', ').replace(/, (\d+)$/, ' or $1')} server parties' public keys (32-byte Uint8Arrays, or 64 hex digits each)`);
  }
  let keypair: NoiseKeypair | undefined;
  if (o.keypair !== undefined) {
    const privateKey = typeof o.keypair === 'object' && o.keypair !== null ? bytesOf(o.keypair.privateKey, 32) : undefined;
    const publicKey = typeof o.keypair === 'object' && o.keypair !== null ? bytesOf(o.keypair.publicKey, 32) : undefined;
    if (!privateKey || !publicKey) throw bad('keypair must be {privateKey, publicKey} of 32 bytes (or 64 hex digits) each');
    keypair = { privateKey, publicKey };
  }
  if (o.deployment !== undefined && (typeof o.deployment !== 'string' || !/^[a-z0-9-]{1,32}$/.test(o.deployment))) {
    throw bad(`deployment must be a name of [a-z0-9-]{1,32}, got ${String(o.deployment)}`);
  }
  if (o.token !== undefined && (typeof o.token !== 'string' || !/^[A-Za-z0-9._-]{1,512}$/.test(o.token))) {
    throw bad('token must be the string `ringfence token issue` printed');
  }
  if (o.token !== undefined && o.deployment === undefined && o.keypair === undefined && typeof o.onPublicKey !== 'function') {
    // A join token names its deployment (`rf1.{deployment}.…`): the likely intent is to invite it.
    const named = o.token.split('.')[1];
    throw bad(`a token but no deployment: pass \`deployment\`${named ? ` ('${named}', the token's)` : ''} so that the relay invites its server parties into the session`);
  }
  const bound = o.token !== undefined ? boundKey(o.token) : undefined;
  if (bound !== undefined && !keypair) {
    throw bad('the token is bound to a client key (rf2): pass the keypair it was issued for (make it with generateNoiseKeypair() before asking for the token)');
  }
  if (bound !== undefined && keypair && toHex(keypair.publicKey) !== bound) {
    throw bad("the token is bound to another client key than keypair's: ask for a token for this keypair's public key");
  }
  if (o.keypair === undefined && o.deployment === undefined && typeof o.onPublicKey !== 'function') {
    throw bad('without a keypair or a deployment, onPublicKey must hand the generated public key to the parties (they authenticate the client by it)');
  }
  if (o.timeoutMs !== undefined && !(Number.isInteger(o.timeoutMs) && o.timeoutMs > 0)) {
    throw bad(`timeoutMs must be a positive integer, got ${String(o.timeoutMs)}`);
  }
  const s = o.signal;
  if (s !== undefined && !(typeof s === 'object' && s !== null && typeof s.aborted === 'boolean')) {
    throw bad('signal must be an AbortSignal');
  }
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw bad('onProgress must be a function');
  return { ...o, session, parties: parties as Uint8Array[], keypair };
}

/**
 * The client key (64 hex digits) a token is bound to, for an `rf2.` token
 * (`rf2.{deployment}.{session}.{party}.{client key}.{expires}.{signature}`); `undefined` for any
 * other (the relay and the parties judge those).
 */
function boundKey(token: string): string | undefined {
  const f = token.split('.');
  return f[0] === 'rf2' && f.length === 7 && /^[0-9a-f]{64}$/.test(f[4]) ? f[4] : undefined;
}

/** `inputRange`, checked: two finite numbers, the first not above the second. */
function checkRange(range: ClassifyOptions['inputRange']): readonly [number, number] | undefined {
  if (range === undefined) return undefined;
  const ok = Array.isArray(range) && range.length === 2 && range.every(Number.isFinite) && range[0] <= range[1];
  if (!ok) throw invalid(`classify: inputRange must be [min, max] with finite min <= max, got ${JSON.stringify(range)}`);
  return [range[0], range[1]];
}

/**
 * The input as a `Float64Array` of finite values within `range` (when given), checked before
 * anything is sent.
 */
function checkInput(input: ClassifyInput, range: readonly [number, number] | undefined): Float64Array {
  let values: Float64Array;
  if (ArrayBuffer.isView(input) && !(input instanceof DataView) && !(input instanceof BigInt64Array) && !(input instanceof BigUint64Array)) {
    values = Float64Array.from(input as ArrayLike<number>);
  } else if (Array.isArray(input)) {
    const bad = input.findIndex((v) => typeof v !== 'number');
    if (bad >= 0) throw invalid(`input[${bad}] must be a number, got ${typeof input[bad]}`);
    values = Float64Array.from(input);
  } else {
    const kind = input === null ? 'null' : typeof input === 'object' ? ((input as object).constructor?.name ?? 'object') : typeof input;
    throw invalid(`input must be a number[] or a typed array of numbers (Float32Array, Uint8Array, Uint8ClampedArray, ...), got ${kind}`);
  }
  const at = values.findIndex((v) => !Number.isFinite(v));
  if (at >= 0) throw new RingfenceError('OUT_OF_RANGE', `input[${at}] is ${values[at]}: only finite values can be encoded`);
  if (range) checkRangeOf(values, range);
  return values;
}

/** Throws `OUT_OF_RANGE`, saying how to scale, unless every value is within `range`. */
function checkRangeOf(values: Float64Array, [lo, hi]: readonly [number, number]): void {
  const out = values.findIndex((v) => v < lo || v > hi);
  if (out < 0) return;
  const max = values.reduce((m, v) => Math.max(m, v), -Infinity);
  // The common mistake: raw 0–255 pixels for a model trained on [0, 1].
  const hint = lo >= 0 && hi <= 1 && max > 1 && max <= 255 ? ': divide 0–255 pixels by 255' : `: scale it to [${lo}, ${hi}]`;
  throw new RingfenceError('OUT_OF_RANGE', `input[${out}] is ${values[out]}, outside the model's input range [${lo}, ${hi}]${hint}`);
}

/** What the client reports of the model: the parties' description, and the range checked. */
function describe(info: WasmModelInfo, range: readonly [number, number] | undefined): ModelDescription {
  const inputRange = range ?? info.inputRange;
  return {
    inputLen: info.inputLen,
    outputLen: info.outputLen,
    fracBits: info.fracBits,
    ...(inputRange ? { inputRange } : {}),
    ...(info.classLabels ? { classLabels: info.classLabels } : {}),
  };
}

/**
 * Checks the input against the model the parties described, before the setup runs (its range
 * unless the caller gave one, which was checked before the request).
 */
function checkFits(values: Float64Array, info: WasmModelInfo, given: readonly [number, number] | undefined): void {
  if (values.length !== info.batch * info.inputLen) {
    throw new RingfenceError(
      'LENGTH_MISMATCH',
      `input has ${values.length} values; the model takes ${info.inputLen} per sample and the request is for ${info.batch} sample(s)`,
    );
  }
  if (!given && info.inputRange) checkRangeOf(values, info.inputRange);
  // The core's fixed-point encoder is the one judge of what can be encoded (|x| < 2^(63 − fracBits)).
  try {
    bindings().encodeFixed(values, info.fracBits);
  } catch (e) {
    throw toRingfenceError(e);
  }
}
