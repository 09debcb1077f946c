/**
 * Who takes part in a session: the compute parties, ids `0 … COMPUTE_PARTIES − 1`, then the
 * clients (input providers) from {@link FIRST_CLIENT} on. The SDK's sessions are those of the
 * 3-party schemes (rep3, METEOR), and this is the one place the count is written; the Rust
 * side's is `ringfence_core::net::Roster`. Internal: not exported from the package.
 * @module
 */

/** The number of compute parties in a session. */
export const COMPUTE_PARTIES = 3;

/** The first client's id, right after the compute parties': the client of a classification session. */
export const FIRST_CLIENT = COMPUTE_PARTIES;

/** The compute parties' ids, in order. */
export function computeParties(): number[] {
  return Array.from({ length: COMPUTE_PARTIES }, (_, j) => j);
}

/** Whether `id` is a compute party's (an integer in `0 … COMPUTE_PARTIES − 1`). */
export function isComputeParty(id: number): boolean {
  return Number.isInteger(id) && id >= 0 && id < COMPUTE_PARTIES;
}

/** The compute party after `id` in ring order (the last is followed by 0). */
export function nextParty(id: number): number {
  return (id + 1) % COMPUTE_PARTIES;
}

/** The compute party before `id` in ring order (0 is preceded by the last). */
export function prevParty(id: number): number {
  return (id + COMPUTE_PARTIES - 1) % COMPUTE_PARTIES;
}
