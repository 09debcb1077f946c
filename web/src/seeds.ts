/**
 * Session ids and seeds for tests and demos.
 * @module
 */

import { RingfenceError } from './errors.js';
import type { PartySeeds } from './party.js';
import { COMPUTE_PARTIES, isComputeParty, nextParty, prevParty } from './roster.js';

/** A fresh random 16-byte session id (from the platform's CSPRNG). */
export function randomSessionId(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(16));
}

/**
 * **TEST ONLY — insecure.** Deterministic seeds for party `id` of a session named `label`:
 * SHA-256 of a fixed prefix, the label and the key's name. Anyone who knows the label knows
 * every party's keys, so the computation is not private. Real deployments derive the pairwise
 * keys from an authenticated key agreement between the parties (never from a relay), and `own`
 * from a CSPRNG. `servers` is the session's number of compute parties (3, or 5 or 7 for rss).
 */
export async function insecureTestSeeds(label: string, id: number, servers = COMPUTE_PARTIES): Promise<PartySeeds> {
  if (!isComputeParty(id, servers)) {
    throw new RingfenceError('INVALID_ARGUMENT', `party id must be 0 to ${servers - 1}, got ${String(id)}`);
  }
  const key = async (name: string) =>
    new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(`ringfence-insecure-test-seed\0${label}\0${name}`)));
  const pair = (a: number, b: number) => key(`pair ${Math.min(a, b)}-${Math.max(a, b)}`);
  const [prev, next, own] = await Promise.all([pair(prevParty(id, servers), id), pair(id, nextParty(id, servers)), key(`own ${id}`)]);
  return { prev, next, own };
}
