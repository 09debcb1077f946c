// A small horizontal grouped bar chart in hand-written SVG, for scripts/charts.mjs. Plain
// Node, no dependencies; the output depends only on the arguments (no dates, no randomness),
// so the same data always gives the same bytes.

const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const px = (x) => (Math.round(x * 10) / 10).toString();

/** `x` with 3 significant digits at most, without trailing zeros. */
export function sig3(x) {
  if (x === 0) return '0';
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x))));
  return Number(x.toFixed(Math.min(digits, 6))).toString();
}

/** Seconds as µs, ms or s. */
export function formatSeconds(s) {
  if (s === 0) return '0';
  if (s < 1e-3) return `${sig3(s * 1e6)} µs`;
  if (s < 1) return `${sig3(s * 1e3)} ms`;
  return `${sig3(s)} s`;
}

/** Bytes in SI units (B, kB, MB, GB), as BENCHMARKS.md writes them. */
export function formatBytes(b) {
  const units = ['B', 'kB', 'MB', 'GB'];
  let i = 0;
  while (b >= 1000 && i < units.length - 1) {
    b /= 1000;
    i++;
  }
  return `${sig3(b)} ${units[i]}`;
}

/** Tick values for an axis from `lo` to `hi`: powers of ten on a log axis, else 4–7 round steps up to `hi` or more. */
function ticks(lo, hi, log) {
  if (log) {
    const out = [];
    for (let e = Math.floor(Math.log10(lo)); 10 ** (e - 1) < hi * 0.9999; e++) if (10 ** e >= lo / 1.0001) out.push(10 ** e);
    return out;
  }
  const mag = 10 ** Math.floor(Math.log10(hi / 5));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => Math.ceil(hi / s) <= 7);
  return Array.from({ length: Math.ceil(hi / step * 0.9999) + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

/** Splits `text` into lines of at most `chars` characters, at spaces. */
function wrap(text, chars) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > chars) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * Renders a horizontal grouped bar chart.
 *
 * - `title`, `subtitle`: top lines; `footnotes`: lines under the chart (provenance).
 * - `series`: `[{ key, label, color, pattern? }]` — the legend, in order; `pattern: 'light'`
 *   draws the bar in a lighter tint of `color` with its outline (e.g. setup beside online).
 * - `groups`: `[{ label, bars: [{ series, value, note? }] }]` — one block of bars per group
 *   (a model, an operation), labelled on the left; a bar's value is written at its end, and
 *   `note` after it. Missing values (null) leave a gap labelled "not measured".
 * - `axis`: `{ label, log, format, min? }` — the value axis (log: powers of ten), `format(v)`
 *   the text of a tick and of a bar's value.
 * - `markers`: optional `[{ group, series, value, label }]` — a short vertical line across that
 *   bar at `value` (e.g. a latency floor).
 */
export function barChart({ title, subtitle, series, groups, axis, footnotes = [], markers = [], width = 760 }) {
  const left = 118;
  const right = 118; // room for the value written after the longest bar
  const barH = 16;
  const barGap = 3;
  const groupGap = 14;
  const subLines = subtitle ? wrap(subtitle, Math.floor((width - 32) / 6.4)) : [];
  const footLines = footnotes.flatMap((f) => wrap(f, Math.floor((width - 32) / 5.6)));
  const top = 52 + subLines.length * 16;
  const legendH = 26;
  const plotW = width - left - right;
  const values = groups.flatMap((g) => g.bars.map((b) => b.value)).filter((v) => v != null && v > 0);
  const min = axis.log ? (axis.min ?? 10 ** Math.floor(Math.log10(Math.min(...values)))) : 0;
  const tickValues = ticks(min, Math.max(...values), axis.log);
  const hi = tickValues.at(-1);
  const scale = (v) =>
    axis.log ? ((Math.log10(v) - Math.log10(min)) / (Math.log10(hi) - Math.log10(min))) * plotW : (v / hi) * plotW;

  const plotTop = top + legendH;
  let y = plotTop;
  const rows = [];
  for (const [gi, g] of groups.entries()) {
    const gTop = y;
    for (const b of g.bars) {
      rows.push({ g, gi, b, y });
      y += barH + barGap;
    }
    rows.push({ groupLabel: g.label, y: (gTop + y - barGap) / 2, gi });
    y += groupGap - barGap;
  }
  const plotBottom = y - groupGap + 6;
  const height = plotBottom + 40 + footLines.length * 15 + 8;

  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${px(height)}" viewBox="0 0 ${width} ${px(height)}" font-family="${FONT}" font-size="12" role="img" aria-label="${esc(title)}">`);
  out.push(`<title>${esc(title)}</title>`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  out.push(`<text x="16" y="26" font-size="16" font-weight="600" fill="#111">${esc(title)}</text>`);
  for (const [i, l] of subLines.entries()) out.push(`<text x="16" y="${46 + i * 16}" font-size="12.5" fill="#444">${esc(l)}</text>`);

  // Legend.
  let lx = left;
  for (const s of series) {
    out.push(swatch(lx, top + 2, s));
    out.push(`<text x="${lx + 18}" y="${top + 12}" fill="#222">${esc(s.label)}</text>`);
    lx += 34 + s.label.length * 7;
  }

  // Grid and ticks.
  for (const t of tickValues) {
    const x = left + scale(t);
    out.push(`<line x1="${px(x)}" y1="${plotTop - 4}" x2="${px(x)}" y2="${px(plotBottom)}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${px(x)}" y="${px(plotBottom + 15)}" text-anchor="middle" fill="#555">${esc(axis.format(t))}</text>`);
  }
  out.push(`<line x1="${left}" y1="${plotTop - 4}" x2="${left}" y2="${px(plotBottom)}" stroke="#888"/>`);
  out.push(`<text x="${left + plotW / 2}" y="${px(plotBottom + 32)}" text-anchor="middle" fill="#333">${esc(axis.label)}</text>`);

  // Bars, values and group labels.
  const byKey = new Map(series.map((s) => [s.key, s]));
  for (const r of rows) {
    if (r.groupLabel !== undefined) {
      out.push(`<text x="${left - 10}" y="${px(r.y + 4)}" text-anchor="end" font-size="13" font-weight="600" fill="#222">${esc(r.groupLabel)}</text>`);
      continue;
    }
    const s = byKey.get(r.b.series);
    if (r.b.value == null) {
      out.push(`<text x="${left + 6}" y="${px(r.y + barH - 4)}" fill="#999">not measured</text>`);
      continue;
    }
    const w = Math.max(1, scale(Math.max(r.b.value, min)));
    out.push(bar(left, r.y, w, barH, s));
    const text = r.b.note ? `${axis.format(r.b.value)} ${r.b.note}` : axis.format(r.b.value);
    out.push(`<text x="${px(left + w + 5)}" y="${px(r.y + barH - 4)}" fill="#222">${esc(text)}</text>`);
  }
  for (const m of markers) {
    const r = rows.find((r) => r.g?.label === m.group && r.b.series === m.series);
    if (!r) continue;
    const x = left + scale(m.value);
    out.push(`<line x1="${px(x)}" y1="${px(r.y - 2)}" x2="${px(x)}" y2="${px(r.y + barH + 2)}" stroke="#111" stroke-width="2"><title>${esc(m.label)}</title></line>`);
  }

  for (const [i, f] of footLines.entries()) {
    out.push(`<text x="16" y="${px(plotBottom + 52 + i * 15)}" font-size="11" fill="#666">${esc(f)}</text>`);
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function bar(x, y, w, h, s) {
  return s.pattern === 'light'
    ? `<rect x="${px(x)}" y="${px(y)}" width="${px(w)}" height="${h}" fill="${s.color}" fill-opacity="0.28" stroke="${s.color}" stroke-width="1"/>`
    : `<rect x="${px(x)}" y="${px(y)}" width="${px(w)}" height="${h}" fill="${s.color}"/>`;
}

function swatch(x, y, s) {
  return bar(x, y, 12, 12, s);
}
