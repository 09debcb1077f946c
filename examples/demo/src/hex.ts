// Keys, session ids and tokens travel as hex (in the API's JSON and between tabs): the SDK's
// own encoding, with a decoder that answers `undefined` for the callers that word the error.
import { fromHex, toHex } from 'ringfence';

export const hex = toHex;

/** The bytes of `s`, or `undefined` when it is not hex bytes. */
export function unhex(s: unknown): Uint8Array | undefined {
  if (typeof s !== 'string' || !/^(?:[0-9a-f]{2})*$/i.test(s)) return undefined;
  return fromHex(s);
}
