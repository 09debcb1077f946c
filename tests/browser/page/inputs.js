// Inputs the tests generate on both sides, so they need not cross page.evaluate (Node imports
// this file as well as the page).

/** The operands of the WebRTC product test: `n` signed 64-bit values each (BigInts). */
export function productInputs(n) {
  const xs = Array.from({ length: n }, (_, i) => BigInt(i) * 7919n - 1_000_003n);
  const ys = Array.from({ length: n }, (_, i) => (BigInt(i) << 40n) + 12345n);
  return { xs, ys };
}
