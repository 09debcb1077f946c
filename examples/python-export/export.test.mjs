// The README's three commands, in order: export the model with Python, inspect it with the
// native binary, serve it with three `ringfence party` servers and classify held-out digits
// (serve.mjs checks the classes against onnxruntime's and exits 1 otherwise). Skipped, with
// the reason, where the Python environment of scripts/models/setup-venv.sh does not exist
// (CI does not make it: ≈ 500 MB of packages from PyPI).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ringfenceBinary } from '../../web/examples/local-deployment.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const python = process.env.PYTHON ?? `${ROOT}.venv/bin/python`;
const skip = existsSync(python) ? false : `no ${python}: run scripts/models/setup-venv.sh (or set PYTHON)`;
const run = (cmd, args) => execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });

test('export_digits.py, ringfence model inspect, serve.mjs', { skip }, () => {
  const exported = run(python, ['examples/python-export/export_digits.py']);
  assert.match(exported, /wrote .*digits\.onnx/);
  const inspected = run(ringfenceBinary(), ['model', 'inspect', 'examples/python-export/out/digits.onnx']);
  assert.match(inspected, /Dense 64->10/);
  assert.match(inspected, /meteor +online \d+ B per party/);
  const served = run(process.execPath, ['examples/python-export/serve.mjs']);
  for (const backend of ['meteor', 'rep3']) assert.match(served, new RegExp(`^${backend}: .*; (\\d+)/\\1 equal onnxruntime`, 'm'));
});
