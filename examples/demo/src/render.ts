// Images and figures: the input as ink on paper, what a server received as the raw ring words
// it got, and the scores as bars.

/** Ink colour of digits, as RGB. */
const INK = [30, 27, 75] as const;

/**
 * Paints a `side × side` image of values in [0, 1] (1 = ink) on `canvas`, one canvas pixel per
 * image pixel (CSS scales it up, pixelated).
 */
export function paintDigit(canvas: HTMLCanvasElement, values: ArrayLike<number>, side: number): void {
  paint(canvas, side, (i) => {
    const v = Math.min(1, Math.max(0, values[i] ?? 0));
    return INK.map((c) => Math.round(255 - v * (255 - c))) as [number, number, number];
  });
}

/**
 * Paints what a server received, one 64-bit ring word per pixel, as the grey level of the
 * word's top byte: to anyone without the other pieces, every word is uniformly random.
 */
export function paintWords(canvas: HTMLCanvasElement, words: BigUint64Array, side: number): void {
  paint(canvas, side, (i) => {
    const g = Number((words[i] ?? 0n) >> 56n);
    return [g, g, g];
  });
}

function paint(canvas: HTMLCanvasElement, side: number, rgb: (i: number) => [number, number, number]): void {
  canvas.width = canvas.height = side;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const img = ctx.createImageData(side, side);
  for (let i = 0; i < side * side; i++) {
    img.data.set([...rgb(i), 255], i * 4);
  }
  ctx.putImageData(img, 0, 0);
}

/** One bar per class, scaled between the smallest (or 0) and the largest score. */
export function scoreBars(container: HTMLElement, scores: Float64Array, winner: number): void {
  const lo = Math.min(0, ...scores);
  const hi = Math.max(...scores);
  const span = hi - lo || 1;
  container.replaceChildren(
    ...Array.from(scores, (s, k) => {
      const row = el('div', `bar${k === winner ? ' win' : ''}`);
      const fill = el('span', 'fill');
      fill.style.width = `${(100 * (s - lo)) / span}%`;
      row.append(el('span', 'k', String(k)), el('span', 'track', undefined, fill), el('span', 'v', s.toFixed(2)));
      return row;
    }),
  );
}

/**
 * Fills `list` with `stages` in order: those before `reached` done, `reached` active (or
 * failed; done when it is the last), the rest to do, each with its time when known (or a word
 * in its place).
 */
export function stageList<S extends string>(
  list: HTMLElement,
  stages: readonly { id: S; label: string }[],
  reached: S | undefined,
  times: Partial<Record<S, number | string>> = {},
  failed = false,
): void {
  const at = stages.findIndex((s) => s.id === reached);
  const last = stages.length - 1;
  list.replaceChildren(
    ...stages.map((s, i) => {
      const status = i < at || (i === at && i === last) ? 'done' : i === at ? (failed ? 'failed' : 'active') : 'todo';
      const t = times[s.id];
      const li = el('li', status, undefined, el('span', 'dot'), el('span', 'name', s.label), el('span', 'time', t === undefined ? '' : typeof t === 'string' ? t : ms(t)));
      li.dataset.stage = s.id;
      return li;
    }),
  );
}

/** A new element with a class, text, and children. */
export function el(tag: string, className?: string, text?: string, ...children: Node[]): HTMLElement {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  e.append(...children);
  return e;
}

/** Bytes for people: 1 234 B, 12.3 kB, 14.4 MB. */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 2 : 1)} kB`;
  return `${(n / 1e6).toFixed(n < 1e7 ? 2 : 1)} MB`;
}

/** Milliseconds for people. */
export function ms(t: number): string {
  return t < 10 ? `${t.toFixed(1)} ms` : t < 1000 ? `${Math.round(t)} ms` : `${(t / 1000).toFixed(2)} s`;
}
