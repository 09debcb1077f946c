// Party P2 in a dedicated module worker: its share of the work runs off the page's main thread.
// Workers see no import map, so the SDK is imported by its URL (a bundler would resolve
// 'ringfence' here as in the page).
import { MessagePortTransport, Party, init } from '/ringfence/index.js';
import { highestBids } from './program.js';

onmessage = async ({ data: { ports, sessionId, seeds, bids } }) => {
  try {
    await init();
    const transport = new MessagePortTransport(ports); // ports[0], ports[1]: links to P0 and P1
    const party = await Party.join({ id: 2, sessionId, seeds, transport });
    const highest = await highestBids(party, 2, bids, bids.length);
    transport.close();
    postMessage({ highest, realm: self.constructor.name });
  } catch (e) {
    postMessage({ error: `${e.code ?? e.name}: ${e.message}` });
  }
};
