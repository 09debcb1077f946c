// The shipped held-out digits (models/data/), for the page's strip of test digits: raw bytes as
// stored, true labels, and the class onnxruntime gives each digit under every model that was
// checked on that set (models/data/*.reference.json), so the page can show whether the private
// answer agrees with the plaintext model's.
import { readFileSync, readdirSync } from 'node:fs';

const MODELS = new URL('../../../models/', import.meta.url);

/** The two test sets, by the name the API takes. */
const SETS = {
  mnist: { file: 'mnist-test-1000', side: 28 },
  digits8: { file: 'digits8-test', side: 8 },
};

const cache = new Map();

/**
 * The first `limit` digits of set `name` (`mnist` or `digits8`): `{ set, side, count,
 * samples: [{ index, label, pixels (base64 of side² bytes), reference: { model: class } }] }`.
 * Returns `undefined` for an unknown set.
 */
export function samples(name, limit) {
  const set = Object.hasOwn(SETS, name) ? SETS[name] : undefined;
  if (!set) return undefined;
  if (!cache.has(name)) cache.set(name, load(set));
  const { pixels, labels, references } = cache.get(name);
  const len = set.side * set.side;
  const n = Math.min(limit, labels.length);
  return {
    set: name,
    side: set.side,
    count: labels.length,
    samples: Array.from({ length: n }, (_, index) => ({
      index,
      label: labels[index],
      pixels: pixels.subarray(index * len, (index + 1) * len).toString('base64'),
      reference: Object.fromEntries(references.map((r) => [r.model, r.argmax[index]])),
    })),
  };
}

function load({ file }) {
  const inputs = `models/data/${file}.u8`;
  const references = readdirSync(new URL('data/', MODELS))
    .filter((f) => f.endsWith('.reference.json'))
    .map((f) => ({ name: f.slice(0, -'.reference.json'.length), ...JSON.parse(readFileSync(new URL(`data/${f}`, MODELS), 'utf8')) }))
    .filter((r) => r.inputs === inputs);
  return {
    pixels: readFileSync(new URL(`data/${file}.u8`, MODELS)),
    labels: [...readFileSync(new URL(`data/${file}.labels.u8`, MODELS))],
    references: references.map(({ name, argmax }) => ({ model: name, argmax })),
  };
}
