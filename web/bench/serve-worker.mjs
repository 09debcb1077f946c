// One wasm compute party of bench/ops.mjs's `infer` in its own worker thread: joins the relay
// session (Noise links to the two other parties and the client), then serves `requests`
// classifications with the model, posting each `Party.serve` result to the main thread.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { init } from 'ringfence';
import { joinServingParty, shapeFile } from '../examples/local-deployment.mjs';

const { id, module, model, modelFile, requests, ...session } = workerData;
await init({ forceFallback: module === 'nosimd' });
const { party, close } = await joinServingParty({ ...session, id });
// P0, the model owner, serves the ONNX file, P1 and P2 its shape file; the bench asks for scores.
const models = { [model]: { model: readFileSync(id === 0 ? modelFile : shapeFile(modelFile)), output: 'scores' } };
try {
  for (let r = 0; r < requests; r++) parentPort.postMessage({ result: await party.serve({ models, maxBatch: 1 }) });
  party.finish();
} finally {
  close();
}
