// The page: P0 and P1 run here, P2 in a Web Worker (party-worker.js); the three are linked by
// MessageChannels (the SDK's MessagePortTransport) and compute the highest of their bids.
import { MessagePortTransport, Party, init, randomSessionId } from 'ringfence';
import { highestBids } from './program.js';

const show = (id, text) => (document.getElementById(id).textContent = text);
const random32 = () => crypto.getRandomValues(new Uint8Array(32));

try {
  const { module } = await init();
  const bids = [[120, 40, 7], [95, 410, 7], [130, 15, 9]]; // bids[i]: party i's bid per item
  // Pairwise keys: party i shares `next` with i + 1 (its `prev`); `own` is private to each.
  const pair = [random32(), random32(), random32()]; // pair[i]: the key of parties i and i + 1
  const seeds = [0, 1, 2].map((i) => ({ prev: pair[(i + 2) % 3], next: pair[i], own: random32() }));
  const sessionId = randomSessionId();
  const ports = MessagePortTransport.channels(3); // ports[i][j]: party i's end of its link to j

  const worker = new Worker(new URL('./party-worker.js', import.meta.url), { type: 'module' });
  const fromWorker = new Promise((resolve) => (worker.onmessage = (e) => resolve(e.data)));
  worker.postMessage({ ports: ports[2], sessionId, seeds: seeds[2], bids: bids[2] }, [ports[2][0], ports[2][1]]);

  const inPage = [0, 1].map(async (id) => {
    const transport = new MessagePortTransport(ports[id]);
    const party = await Party.join({ id, sessionId, seeds: seeds[id], transport });
    const highest = await highestBids(party, id, bids[id], bids[id].length);
    transport.close();
    return highest;
  });
  const [p0, p1, p2] = await Promise.all([...inPage, fromWorker]);
  worker.terminate();
  if (p2.error) throw new Error(`the worker party failed: ${p2.error}`);

  show('bids', bids.map((b, i) => `P${i}${i === 2 ? ' (worker)' : ''}: ${b.join(', ')}`).join('\n'));
  show('result', `highest bid per item: ${p0.join(', ')}`);
  show('detail', `P0 and P1 in the page, P2 in a ${p2.realm}; all three revealed the same: ${
    [p1, p2.highest].every((r) => r.join() === p0.join())} (${module} module)`);
  document.body.dataset.highest = JSON.stringify(p0);
  document.body.dataset.workerRealm = p2.realm;
  document.body.dataset.state = 'done';
} catch (e) {
  show('result', `failed: ${e.message}`);
  document.body.dataset.state = 'error';
  throw e;
}
