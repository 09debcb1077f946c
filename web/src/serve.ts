/**
 * Serving models from a compute party: the options and result of {@link Party.serve}, and the
 * bookkeeping that turns the core's stage reports into progress events and per-stage figures.
 * @module
 */

import type { Backend } from './backend.js';
import { RingfenceError, toRingfenceError } from './errors.js';
import { bindings } from './init.js';
import type { ProgressCounters, Stage } from './party.js';
import { COMPUTE_PARTIES } from './roster.js';
import type { WasmServeOutcome, WasmServeStage } from './wasm-api.js';

/** One served model and how it is served (an entry of {@link ServeOptions.models}). */
export interface ServedModel {
  /**
   * The model file: its ONNX bytes at the model owner, P0 (or anywhere for a `public` model),
   * and its shape file ({@link modelShape}, `ringfence model shape`) at P1 and P2.
   */
  model: Uint8Array;
  /**
   * What a client may learn: the class only, or the scores too. Scores make extracting the
   * model by repeated queries easier. METEOR always reveals the scores, so a `'class'` model is
   * served on rep3 or mal3. All three parties must agree (any refusal is every party's).
   * @defaultValue 'class'
   */
  output?: 'class' | 'scores';
  /**
   * The weights are public: P1 and P2 may load the ONNX file (else they refuse it with
   * `INVALID_ARGUMENT`: only the model owner may hold the weights).
   * @defaultValue false
   */
  public?: boolean;
}

/** Options of {@link Party.serve}. */
export interface ServeOptions {
  /**
   * The served models: each name (1 to 32 bytes, what clients ask for) mapped to the model file
   * (a `Uint8Array`, served with the defaults) or a {@link ServedModel}. Only the model owner,
   * P0, may hold the weights (ONNX): P1 and P2 load its shape file, which has none
   * ({@link modelShape}), unless the model is `public`. The three compare the shape's digest on
   * every request, so different files are a refusal naming the model. Every file is loaded
   * before anything is sent: a malformed one fails with `INVALID_MODEL`.
   */
  models: Record<string, Uint8Array | ServedModel>;
  /**
   * The most samples a request may carry; larger requests are refused.
   * @defaultValue 1
   */
  maxBatch?: number;
  /**
   * The client's participant id in the session (the party joined with `parties` above it).
   * @defaultValue the first participant after the compute parties
   */
  client?: number;
  /**
   * How rep3's comparisons run: `'two-input'` (8 rounds per 64-bit comparison), `'fan-in'`
   * (multi-fan-in gates: 3 rounds, more bytes) or `'fan-in:R,L'` (groups of R bits, gates of
   * up to L inputs), as `comparisons` in a native party's configuration. The three parties must
   * agree: they compare their settings on every request and refuse rep3 requests when they
   * differ. METEOR and mal3 ignore it.
   * @defaultValue 'two-input'
   */
  comparisons?: 'two-input' | 'fan-in' | `fan-in:${number},${number}`;
}

/** The request a party answered. */
export interface ServedRequest {
  /** The served name the client asked for. */
  readonly model: string;
  /** The protocol family it runs on. */
  readonly backend: Backend;
  /** What the client receives: every score, or only the class. */
  readonly output: 'scores' | 'class';
  /** Samples in the request. */
  readonly batch: number;
}

/** One stage of a served request at this party: what it sent and received, and how long it took. */
export interface ServeStageFigures extends ProgressCounters {
  /** Wall time, in milliseconds. */
  readonly ms: number;
}

/** This party's figures per stage of a served request. */
export interface ServeStages {
  /** Waiting for the client's request, and the parties' agreement on it (or the refusal). */
  readonly request: ServeStageFigures;
  /** The setup: weights shared by P0, masks, preprocessing. */
  readonly setup: ServeStageFigures;
  /** The online phase: the input, the inference, the result to the client. */
  readonly online: ServeStageFigures;
}

/** {@link Party.serve} answered the client. */
export interface ServeAnswered {
  /** How the request ended. */
  readonly outcome: 'answered';
  /** What the client asked for. */
  readonly request: ServedRequest;
  /** This party's figures per stage. */
  readonly stages: ServeStages;
}

/** {@link Party.serve} refused the request; the client was told the same reason. */
export interface ServeRefused {
  /** How the request ended. */
  readonly outcome: 'refused';
  /** Why (unknown model, batch too large, an output the backend cannot give, ...). */
  readonly reason: string;
  /** This party's figures: the request and the refusal. */
  readonly stages: Pick<ServeStages, 'request'>;
}

/** How {@link Party.serve} ended. */
export type ServeResult = ServeAnswered | ServeRefused;

/**
 * The shape file of a model, from its ONNX bytes: the layers, sizes and fixed-point parameters
 * without any weight (format: `core-rs/src/nn/shape.rs`; the same bytes as `ringfence model
 * shape`). What P1 and P2 serve. A malformed model fails with `INVALID_MODEL`. Requires
 * `await init()`.
 *
 * ```ts
 * const shape = modelShape(onnx); // hand it to P1 and P2; P0 keeps `onnx`
 * ```
 */
export function modelShape(onnx: Uint8Array): Uint8Array {
  try {
    return bindings().modelShape(onnx);
  } catch (e) {
    throw toRingfenceError(e);
  }
}

/** The checked options, with defaults. @internal */
export interface CheckedServeOptions {
  models: Record<string, Uint8Array | ServedModel>;
  maxBatch: number;
  client: number;
  comparisons: string | undefined;
}

/**
 * The options with their defaults; the wasm module checks every value (and imports the models)
 * before anything is sent.
 * @internal
 */
export function serveOptions(options: ServeOptions, servers = COMPUTE_PARTIES): CheckedServeOptions {
  if (typeof options !== 'object' || options === null) {
    throw new RingfenceError('INVALID_ARGUMENT', 'serve() needs an options object { models, maxBatch, client }');
  }
  // The first client follows the compute parties.
  const { models, maxBatch = 1, client = servers, comparisons } = options;
  return { models, maxBatch, client, comparisons };
}

/** The counters at one point of a served request. */
interface Mark extends ProgressCounters {
  readonly t: number;
}

/** Where each core stage leaves the session, in the party's progress stages. */
const PROGRESS: Record<WasmServeStage, Stage> = {
  accepted: 'setup', // the request was accepted: the setup starts
  'setup-done': 'online', // the setup is done: the online phase starts
  'online-done': 'done', // the client has its result
};

/**
 * Records the counters and time at each point of a served request, reports each as a progress
 * event, and builds the per-stage figures of the result.
 * @internal
 */
export class ServeRecorder {
  readonly #marks: Mark[] = [];
  readonly #report: (stage: Stage, counters: ProgressCounters) => void;

  /** Starts at `start` (the counters before serving); `report` emits a progress event. */
  constructor(start: ProgressCounters, report: (stage: Stage, counters: ProgressCounters) => void) {
    this.#marks.push({ ...start, t: performance.now() });
    this.#report = report;
  }

  /** The core reached `stage` with these counters. */
  mark(stage: WasmServeStage, counters: ProgressCounters): void {
    this.#marks.push({ ...counters, t: performance.now() });
    this.#report(PROGRESS[stage], counters);
  }

  /** The result: the outcome and one figure per stage between consecutive marks. */
  result(outcome: WasmServeOutcome, end: ProgressCounters): ServeResult {
    const m = this.#marks;
    if (outcome.outcome === 'refused') {
      return { outcome: 'refused', reason: outcome.reason, stages: { request: between(m[0], { ...end, t: performance.now() }) } };
    }
    const [start, accepted, setupDone, onlineDone] = m;
    if (!onlineDone) throw new RingfenceError('INTERNAL', `serve answered after ${m.length - 1} of its 3 stages`);
    return {
      outcome: 'answered',
      request: outcome.request,
      stages: { request: between(start, accepted), setup: between(accepted, setupDone), online: between(setupDone, onlineDone) },
    };
  }
}

function between(a: Mark, b: Mark): ServeStageFigures {
  return { bytesSent: b.bytesSent - a.bytesSent, bytesReceived: b.bytesReceived - a.bytesReceived, rounds: b.rounds - a.rounds, ms: b.t - a.t };
}
