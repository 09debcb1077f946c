// One wasm compute party of bench/ops.mjs's `infer` in its own worker thread: joins the relay
// session (Noise links to the two other parties and the client), then serves `requests`
// classifications with the model, posting each `Party.serve` result to the main thread.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { init } from 'ringfence';
import { joinServingParty } from '../examples/local-deployment.mjs';

const { id, module, model, modelFile, requests, ...session } = workerData;
await init({ forceFallback: module === 'nosimd' });
const { party, close } = await joinServingParty({ ...session, id });
const models = { [model]: readFileSync(modelFile) };
try {
  for (let r = 0; r < requests; r++) parentPort.postMessage({ result: await party.serve({ models, maxBatch: 1 }) });
  party.finish();
} finally {
  close();
}
