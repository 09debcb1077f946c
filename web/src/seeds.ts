/**
 * Session ids and seeds for tests and demos.
 * @module
 */

import { RingfenceError } from './errors.js';
import type { PartySeeds } from './party.js';
import { isComputeParty, nextParty, prevParty } from './roster.js';

/** A fresh random 16-byte session id (from the platform's CSPRNG). */
export function randomSessionId(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(16));
}

/**
 * **TEST ONLY — insecure.** Deterministic seeds for party `id` of a session named `label`:
 * SHA-256 of a fixed prefix, the label and the key's name. Anyone who knows the label knows
 * every party's keys, so the computation is not private. Real deployments derive the pairwise
 * keys from an authenticated key agreement between the parties (never from a relay), and `own`
 * from a CSPRNG.
 */
export async function insecureTestSeeds(label: string, id: number): Promise<PartySeeds> {
  if (!isComputeParty(id)) {
    throw new RingfenceError('INVALID_ARGUMENT', `party id must be 0, 1 or 2, got ${String(id)}`);
  }
  const key = async (name: string) =>
    new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(`ringfence-insecure-test-seed\0${label}\0${name}`)));
  const pair = (a: number, b: number) => key(`pair ${Math.min(a, b)}-${Math.max(a, b)}`);
  const [prev, next, own] = await Promise.all([pair(prevParty(id), id), pair(id, nextParty(id)), key(`own ${id}`)]);
  return { prev, next, own };
}
