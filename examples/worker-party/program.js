// What each of the three parties runs, in the same order: the highest of three sealed bids per
// item. Party `id` holds `bids` (one per item) and learns only the highest bid of each item.
// Shared by the page (P0, P1) and the worker (P2); it uses only the `party` it is given.

/** Returns the revealed highest bid of each of `items` items, as numbers. */
export async function highestBids(party, id, bids, items) {
  const share = (owner) => party.input(owner, owner === id ? BigInt64Array.from(bids, BigInt) : null, items);
  const a = await share(0);
  const b = await share(1);
  const c = await share(2);
  const store = await party.dabits(2 * items); // preprocessing: one daBit per ReLU below
  // max(x, y) = y + relu(x − y), all on secret shares
  const ab = party.add(b, await party.relu(party.sub(a, b), store));
  const abc = party.add(c, await party.relu(party.sub(ab, c), store));
  const highest = await party.reveal(abc);
  party.finish();
  return Array.from(highest, Number);
}
