/**
 * Fixed-point encoding of reals in Z_2^64 (two's complement, `fracBits` fractional bits).
 * @module
 */

import { toRingfenceError } from './errors.js';
import { bindings } from './init.js';

/**
 * The default number of fractional bits in Z_2^64: the format of every model the servers serve
 * (a classification uses the `fracBits` the servers describe, whatever this is). The same as
 * the core's (`defaultFracBits()` of the module; the SDK's tests check they agree).
 */
export const DEFAULT_FRAC_BITS = 13;

/**
 * Encodes reals as fixed point (rounded to nearest). Non-finite values and values of magnitude
 * `2^(63 − fracBits)` or more fail with `OUT_OF_RANGE`, before anything is sent.
 */
export function encodeFixed(values: Float64Array | Float32Array | readonly number[], fracBits = DEFAULT_FRAC_BITS): BigInt64Array {
  try {
    return bindings().encodeFixed(values, fracBits);
  } catch (e) {
    throw toRingfenceError(e);
  }
}

/** Decodes fixed-point ring values to reals. */
export function decodeFixed(values: BigInt64Array | BigUint64Array, fracBits = DEFAULT_FRAC_BITS): Float64Array {
  try {
    return bindings().decodeFixed(values, fracBits);
  } catch (e) {
    throw toRingfenceError(e);
  }
}
