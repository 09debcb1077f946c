/**
 * Hex encoding of bytes: what deployments print and serve (session ids, public keys,
 * certificate hashes) and what {@link Client.connect} also takes.
 * @module
 */

import { RingfenceError } from './errors.js';

/** Lower-case hex of `bytes` (two digits per byte). */
export function toHex(bytes: Uint8Array): string {
  if (!(bytes instanceof Uint8Array)) throw new RingfenceError('INVALID_ARGUMENT', `toHex: expected a Uint8Array, got ${describe(bytes)}`);
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/**
 * The bytes `hex` spells (upper or lower case, two digits per byte); `INVALID_ARGUMENT` for
 * anything else, or when `length` is given and the bytes are not that many.
 */
export function fromHex(hex: string, length?: number): Uint8Array<ArrayBuffer> {
  if (typeof hex !== 'string' || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    const shown = typeof hex === 'string' ? JSON.stringify(hex.length > 80 ? `${hex.slice(0, 80)}…` : hex) : describe(hex);
    throw new RingfenceError('INVALID_ARGUMENT', `fromHex: expected an even number of hex digits, got ${shown}`);
  }
  if (length !== undefined && hex.length !== 2 * length) {
    throw new RingfenceError('INVALID_ARGUMENT', `fromHex: expected ${2 * length} hex digits (${length} bytes), got ${hex.length}`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * `value` as `length` bytes: a `Uint8Array` of that length, or its hex; `undefined` when it is
 * neither (the caller says what it expected). @internal
 */
export function bytesOf(value: unknown, length: number): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value.length === length ? value : undefined;
  if (typeof value === 'string' && value.length === 2 * length && /^[0-9a-fA-F]*$/.test(value)) return fromHex(value);
  return undefined;
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? (v.constructor?.name ?? 'object') : typeof v;
}
