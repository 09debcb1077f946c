#!/usr/bin/env node
// The number of compute parties lives in one place per language: `Roster` in Rust
// (core-rs/src/net/roster.rs; `service::ROSTER`, `CLIENT`, `PARTICIPANTS` for a classification
// session) and web/src/roster.ts in the SDK. This fails when a literal party count, a client id
// written out or a neighbour taken mod 3 appears in the sources outside the 3-party schemes' own
// folders (core-rs/src/rep3/, meteor/, mal3/ and bin3/, where 3 is the scheme),
// so that a session of another size needs its roster changed, not a hunt for 3s.
//
// Scanned: the crates' and the SDK's sources (SOURCES below), their unit tests and doc examples
// included. Integration tests (core-rs/tests, relay/tests, web/test, tests/) are not: each pins
// the deployment it tests (three parties, one client), which is what a test should do.
//
// A legitimate hit goes on ALLOWED (file, pattern name, reason); an entry that no longer matches
// anything fails the check too, so the list only holds what is still there.
//
//   node scripts/check-roster.mjs
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, green, main, red, say, StepError } from './lib/common.mjs';

/** Source trees scanned, and the file endings read in them. */
const SOURCES = ['core-rs/src', 'relay/src', 'wasm/src', 'link/src', 'web/src'];
const EXTENSIONS = ['.rs', '.ts'];
/** The 3-party schemes' folders: their 3 is the scheme's. */
const SCHEME_FOLDERS = ['core-rs/src/rep3/', 'core-rs/src/meteor/', 'core-rs/src/mal3/', 'core-rs/src/bin3/'];
/** Where the count is written, once per language (with its doc example and tests). */
const ROSTERS = ['core-rs/src/net/roster.rs', 'web/src/roster.ts'];

/** One call argument, allowing one level of parentheses: `PartyId(i)`, `url.clone()`. */
const ARG = String.raw`(?:[^,()]|\([^()]*\))*`;

/** What a literal party count looks like, each with what to use instead. */
const PATTERNS = [
  { name: 'PartyId(3)', re: /PartyId\(\s*3\s*\)/, use: 'Roster::first_client / service::CLIENT' },
  { name: '% 3', re: /%\s*3(?![\d.])/, use: 'Roster::next / prev (nextParty / prevParty in the SDK)' },
  {
    name: '(0..3)',
    re: /\(\s*0\s*\.\.\s*3(?:u8|usize)?\s*\)|\(\s*0\s*\.\.=\s*2(?:u8|usize)?\s*\)|\bin\s+0\s*\.\.\s*3(?:u8|usize)\b/,
    use: 'Roster::parties',
  },
  {
    name: '[0, 1, 2]',
    re: /\[\s*0\s*,\s*1\s*,\s*2\s*\]|\[\s*PartyId\(\s*[01]\s*\)\s*,\s*PartyId\(\s*[12]\s*\)/,
    use: 'Roster::parties / others (computeParties() in the SDK)',
  },
  {
    name: 'count vs 3',
    re: /\b(?:parties|participants|peers|public_?[kK]eys|views|done)\b(?:\.length|\.len\(\))?\s*(?:===?|!==?|<=?|>=?)\s*[34](?![\d.])/,
    use: 'Roster::n / participants (COMPUTE_PARTIES in the SDK)',
  },
  {
    name: 'id vs 2|3',
    re: /\b(?:id|client|party|me|owner)(?:\.0)?\s*(?:<=?|>=?)\s*[23](?![\d.])/,
    use: 'Roster::is_party / is_client (isComputeParty in the SDK)',
  },
  {
    name: 'default 3',
    re: /\?\?\s*3(?![\d.])|\b(?:client|CLIENT(?:_ID)?)\s*=\s*3(?![\d.])/,
    use: 'COMPUTE_PARTIES / FIRST_CLIENT (web/src/roster.ts)',
  },
  {
    name: 'participants literal',
    re: new RegExp(
      String.raw`\bCtx::new\(${ARG},\s*[34]\s*,|\b(?:RelayLinkConfig|RelayPath)::new\(${ARG},${ARG},\s*[34]\s*,` +
        String.raw`|\bNet::new\(\s*[34]\s*\)|\bparties:\s*[34]\b`,
    ),
    use: 'Roster::participants / service::PARTICIPANTS',
  },
];

/**
 * Hits that stay, each with its reason: `file` (from the repository root), the pattern's `name`
 * (every hit of that pattern in that file is allowed).
 */
const ALLOWED = [
  {
    file: 'relay/src/token.rs',
    pattern: 'PartyId(3)',
    reason: 'doc example of the token format: a token for participant 3 (any id would do), which the example then edits as text (".3.")',
  },
  {
    file: 'relay/src/ws/lobby.rs',
    pattern: 'PartyId(3)',
    reason: 'doc example and unit tests of the invitation format: a client id, written as the wire carries it',
  },
  {
    file: 'relay/src/ws/lobby.rs',
    pattern: 'participants literal',
    reason: 'doc example and unit tests of the invitation format: its participant count, written as the wire carries it',
  },
  {
    file: 'relay/src/ws/path.rs',
    pattern: 'PartyId(3)',
    reason: 'unit test of the relay path format: a path for participant 3 of 4, round-tripped',
  },
  {
    file: 'relay/src/ws/path.rs',
    pattern: 'participants literal',
    reason: 'unit test of the relay path format: a path for participant 3 of 4, round-tripped',
  },
  {
    file: 'relay/src/ws/client.rs',
    pattern: 'participants literal',
    reason: "doc example of RelayLinkConfig::new: the relay's API takes any participant count",
  },
  {
    file: 'web/src/index.ts',
    pattern: 'participants literal',
    reason: "the package's doc example: what a caller passes (`parties: 4`) to serve one client",
  },
  {
    file: 'web/src/noise.ts',
    pattern: 'participants literal',
    reason: 'API docs of SecureRelayTransport: what a caller passes (`parties: 4`) to serve one client',
  },
  {
    file: 'web/src/party.ts',
    pattern: 'participants literal',
    reason: 'API docs of Party.serve: what a caller passes (`parties: 4`) to serve one client',
  },
];

function* files(dir) {
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) yield* files(p);
    else if (EXTENSIONS.some((x) => e.name.endsWith(x))) yield p;
  }
}

main(() => {
  const offenders = [];
  const used = new Set();
  let scanned = 0;
  for (const dir of SOURCES) {
    for (const file of files(dir)) {
      if (SCHEME_FOLDERS.some((f) => file.startsWith(f)) || ROSTERS.includes(file)) continue;
      scanned++;
      const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const p of PATTERNS) {
          if (!p.re.test(line)) continue;
          const allow = ALLOWED.findIndex((a) => a.file === file && a.pattern === p.name);
          if (allow >= 0) used.add(allow);
          else offenders.push(`${file}:${i + 1}: ${p.name} (use ${p.use})\n      ${line.trim()}`);
        }
      });
    }
  }
  if (scanned === 0) throw new StepError(`no source file found under ${SOURCES.join(', ')}: is ROOT (${relative(process.cwd(), ROOT) || '.'}) right?`);
  const stale = ALLOWED.filter((_, i) => !used.has(i)).map((a) => `${a.file}: ${a.pattern}`);
  if (offenders.length) {
    say(red(`literal party counts outside the 3-party schemes' folders (${offenders.length}):\n  ${offenders.join('\n  ')}`));
  }
  if (stale.length) {
    say(red(`allow-list entries of scripts/check-roster.mjs that match nothing any more (remove them):\n  ${stale.join('\n  ')}`));
  }
  if (offenders.length || stale.length) {
    throw new StepError('take the count from the roster (Rust: net::Roster, SDK: web/src/roster.ts), or allow the hit with a reason in scripts/check-roster.mjs');
  }
  say(green(`roster: no literal party count in ${scanned} source files outside ${SCHEME_FOLDERS.join(', ')} (${ALLOWED.length} allowed)`));
});
