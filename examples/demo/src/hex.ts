// Keys, session ids and tokens travel as hex (in the API's JSON and between tabs).

export const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** The bytes of `s`, or `undefined` when it is not hex bytes. */
export function unhex(s: unknown): Uint8Array | undefined {
  if (typeof s !== 'string' || !/^(?:[0-9a-f]{2})*$/i.test(s)) return undefined;
  return Uint8Array.from(s.match(/../g) ?? [], (b) => parseInt(b, 16));
}
