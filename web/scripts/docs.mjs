#!/usr/bin/env node
// Builds the API reference into web/docs-api/ with TypeDoc: `npm run docs -w web`.
//
// TypeDoc drives the TypeScript 5 JS API, which TypeScript 7 (the compiler that builds web/) does
// not ship, so TypeDoc and TypeScript 5.9 live in their own pinned tool project,
// web/tools/typedoc/ (installed here with `npm ci` when missing). typedoc.json turns every
// warning into an error, including an exported symbol without a doc comment, so
// `npm test` (which runs this script) fails on undocumented exports.
//
//   node scripts/docs.mjs [--check]    --check: build into a temporary directory, keep nothing
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TOOL = join(WEB, 'tools', 'typedoc');
const say = (m) => process.stderr.write(`${m}\n`);

function run(cmd, args, cwd) {
  say(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd, stdio: 'inherit' });
  if (r.status !== 0) {
    say(`docs: \`${cmd} ${args.join(' ')}\` failed (${r.error?.message ?? `status ${r.status ?? r.signal}`})`);
    process.exit(1);
  }
}

const typedoc = join(TOOL, 'node_modules', 'typedoc', 'bin', 'typedoc');
if (!existsSync(typedoc)) {
  say('TypeDoc (pinned in web/tools/typedoc) is not installed: installing it');
  run('npm', ['ci', '--no-audit', '--no-fund'], TOOL);
}

const check = process.argv.includes('--check');
const out = check ? mkdtempSync(join(tmpdir(), 'ringfence-docs-')) : join(WEB, 'docs-api');
try {
  run(process.execPath, [typedoc, '--options', 'typedoc.json', '--out', out], WEB);
} finally {
  if (check) rmSync(out, { recursive: true, force: true });
}
say(check ? 'API reference builds without warnings.' : `API reference: ${out}/index.html`);
