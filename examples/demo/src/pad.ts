// The drawing pad: pointer events (mouse, pen and touch alike) recorded as strokes in [0, 1]
// pad coordinates, drawn at whatever size the layout gives the canvas.
import type { Point, Stroke } from './preprocess';

export class DrawingPad {
  readonly #canvas: HTMLCanvasElement;
  readonly #onChange: (strokes: readonly Stroke[]) => void;
  #strokes: Point[][] = [];
  #drawing: number | undefined;

  constructor(canvas: HTMLCanvasElement, onChange: (strokes: readonly Stroke[]) => void) {
    this.#canvas = canvas;
    this.#onChange = onChange;
    canvas.addEventListener('pointerdown', (e) => this.#down(e));
    canvas.addEventListener('pointermove', (e) => this.#move(e));
    canvas.addEventListener('pointerup', (e) => this.#up(e));
    canvas.addEventListener('pointercancel', (e) => this.#up(e));
    // The canvas is sized by CSS; its backing store follows, at the screen's pixel density.
    new ResizeObserver(() => this.#redraw()).observe(canvas);
  }

  get strokes(): readonly Stroke[] {
    return this.#strokes;
  }

  clear(): void {
    this.#strokes = [];
    this.#redraw();
    this.#onChange(this.#strokes);
  }

  #at(e: PointerEvent): Point {
    const r = this.#canvas.getBoundingClientRect();
    const clamp = (v: number) => Math.min(1, Math.max(0, v));
    return { x: clamp((e.clientX - r.left) / r.width), y: clamp((e.clientY - r.top) / r.height) };
  }

  #down(e: PointerEvent): void {
    if (this.#drawing !== undefined || (e.pointerType === 'mouse' && e.button !== 0)) return;
    e.preventDefault();
    this.#canvas.setPointerCapture(e.pointerId);
    this.#drawing = e.pointerId;
    this.#strokes.push([this.#at(e)]);
    this.#redraw();
  }

  #move(e: PointerEvent): void {
    if (e.pointerId !== this.#drawing) return;
    e.preventDefault();
    const stroke = this.#strokes[this.#strokes.length - 1];
    // Coalesced events keep fast strokes smooth where the browser batches pointer moves.
    const events = typeof e.getCoalescedEvents === 'function' ? e.getCoalescedEvents() : [];
    for (const ev of events.length ? events : [e]) stroke?.push(this.#at(ev));
    this.#redraw();
  }

  #up(e: PointerEvent): void {
    if (e.pointerId !== this.#drawing) return;
    this.#drawing = undefined;
    this.#onChange(this.#strokes);
  }

  #redraw(): void {
    const c = this.#canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.round(c.clientWidth * dpr);
    const h = Math.round(c.clientHeight * dpr);
    if (w === 0 || h === 0) return;
    if (c.width !== w || c.height !== h) [c.width, c.height] = [w, h];
    const ctx = c.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, w, h);
    ctx.strokeStyle = ctx.fillStyle = getComputedStyle(c).color;
    ctx.lineWidth = 0.07 * w;
    ctx.lineCap = ctx.lineJoin = 'round';
    for (const stroke of this.#strokes) {
      const [first, ...rest] = stroke;
      if (!first) continue;
      ctx.beginPath();
      if (rest.length === 0) {
        ctx.arc(first.x * w, first.y * h, ctx.lineWidth / 2, 0, 2 * Math.PI);
        ctx.fill();
        continue;
      }
      ctx.moveTo(first.x * w, first.y * h);
      for (const p of rest) ctx.lineTo(p.x * w, p.y * h);
      ctx.stroke();
    }
  }
}
