/**
 * The protocol families a deployment can serve, named once for the whole SDK. The core's
 * registry (`core-rs/src/service/registry.rs`) lists the same names; the SDK's tests check
 * that the two agree.
 * @module
 */

import { COMPUTE_PARTIES } from './roster.js';

/** Every backend's name; the SDK's default first. */
export const BACKENDS = ['meteor', 'rep3', 'mal3', 'rss', 'spdz2k'] as const;

/**
 * A protocol family: among three servers `'meteor'` (fewer online rounds; reveals the scores),
 * `'rep3'` (replicated sharing; can reveal the class alone), or `'mal3'` (rep3 with every
 * product checked: a server that deviates makes the run fail instead of changing the answer;
 * slower); among five or seven, `'rss'` (replicated sharing where any two, or three, servers
 * together learn nothing; can reveal the class alone); with one or two servers, `'spdz2k'` (the
 * client computes as the last party: each party is protected against all the others even if
 * they cheat together, and the run aborts on any deviation; the client makes the
 * preprocessing with the servers, so its first answer takes seconds — see `Client.prepare`;
 * can reveal the class alone).
 */
export type Backend = (typeof BACKENDS)[number];

/** The backend {@link Client.classify} uses when none is given, among three servers. */
export const DEFAULT_BACKEND: Backend = BACKENDS[0];

/** The backend {@link Client.classify} uses when none is given, among `servers` servers. */
export function defaultBackend(servers: number): Backend {
  if (servers === COMPUTE_PARTIES) return DEFAULT_BACKEND;
  return servers <= 2 ? 'spdz2k' : 'rss';
}
