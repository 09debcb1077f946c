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

/**
 * The numbers of server parties a deployment may have: 1 or 2 (spdz2k, where the client computes
 * as the last party), 3 (rep3, METEOR, mal3) or 5 or 7 (rss). A classification client is the
 * participant right after them.
 */
export const DEPLOYMENT_SIZES: readonly number[] = [1, 2, 3, 5, 7];

/** The compute parties' ids, in order. */
export function computeParties(): number[] {
  return Array.from({ length: COMPUTE_PARTIES }, (_, j) => j);
}

/** Whether `id` is a compute party's (an integer in `0 … servers − 1`). */
export function isComputeParty(id: number, servers = COMPUTE_PARTIES): boolean {
  return Number.isInteger(id) && id >= 0 && id < servers;
}

/** The compute party after `id` in ring order among `servers` (the last is followed by 0). */
export function nextParty(id: number, servers = COMPUTE_PARTIES): number {
  return (id + 1) % servers;
}

/** The compute party before `id` in ring order among `servers` (0 is preceded by the last). */
export function prevParty(id: number, servers = COMPUTE_PARTIES): number {
  return (id + servers - 1) % servers;
}
