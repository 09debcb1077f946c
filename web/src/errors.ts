/**
 * Errors of the SDK: every failure is a {@link RingfenceError} with a stable {@link
 * RingfenceErrorCode}, a human-readable message (which may change) and the underlying cause.
 * @module
 */

/**
 * Stable error codes.
 *
 * - `INVALID_ARGUMENT`: an argument has the wrong type (e.g. `number[]` where a `BigInt64Array`
 *   is required) or value (a party id of 3).
 * - `LENGTH_MISMATCH`: operand lengths or matrix dimensions disagree.
 * - `API_MISUSE`: the API was used wrongly (an input passed by a non-owner, a share revealed
 *   twice, a second operation started before the first finished, `init()` not awaited).
 * - `OUT_OF_RANGE`: a value does not fit its encoding (fixed point, non-finite floats).
 * - `INVALID_MODEL`: a model file given to {@link Party.serve} could not be imported (malformed
 *   ONNX, an unsupported operator); the message gives the importer's reason.
 * - `PREPROCESSING_EXHAUSTED`: a daBit or truncation-pair store has too little material left.
 * - `PEER_MISBEHAVED`: a peer sent a frame that breaks the protocol (`peer` names it).
 * - `TRANSPORT`: the link to a peer failed or closed (`peer` names it).
 * - `TIMEOUT`: nothing arrived from a peer within the transport's timeout (`peer` names it).
 * - `REFUSED`: the compute parties declined a {@link Client.classify} request (unknown model,
 *   batch too large, ...); the message gives their reason, `peer` the party that answered.
 *   (A serving {@link Party} is told of a refusal by {@link Party.serve}'s result instead.)
 * - `CHECK_FAILED`: a check of a malicious-secure scheme failed (a MAC or a multiplication
 *   triple did not verify): the session stopped before releasing anything; `peer` names the
 *   party the evidence points to, where it points to one. A {@link Client} of `'mal3'` servers
 *   gets it when they abort (each sends an abort notice in place of the output).
 * - `ABORTED`: the `AbortSignal` given to {@link Party.join} or {@link Client.connect} was
 *   aborted (`cause` is its `reason`); the party or client is closed and every later call fails
 *   the same way.
 * - `WASM_LOAD`: the WebAssembly module could not be fetched, read or instantiated.
 * - `INTERNAL`: a bug; please report it.
 *
 * Errors of the first six kinds are detected before anything is sent.
 */
export type RingfenceErrorCode =
  | 'INVALID_ARGUMENT'
  | 'LENGTH_MISMATCH'
  | 'API_MISUSE'
  | 'OUT_OF_RANGE'
  | 'INVALID_MODEL'
  | 'PREPROCESSING_EXHAUSTED'
  | 'PEER_MISBEHAVED'
  | 'TRANSPORT'
  | 'TIMEOUT'
  | 'REFUSED'
  | 'CHECK_FAILED'
  | 'ABORTED'
  | 'WASM_LOAD'
  | 'INTERNAL';

const CODES: ReadonlySet<string> = new Set<RingfenceErrorCode>([
  'INVALID_ARGUMENT',
  'LENGTH_MISMATCH',
  'API_MISUSE',
  'OUT_OF_RANGE',
  'INVALID_MODEL',
  'PREPROCESSING_EXHAUSTED',
  'PEER_MISBEHAVED',
  'TRANSPORT',
  'TIMEOUT',
  'REFUSED',
  'CHECK_FAILED',
  'ABORTED',
  'WASM_LOAD',
  'INTERNAL',
]);

/** Options of {@link RingfenceError}. */
export interface RingfenceErrorOptions {
  /** The underlying error (a JS error from the wasm module, a transport error, ...). */
  cause?: unknown;
  /** For peer-caused errors (`PEER_MISBEHAVED`, `TRANSPORT`, `TIMEOUT`, `REFUSED`, `CHECK_FAILED`): the peer's index. */
  peer?: number;
}

/** The error type of the SDK. */
export class RingfenceError extends Error {
  /** What went wrong, as a stable code. */
  readonly code: RingfenceErrorCode;
  /** The peer to blame, for peer-caused errors. */
  readonly peer: number | undefined;

  constructor(code: RingfenceErrorCode, message: string, options: RingfenceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RingfenceError';
    this.code = code;
    this.peer = options.peer;
  }
}

/**
 * Converts anything thrown by the wasm module or a transport into a {@link RingfenceError}
 * (errors that already are one pass through).
 * @internal
 */
export function toRingfenceError(e: unknown): RingfenceError {
  if (e instanceof RingfenceError) return e;
  const obj = typeof e === 'object' && e !== null ? (e as { code?: unknown; message?: unknown; peer?: unknown }) : {};
  const message = typeof obj.message === 'string' ? obj.message : String(e);
  const peer = typeof obj.peer === 'number' ? obj.peer : undefined;
  if (typeof obj.code === 'string' && CODES.has(obj.code)) {
    return new RingfenceError(obj.code as RingfenceErrorCode, message, { cause: e, peer });
  }
  // A trap inside the module (`RuntimeError: unreachable`) is a bug, never a caller error.
  return new RingfenceError('INTERNAL', message, { cause: e, peer });
}
