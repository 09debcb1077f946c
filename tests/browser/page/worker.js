// A compute party in a dedicated module worker. The page posts its message ports and session;
// the worker posts back its results, `{ joined }` (joinOnly) or `{ error }`.
import { MessagePortTransport, Party, init, insecureTestSeeds } from '/dist/index.js';
import { describeError, workerProgram } from '/program.js';

onmessage = async ({ data }) => {
  const { ports, sessionId, label, n, own, joinOnly } = data;
  try {
    const info = await init();
    const transport = new MessagePortTransport(ports);
    const party = await Party.join({ id: 2, sessionId, seeds: await insecureTestSeeds(label, 2), transport });
    // The vanished-peer test terminates this worker from here on.
    if (joinOnly) return postMessage({ joined: true });
    const out = await workerProgram(party, 2, n, own);
    transport.close();
    postMessage({ out, realm: self.constructor.name, module: info.module });
  } catch (e) {
    postMessage({ error: describeError(e) });
  }
};
