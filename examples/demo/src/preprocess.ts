// A drawn digit made into what the models were trained on. The pad keeps the pen's path, not
// its pixels, and the path is drawn again at the training data's scale, so the stroke width
// relative to the digit is the same however large the digit was drawn.
import type { SetName } from './catalog';

/** A pen position, in [0, 1] across and down the pad. */
export interface Point {
  readonly x: number;
  readonly y: number;
}

export type Stroke = readonly Point[];

/** Supersampling per output pixel when rasterising, for anti-aliased coverage. */
const OVERSAMPLE = 4;

/**
 * The drawing as stored bytes of set `set` (28×28 in 0..255 for MNIST, 8×8 counts in 0..16
 * for the 8×8 digits), or `undefined` when there is nothing (or only a dot) to classify.
 */
export function preprocess(strokes: readonly Stroke[], set: SetName): Uint8Array | undefined {
  const box = bounds(strokes);
  if (!box || Math.max(box.w, box.h) < 0.03) return undefined;
  return set === 'mnist' ? toMnist(strokes, box) : toDigits8(strokes, box);
}

interface Box {
  readonly cx: number;
  readonly cy: number;
  readonly w: number;
  readonly h: number;
}

/**
 * MNIST's own normalisation: the digit scaled (aspect kept) into a 20×20 box, anti-aliased,
 * then moved so that its centre of mass sits at the centre of the 28×28 image.
 */
function toMnist(strokes: readonly Stroke[], box: Box): Uint8Array {
  const SIDE = 28;
  const FIT = 20;
  const PEN = 2.6; // MNIST strokes are 2–3 pixels wide
  const s = (FIT - PEN) / Math.max(box.w, box.h);
  const place = (dx: number, dy: number) => (p: Point): Point => ({
    x: SIDE / 2 + (p.x - box.cx) * s + dx,
    y: SIDE / 2 + (p.y - box.cy) * s + dy,
  });
  // The shipped test digits' centre of mass is at pixel index 14.0 on average: 14.5 here.
  const CENTRE = 14.5;
  const first = rasterize(strokes, SIDE, place(0, 0), PEN);
  const [cx, cy] = centreOfMass(first, SIDE);
  const moved = rasterize(strokes, SIDE, place(CENTRE - cx, CENTRE - cy), PEN);
  return Uint8Array.from(moved, (c) => Math.round(255 * c));
}

/**
 * The 8×8 digits' normalisation (UCI optdigits, which scikit-learn ships): a 32×32 bitmap
 * with the digit as tall as the bitmap, centred, then the number of inked pixels of each 4×4
 * block (0..16).
 */
function toDigits8(strokes: readonly Stroke[], box: Box): Uint8Array {
  const SIDE = 32;
  const BLOCK = 4;
  const PEN = 4.5; // their pens are thick: whole 4×4 blocks are inked
  const s = (SIDE - PEN) / Math.max(box.h, box.w);
  const place = (p: Point): Point => ({ x: SIDE / 2 + (p.x - box.cx) * s, y: SIDE / 2 + (p.y - box.cy) * s });
  const bitmap = rasterize(strokes, SIDE, place, PEN).map((c) => (c >= 0.5 ? 1 : 0));
  const n = SIDE / BLOCK;
  const out = new Uint8Array(n * n);
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) out[Math.floor(y / BLOCK) * n + Math.floor(x / BLOCK)] += bitmap[y * SIDE + x];
  }
  return out;
}

function bounds(strokes: readonly Stroke[]): Box | undefined {
  const points = strokes.flat();
  if (points.length === 0) return undefined;
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  return { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, w: x1 - x0, h: y1 - y0 };
}

/**
 * Ink coverage in [0, 1] of each pixel of a `side × side` image, the strokes mapped by `place`
 * to pixel coordinates and drawn with a round pen `pen` pixels wide.
 */
function rasterize(strokes: readonly Stroke[], side: number, place: (p: Point) => Point, pen: number): Float64Array {
  const big = side * OVERSAMPLE;
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = big;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) throw new Error('this browser has no 2D canvas');
  ctx.scale(OVERSAMPLE, OVERSAMPLE);
  ctx.strokeStyle = ctx.fillStyle = '#fff';
  ctx.lineWidth = pen;
  ctx.lineCap = ctx.lineJoin = 'round';
  for (const stroke of strokes) {
    const pts = stroke.map(place);
    const [first] = pts;
    if (!first) continue;
    if (pts.length === 1) {
      ctx.beginPath();
      ctx.arc(first.x, first.y, pen / 2, 0, 2 * Math.PI);
      ctx.fill();
      continue;
    }
    ctx.beginPath();
    ctx.moveTo(first.x, first.y);
    for (const p of pts.slice(1)) ctx.lineTo(p.x, p.y);
    ctx.stroke();
  }
  const alpha = ctx.getImageData(0, 0, big, big).data;
  const out = new Float64Array(side * side);
  for (let y = 0; y < big; y++) {
    for (let x = 0; x < big; x++) {
      out[Math.floor(y / OVERSAMPLE) * side + Math.floor(x / OVERSAMPLE)] += alpha[(y * big + x) * 4 + 3] / 255;
    }
  }
  return out.map((v) => v / (OVERSAMPLE * OVERSAMPLE));
}

/** Centre of mass in pixel coordinates (a pixel's centre is at +0.5). */
function centreOfMass(img: Float64Array, side: number): [number, number] {
  let m = 0;
  let sx = 0;
  let sy = 0;
  img.forEach((v, i) => {
    m += v;
    sx += v * ((i % side) + 0.5);
    sy += v * (Math.floor(i / side) + 0.5);
  });
  return m > 0 ? [sx / m, sy / m] : [side / 2, side / 2];
}
