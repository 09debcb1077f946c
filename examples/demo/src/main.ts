// The page: the choices, the digit (picked or drawn), and one private classification at a time
// with its stages, answer, figures and what each server received.
import { init, type ClientStage } from 'ringfence';
import { getSamples, getServersState, type PartyFigures, type Sample, type SampleSet, type ServersState } from './api';
import {
  BACKENDS, DEPLOYMENTS, MODELS, OUTPUTS, PAGE_PARTY, ROLES, SETS, modelInfo, type Backend, type DeploymentKind, type Output, type SetName,
} from './catalog';
import { DrawingPad } from './pad';
import { preprocess } from './preprocess';
import { classifyPrivately, describeError, type PrivateRun } from './private';
import { bytes, el, ms, paintDigit, paintWords, scoreBars, stageList } from './render';
import { PartyTabs } from './tabs';
import { combinedKind, windowName } from './tabs-protocol';

/** Test digits in the strip. */
const STRIP = 40;

const STAGES: readonly { id: ClientStage; label: string }[] = [
  { id: 'connecting', label: 'Connecting' },
  { id: 'request', label: 'Request' },
  { id: 'setup', label: 'Setup' },
  { id: 'online', label: 'Online' },
  { id: 'done', label: 'Done' },
];

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e as T;
};

const state = {
  model: 'lenet',
  backend: 'meteor' as Backend,
  output: 'scores' as Output,
  deployment: 'servers' as DeploymentKind,
  source: 'pick' as 'pick' | 'draw',
  picked: { mnist: 0, digits8: 0 } as Record<SetName, number>,
  sets: new Map<SetName, SampleSet>(),
  running: false,
  ready: false,
  /** The "3 servers" mesh, as last asked. */
  shelf: undefined as ServersState | undefined,
};

/** The digit to classify: stored bytes of the model's set, and where they came from. */
interface Digit {
  readonly set: SetName;
  readonly pixels: Uint8Array;
  readonly sample: Sample | undefined;
}

// Without BroadcastChannel the page cannot talk to party tabs: the deployment is not offered.
const tabs = typeof BroadcastChannel === 'function' ? new PartyTabs(() => renderTabs()) : undefined;

/**
 * Narrow or touch-first screens: three party windows beside the page do not fit, and phones
 * open pop-ups as tabs that cannot be watched side by side.
 */
const SMALL_SCREEN = matchMedia('(max-width: 759px), (pointer: coarse)');

/** What the "three tabs" deployment needs and this browser lacks, in words ('' when nothing). */
function tabsMissing(): string {
  const missing = [
    typeof RTCPeerConnection === 'function' ? '' : 'WebRTC',
    tabs ? '' : 'BroadcastChannel',
    SMALL_SCREEN.matches ? 'a wide screen and a mouse, for three windows beside this one' : '',
  ];
  return missing.filter(Boolean).join(' and ');
}

const tabsPossible = (): boolean => tabsMissing() === '';

const pad = new DrawingPad($<HTMLCanvasElement>('pad'), () => {
  state.source = 'draw';
  refresh();
});

function currentDigit(): Digit | undefined {
  const set = modelInfo(state.model).set;
  if (state.source === 'draw') {
    const pixels = preprocess(pad.strokes, set);
    return pixels && { set, pixels, sample: undefined };
  }
  const sample = state.sets.get(set)?.samples[state.picked[set]];
  return sample && { set, pixels: sample.pixels, sample };
}

// ---- choices -----------------------------------------------------------------------------

/**
 * A radio group of `options` in `container`. Its inputs are made once (again only when the
 * options offered change) and updated in place: a re-made input would take the focus away from
 * someone moving through the group with the arrow keys.
 */
function choices<T extends string>(
  container: HTMLElement,
  name: string,
  options: readonly { id: T; label: string; blurb: string; disabled?: boolean }[],
  selected: T,
  pick: (id: T) => void,
): void {
  const labels = () => [...container.children] as HTMLElement[];
  const offered = options.map((o) => o.id).join(' ');
  if (labels().map((l) => l.dataset.value).join(' ') !== offered) {
    container.replaceChildren(
      ...options.map((o) => {
        const input = document.createElement('input');
        Object.assign(input, { type: 'radio', name, value: o.id });
        input.addEventListener('change', () => pick(o.id));
        const label = el('label', 'choice', undefined, input, el('span', 't', o.label), el('small', undefined, o.blurb));
        label.dataset.value = o.id;
        return label;
      }),
    );
  }
  labels().forEach((label, i) => {
    const o = options[i];
    const input = label.querySelector('input');
    const blurb = label.querySelector('small');
    if (!o || !input || !blurb) return;
    input.checked = o.id === selected;
    input.disabled = !!o.disabled || state.running;
    label.classList.toggle('off', !!o.disabled);
    blurb.textContent = o.blurb;
  });
}

function renderChoices(): void {
  const m = modelInfo(state.model);
  if (!m.backends.includes(state.backend)) state.backend = m.backends[0] ?? 'rep3';
  if (state.backend === 'meteor') state.output = 'scores';
  choices($('models'), 'model', MODELS, state.model, (id) => {
    state.model = id;
    refresh();
  });
  choices(
    $('backends'),
    'backend',
    BACKENDS.map((b) => ({ ...b, disabled: !m.backends.includes(b.id), blurb: m.backends.includes(b.id) ? b.blurb : `not for ${m.label.toLowerCase()}` })),
    state.backend,
    (id) => {
      state.backend = id;
      refresh();
    },
  );
  choices(
    $('outputs'),
    'output',
    OUTPUTS.map((o) => ({ ...o, disabled: o.id === 'class' && state.backend === 'meteor' })),
    state.output,
    (id) => {
      state.output = id;
      refresh();
    },
  );
  const tabsOk = tabsPossible();
  if (!tabsOk && state.deployment === 'tabs' && !state.running) state.deployment = 'servers';
  const unavailable = $('tabs-unavailable');
  unavailable.hidden = tabsOk;
  unavailable.textContent = tabsOk ? '' : `“Three tabs (WebRTC)” is not offered here: it needs ${tabsMissing()}.`;
  choices(
    $('deployments'),
    'deployment',
    DEPLOYMENTS.filter((d) => d.id !== 'tabs' || tabsOk).map((d) => ({ ...d, disabled: !d.available })),
    state.deployment,
    (id) => {
      state.deployment = id;
      refresh();
      watchShelf();
    },
  );
}

// ---- the servers' mesh -------------------------------------------------------------------

/** How often the page asks about the servers' shelves while they are filling. */
const SHELF_POLL_MS = 1500;

let shelfTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * Asks the "3 servers" deployment how many setup runs its mesh has ready, and asks again while
 * the shelves are filling (after start-up, and after a classification took a run).
 */
function watchShelf(): void {
  clearTimeout(shelfTimer);
  if (state.deployment !== 'servers') return renderShelf();
  getServersState()
    .then((s) => {
      state.shelf = s;
      renderShelf();
      const filling = s.mesh !== 'up' || s.models.length === 0 || s.models.some((m) => m.ready < m.target);
      if (filling) shelfTimer = setTimeout(watchShelf, SHELF_POLL_MS);
    })
    // A nicety: without it the page works as before.
    .catch(() => {
      state.shelf = undefined;
      renderShelf();
    });
}

/** A backend's name in running text. */
function backendLabel(b: Backend): string {
  return BACKENDS.find((x) => x.id === b)?.label ?? b;
}

/** The mesh's line under the deployments: runs made ahead per model, the chosen one in bold. */
function renderShelf(): void {
  const line = $('mesh-state');
  const s = state.shelf;
  line.hidden = state.deployment !== 'servers' || !s;
  if (!s || line.hidden) return;
  line.dataset.mesh = s.mesh;
  if (s.mesh === 'down') {
    line.textContent = 'The servers\' mesh is down: each session makes its own setup until they link up again.';
    return;
  }
  const backend = state.backend;
  const runs = MODELS.filter((m) => m.backends.includes(backend)).flatMap((m) => {
    const shelf = s.models.find((x) => x.model === m.id && x.backend === backend);
    if (!shelf) return [];
    const text = `${m.label} ${shelf.ready}/${shelf.target}`;
    return [m.id === state.model ? el('b', undefined, text) : document.createTextNode(text)];
  });
  if (runs.length === 0) {
    line.textContent =
      backend === 'mal3'
        ? 'mal3 runs are not made ahead: each session makes and checks its own setup.'
        : `The servers are linking up to make ${backendLabel(backend)} setup runs ahead of demand…`;
    return;
  }
  line.replaceChildren(
    document.createTextNode(`${backendLabel(backend)} setup runs made ahead by the servers' mesh: `),
    ...runs.flatMap((r, i) => (i === 0 ? [r] : [document.createTextNode(' · '), r])),
  );
}

/** The party tabs' card, shown for the "three tabs" deployment: which are open, links to the rest. */
function renderTabs(): void {
  $('tabs-card').hidden = state.deployment !== 'tabs' || !tabs;
  if (!tabs) return;
  $('party-tabs').replaceChildren(
    ...[0, 1, 2].map((p) => {
      const open = tabs.isOpen(p);
      const li = el('li', open ? 'open' : 'closed', undefined, el('span', 'dot'), el('b', undefined, `P${p}`), el('small', undefined, ROLES[p]));
      li.dataset.party = String(p);
      if (open) {
        li.append(el('span', 'state', 'open'));
      } else {
        // A window of its own when the browser lets the page open one; a link it follows into
        // a new tab when it does not.
        const a = el('a', 'state', 'Open');
        a.setAttribute('href', tabs.url(p));
        a.setAttribute('target', windowName(tabs.room, p));
        a.addEventListener('click', (e) => {
          if (tabs.open(p)) e.preventDefault();
        });
        li.append(a);
      }
      return li;
    }),
  );
  const blocked = tabs.blocked;
  const names = blocked.map((p) => `P${p}`).join(' and ');
  $('tabs-blocked').hidden = blocked.length === 0;
  $('tabs-blocked').textContent =
    (blocked.length === 3
      ? 'This browser blocked the party windows: allow pop-ups for this page, or open each party with its Open link above. '
      : `Browsers let a page open one window per click: open ${names} with ${blocked.length === 1 ? 'its' : 'their'} Open link${blocked.length === 1 ? '' : 's'} above. `) +
    'The classification starts as soon as all three are open.';
}

// ---- the digit ---------------------------------------------------------------------------

function renderStrip(): void {
  const set = modelInfo(state.model).set;
  const info = SETS[set];
  const data = state.sets.get(set);
  $('pick-hint').textContent = data
    ? `${info.caption}: ${data.samples.length} of the ${data.count} held-out digits the models never saw in training.`
    : 'Loading the test digits…';
  const strip = $('strip');
  if (!data) return strip.replaceChildren();
  if (strip.dataset.set !== set) {
    strip.dataset.set = set;
    strip.replaceChildren(
      ...data.samples.map((s) => {
        const canvas = document.createElement('canvas');
        paintDigit(canvas, Array.from(s.pixels, (p) => p / info.max), info.side);
        const b = el('button', 'thumb', undefined, canvas, el('span', 'lbl', String(s.label)));
        Object.assign(b, { type: 'button', title: `test digit #${s.index}, a ${s.label}` });
        b.setAttribute('role', 'option');
        b.setAttribute('aria-label', `Test digit #${s.index}, a ${s.label}`);
        b.dataset.index = String(s.index);
        b.addEventListener('click', () => pickSample(set, s.index));
        return b;
      }),
    );
  }
  for (const b of strip.querySelectorAll<HTMLButtonElement>('.thumb')) {
    const current = Number(b.dataset.index) === state.picked[set];
    b.setAttribute('aria-selected', String(current && state.source === 'pick'));
    // Roving focus: the strip is one Tab stop (at the picked digit); the arrow keys move in it.
    b.tabIndex = current ? 0 : -1;
    b.disabled = state.running;
  }
}

function pickSample(set: SetName, index: number): void {
  state.picked[set] = index;
  state.source = 'pick';
  refresh();
}

/** Rows of the strip's grid (`.strip` in style.css): its digits run down, then across. */
const STRIP_ROWS = 2;

/** Arrow keys, Home and End in the strip: the digit in focus is the one picked. */
function stripKeys(e: KeyboardEvent): void {
  const thumbs = [...$('strip').querySelectorAll<HTMLButtonElement>('.thumb')];
  const at = thumbs.indexOf(e.target as HTMLButtonElement);
  const step: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, ArrowRight: STRIP_ROWS, ArrowLeft: -STRIP_ROWS };
  const to = e.key === 'Home' ? 0 : e.key === 'End' ? thumbs.length - 1 : step[e.key] === undefined ? undefined : at + (step[e.key] ?? 0);
  if (at < 0 || to === undefined) return;
  e.preventDefault();
  const next = thumbs[Math.max(0, Math.min(thumbs.length - 1, to))];
  if (!next || next.disabled) return;
  pickSample(modelInfo(state.model).set, Number(next.dataset.index));
  next.focus();
  next.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

const SOURCES = ['pick', 'draw'] as const;

function showTab(which: 'pick' | 'draw'): void {
  for (const t of SOURCES) {
    const tab = $(`tab-${t}`);
    tab.setAttribute('aria-selected', String(t === which));
    tab.tabIndex = t === which ? 0 : -1;
    $(`pane-${t}`).hidden = t !== which;
  }
  state.source = which;
  refresh();
}

/** The tab list's arrow keys (a tab list is one Tab stop): the tab in focus is shown. */
function tabKeys(e: KeyboardEvent): void {
  const at = SOURCES.findIndex((t) => $(`tab-${t}`) === e.target);
  const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: SOURCES.length - 1 }[e.key];
  if (at < 0 || to === undefined) return;
  e.preventDefault();
  const which = SOURCES[(to + SOURCES.length) % SOURCES.length] ?? 'pick';
  showTab(which);
  $(`tab-${which}`).focus();
}

// ---- state → page ------------------------------------------------------------------------

function refresh(): void {
  renderChoices();
  renderStrip();
  const digit = currentDigit();
  const button = $<HTMLButtonElement>('classify');
  // Not `disabled` while a classification runs: that would drop the keyboard focus to the page.
  button.disabled = !state.ready || !digit;
  button.setAttribute('aria-disabled', String(state.running));
  button.title = digit ? '' : state.source === 'draw' ? 'Draw a digit first' : 'Pick a test digit first';
  $<HTMLButtonElement>('clear').disabled = state.running;
  // The last answer stays in place, dimmed, while the next one runs (the page does not jump),
  // and, marked out of date, once the digit or an option differs from what it answered.
  const outdated = shownFor !== undefined && shownFor !== inputKey(digit);
  $('outcome').classList.toggle('stale', state.running || outdated);
  $('outcome').dataset.stale = String(outdated);
  $('stale-note').hidden = state.running || !outdated;
  renderPreview();
  renderTabs();
  renderShelf();
  renderSnippet();
}

/** What the shown result answered: the digit and the options, as {@link inputKey} gives them. */
let shownFor: string | undefined;

/** The digit and every option, as one string: a result whose key differs is out of date. */
function inputKey(digit: Digit | undefined): string {
  return JSON.stringify([state.model, state.backend, state.output, state.deployment, digit?.set, digit && Array.from(digit.pixels)]);
}

/** The "use this in your app" card: the SDK calls behind this page's classification, with its options. */
function renderSnippet(): void {
  const options = `{ backend: '${state.backend}'${state.output === 'class' ? `, output: 'class'` : ''} }`;
  $('snippet').textContent = [
    `import { init, Client, generateNoiseKeypair } from 'ringfence';`,
    `await init();`,
    `const keypair = generateNoiseKeypair(); // its public key goes to your backend, which returns the token`,
    `const client = await Client.connect({ relay, webTransport, session, parties, deployment, token, keypair });`,
    `const { labels, scores } = await client.classify('${state.model}', input, ${options});`,
  ].join('\n');
}

/** The drawing as the chosen model will get it, beside the pad. */
function renderPreview(): void {
  const set = modelInfo(state.model).set;
  const info = SETS[set];
  const pixels = preprocess(pad.strokes, set) ?? new Uint8Array(info.side * info.side);
  paintDigit($<HTMLCanvasElement>('pad-preview'), Array.from(pixels, (p) => p / info.max), info.side);
  $('pad-preview-caption').textContent = `what ${modelInfo(state.model).label} gets: ${info.side}×${info.side}`;
}

function renderStages(reached: ClientStage | undefined, times: Partial<Record<ClientStage, number | string>> = {}, failed = false): void {
  stageList($('stages'), STAGES, reached, times, failed);
}

/**
 * Whether the servers made the session's setup ahead of demand (all of them took it from their
 * mesh's shelf), and what that cost them when they said (the most any one of them spent and
 * sent): `{ cost }`, or `undefined` when the session made its own.
 */
function madeAhead(parties: readonly PartyFigures[] | undefined): { cost?: { ms: number; bytes: number } } | undefined {
  if (!parties?.length || !parties.every((p) => p.stocked)) return undefined;
  const made = parties.flatMap((p) => (p.madeAhead ? [p.madeAhead] : []));
  if (made.length < parties.length) return {};
  return { cost: { ms: Math.max(...made.map((m) => m.ms)), bytes: Math.max(...made.map((m) => m.bytes)) } };
}

/** Counts classifications: the late figures of one must not land on a later one's page. */
let runs = 0;

/** A classification as shown: what ran, and how long the user waited for its answer. */
interface Shown {
  readonly digit: Digit;
  readonly model: string;
  readonly backend: Backend;
  readonly r: PrivateRun;
  /** From the click to the answer on the page, on the page's clock, in milliseconds. */
  readonly waitedMs: number;
}

async function run(): Promise<void> {
  // The user's wait starts here, not when the SDK starts: the total shown is measured from it.
  const startedAt = performance.now();
  const digit = currentDigit();
  if (!digit || state.running || !state.ready) return;
  const m = modelInfo(state.model);
  const info = SETS[digit.set];
  const { backend } = state;
  // Before anything else: browsers open pop-ups only while handling the click.
  if (state.deployment === 'tabs') tabs?.openMissing();
  const id = ++runs;
  const key = inputKey(digit);
  state.running = true;
  document.body.dataset.state = 'running';
  delete document.body.dataset.figures;
  $('announce').textContent = 'Classifying privately…';
  refresh();
  $('error').hidden = true;
  let reached: ClientStage | undefined;
  renderStages(undefined);
  const progress = $('progress');
  let outcome: 'done' | 'error' = 'error';
  try {
    const r = await classifyPrivately({
      model: m.id,
      backend,
      output: state.output,
      deployment: state.deployment,
      input: Float32Array.from(digit.pixels, (p) => p * info.scale),
      startedAt,
      onStage: (stage) => {
        progress.hidden = true;
        renderStages((reached = stage));
      },
      onStep: (step) => {
        progress.textContent = step;
        progress.hidden = false;
      },
      ...(tabs ? { tabs } : {}),
    });
    // The answer first, as soon as it exists; the servers' own figures follow when they come.
    showAnswer(digit, m.id, backend, r);
    const shown: Shown = { digit, model: m.id, backend, r, waitedMs: performance.now() - startedAt };
    shownFor = key;
    $('announce').textContent = `Classified as ${r.result.labels[0] ?? '?'} in ${ms(shown.waitedMs)} (${frontName(r)}).`;
    showFigures(shown, 'pending');
    document.body.dataset.figures = 'pending';
    void r.parties.then((parties) => {
      if (id !== runs) return;
      showFigures(shown, parties);
      document.body.dataset.figures = 'ready';
    });
    outcome = 'done';
  } catch (e) {
    renderStages(reached, {}, true);
    showError(e);
    $('announce').textContent = '';
    $('outcome').hidden = true;
    $('placeholder').hidden = false;
    shownFor = undefined;
  } finally {
    progress.hidden = true;
    state.running = false;
    document.body.dataset.state = outcome;
    refresh();
    // The servers' mesh makes a run again for the one this classification took.
    if (state.deployment === 'servers') watchShelf();
  }
}

/** An error in the page's alert: what went wrong, the detail, and what to do next. */
function showError(e: unknown): void {
  const { title, detail, next } = describeError(e);
  $('error').replaceChildren(
    el('strong', undefined, title),
    el('span', undefined, detail),
    el('p', 'next', undefined, el('b', undefined, 'What to do: '), document.createTextNode(next)),
  );
  $('error').hidden = false;
}

/** The answer and what each party received: everything the client itself knows. */
function showAnswer(digit: Digit, model: string, backend: Backend, r: PrivateRun): void {
  const info = SETS[digit.set];
  const m = modelInfo(model);
  const { result } = r;
  // The model's own label of the class (the digit itself for every shipped model).
  const cls = result.labels[0] ?? -1;
  $('placeholder').hidden = true;
  $('outcome').hidden = false;

  paintDigit($<HTMLCanvasElement>('out-input'), Array.from(digit.pixels, (p) => p / info.max), info.side);
  $('out-input-caption').textContent = digit.sample
    ? `Test digit #${digit.sample.index} (a ${digit.sample.label}), ${info.side}×${info.side}`
    : `Your drawing, as ${m.label} takes it: ${info.side}×${info.side}`;

  const answer = $('out-class');
  answer.textContent = String(cls);
  answer.dataset.class = String(cls);
  const reference = digit.sample?.reference[m.id];
  const check = $('out-check');
  check.className = 'caption';
  if (reference === undefined) {
    check.textContent = `${m.label} on ${backendLabel(backend)}. Only this tab knows it.`;
  } else {
    const same = reference === cls;
    check.classList.add(same ? 'ok' : 'warn');
    check.textContent = same
      ? `Same as the plaintext model (onnxruntime says ${reference}).`
      : `The plaintext model (onnxruntime) says ${reference}.`;
  }

  const scores = $('out-scores');
  if (result.scores) {
    scoreBars(scores, result.scores, result.classes[0] ?? -1);
  } else {
    scores.replaceChildren(
      el('p', 'note', 'Only the class was revealed: the servers found the largest score under the sharing, so no score exists in the clear anywhere, not even here.'),
    );
  }

  const n = info.side * info.side;
  $('out-servers').replaceChildren(
    ...result.sent.map((words, i) => {
      const canvas = document.createElement('canvas');
      canvas.className = 'pixels noise';
      paintWords(canvas, words.subarray(0, n), info.side);
      return el(
        'figure',
        'server',
        undefined,
        canvas,
        el('figcaption', undefined, undefined, el('b', undefined, partyName(r, i)), el('span', undefined, received(words, backend))),
      );
    }),
  );
  showLinks(r);
}

function partyName(r: PrivateRun, i: number): string {
  return r.tabs ? `P${i}'s tab` : r.pageParty !== undefined && i === PAGE_PARTY ? `P${i}: this tab` : `Server P${i}`;
}

/**
 * The stages, times and bytes of a shown classification, with the server parties' own figures
 * once they came (`'pending'` until then; `undefined`: the deployment gives none).
 */
function showFigures({ r, backend, waitedMs }: Shown, parties: readonly PartyFigures[] | undefined | 'pending'): void {
  const { result } = r;
  const t = result.timings;
  const pending = parties === 'pending';
  const reported = pending ? undefined : parties;
  const ahead = madeAhead(reported);
  // What the SDK's stages do not cover: between them, and drawing the answer on this page.
  const rest = Math.max(0, waitedMs - (r.connectMs + t.request + t.setup + t.online));
  renderStages('done', { connecting: r.connectMs, request: t.request, setup: ahead ? 'made ahead' : t.setup, online: t.online, done: waitedMs });
  const setup = $('stages').querySelector<HTMLElement>('[data-stage="setup"]');
  if (setup && ahead) {
    setup.dataset.ahead = 'true';
    const own = backend === 'meteor' ? `only sent the input mask (${ms(t.setup)})` : 'had no setup of its own';
    setup.title = `Made ahead of demand by the servers' mesh; this session ${own}`;
  }
  const where = r.tabs ? 'tabs' : r.pageParty ? 'page-party' : 'servers';
  $('out-explain').replaceChildren(...explanation(backend, where, !!ahead).map((p) => el('p', undefined, p)));

  const connecting = r.tabs
    ? 'from the click: the party tabs opened, made keys and linked up; this tab\'s Noise handshakes'
    : 'from the click: a session from the demo server, Noise handshakes';
  table($('out-times'), ['', 'time'], [
    { name: 'Connecting', note: connecting, cells: [ms(r.connectMs)] },
    { name: 'Request', note: 'the servers check they got the same request', cells: [ms(t.request)] },
    ahead
      ? {
          row: 'setup',
          ahead: true,
          name: 'Setup',
          note:
            `made ahead by the servers' mesh, before you clicked` +
            (ahead.cost ? `: ${ms(ahead.cost.ms)}, up to ${bytes(ahead.cost.bytes)} sent per server` : '') +
            `; this session only sent your input mask (${ms(t.setup)})`,
          cells: ['made ahead'],
        }
      : { row: 'setup', name: 'Setup', note: 'weights shared, masks made: before your digit is used', cells: [ms(t.setup)] },
    { name: 'Online', note: 'your hidden digit in, pieces of the answer out', cells: [ms(t.online)] },
    { name: 'This page', note: 'between those stages, and drawing the answer', cells: [ms(rest)] },
    { row: 'total', name: 'Total', note: 'what you waited: from the click to the answer on this page', cells: [ms(waitedMs)] },
  ]);
  const total = $('out-times').querySelector<HTMLElement>('tr[data-row="total"]');
  if (total) total.dataset.ms = waitedMs.toFixed(1);

  const rows: (Row & { id: number })[] = (reported ?? []).map((p) => ({
    id: p.id,
    name: `Server P${p.id}`,
    note: !p.ok
      ? p.message
      : `${p.rounds ?? '?'} online rounds${p.stocked && p.madeAhead ? ` · setup made ahead: ${bytes(p.madeAhead.bytes)}` : ''}`,
    cells: [opt(p.setupBytes), opt(p.onlineBytes)],
  }));
  if (r.pageParty) {
    const { setup: s, online } = r.pageParty;
    rows.push({ id: PAGE_PARTY, name: `P${PAGE_PARTY}: this tab`, note: `${online.rounds} online rounds`, cells: [bytes(s.bytesSent), bytes(online.bytesSent)] });
  }
  r.tabs?.forEach(({ stages, kind, webrtcBytesSent }, id) => {
    const note = `${stages.online.rounds} online rounds · links: ${kind}, ${bytes(webrtcBytesSent)} over WebRTC`;
    rows.push({ id, name: partyName(r, id), note, cells: [bytes(stages.setup.bytesSent), bytes(stages.online.bytesSent)] });
  });
  const client = r.pageParty ? 'This tab as the client' : r.tabs ? 'This tab, the client' : 'This tab';
  const servers = pending
    ? [{ name: 'Servers', note: 'their own figures come once they have logged the session…', cells: ['…', '…'] }]
    : reported || r.tabs
      ? []
      : [{ name: 'Servers', note: 'this deployment does not report them', cells: ['–', '–'] }];
  table($('out-bytes'), ['', 'setup', 'online'], [
    { name: client, note: `received ${bytes(result.stats.bytesReceived)}`, cells: [bytes(r.client.setup.sent), bytes(r.client.online.sent)] },
    ...rows.sort((x, y) => x.id - y.id),
    ...(r.tabs ? [] : servers),
  ]);
}

/** The relay front end this tab reached, in a word. */
function frontName(r: PrivateRun): string {
  return r.relayTransport === 'webtransport' ? 'WebTransport' : 'WebSocket';
}

/** How this tab reached the relay, and how the parties reached each other, as they reported it. */
function showLinks(r: PrivateRun): void {
  const why =
    r.relayTransport === 'webtransport'
      ? 'HTTP/3'
      : r.webTransportOffered
        ? `WebTransport failed: ${r.webTransportError ?? 'no reason given'}`
        : 'this deployment\'s relay has no WebTransport front end';
  const toClient = `This tab reached the parties through the relay over ${frontName(r)} (${why}), over Noise links that end in the parties.`;
  const out = $('out-transport');
  out.dataset.front = r.relayTransport;
  if (!r.tabs) {
    out.dataset.kind = 'relay';
    out.replaceChildren(el('b', undefined, `Links: through the relay, ${frontName(r)}. `), document.createTextNode(`${toClient} The parties link to each other through it too.`));
    return;
  }
  const kind = combinedKind(r.tabs.map((t) => t.kind));
  out.dataset.kind = kind;
  const fallbacks = r.tabs.flatMap((t, id) => (t.fallbackReason ? [`P${id}: ${t.fallbackReason}`] : []));
  const between =
    kind === 'webrtc'
      ? 'The party tabs computed over direct WebRTC DataChannels, P0–P1, P0–P2 and P1–P2: the relay carried only their signalling, inside the Noise links.'
      : `Some links between the party tabs fell back to the relay: ${fallbacks.join('; ')}.`;
  const title = { webrtc: 'Links: WebRTC. ', relay: 'Links: relay only. ', mixed: 'Links: mixed. ' }[kind];
  out.replaceChildren(el('b', undefined, title), document.createTextNode(`${between} ${toClient}`));
}

/** What a server received of the input, in words: rep3 sends two components per value. */
function received(words: BigUint64Array, backend: Backend): string {
  return backend === 'meteor'
    ? `${words.length} masked values · ${bytes(words.byteLength)}`
    : `${words.length} × 2 shares · ${bytes(2 * words.byteLength)}`;
}

const opt = (n: number | undefined) => (n === undefined ? '–' : bytes(n));

interface Row {
  /** Names the row (`data-row`), for tests. */
  readonly row?: string;
  /** The row's figures were made ahead of demand (`data-ahead`). */
  readonly ahead?: boolean;
  readonly name: string;
  readonly note?: string;
  readonly cells: readonly string[];
}

/** A table whose rows are headed by a name with a muted note under it. */
function table(t: HTMLElement, head: readonly string[], rows: readonly Row[]): void {
  t.replaceChildren(
    el('thead', undefined, undefined, el('tr', undefined, undefined, ...head.map((h) => el('th', undefined, h)))),
    el(
      'tbody',
      undefined,
      undefined,
      ...rows.map((r) => {
        const name = el('th', undefined, r.name);
        if (r.note) name.append(el('small', undefined, r.note));
        const tr = el('tr', undefined, undefined, name, ...r.cells.map((c) => el('td', undefined, c)));
        if (r.row) tr.dataset.row = r.row;
        if (r.ahead) tr.dataset.ahead = 'true';
        return tr;
      }),
    ),
  );
}

/** Why no server learns the digit, for the protocol and deployment that ran. */
function explanation(backend: Backend, where: 'servers' | 'page-party' | 'tabs', ahead = false): string[] {
  const common =
    'The links to the servers are encrypted end to end (Noise), so the relay in the middle sees only ciphertext. ' +
    'The answer comes back as pieces too, and only this tab adds them up. ' +
    'Any two servers together could undo the hiding: that is why the three must be run by parties that do not collude.';
  const asParty = {
    servers: [],
    'page-party': [
      `Here this tab was also party P${PAGE_PARTY}: it computed on P${PAGE_PARTY}'s pieces of a digit it knows anyway, beside two native servers ` +
        'that still saw only noise. The model\'s weights are P0\'s to share; this tab took only the model\'s shapes from its file.',
    ],
    tabs: [
      'Here the three parties were browser tabs. Each made a fresh key for this classification and kept its private half; ' +
        'each tab shows what it received, the same noise as above. P0\'s tab shared the weights; P1 and P2 used only the model\'s shapes ' +
        '(in this demo every tab can fetch the file; in a real deployment only the model owner would hold the weights).',
    ],
  }[where];
  if (backend === 'meteor') {
    return [
      'METEOR: each pixel x left this tab as m = x − ψ. The mask ψ is fresh randomness the servers drew during setup, ' +
        'in three parts of which each server holds two; each sent this tab one part, so only this tab knows all of ψ. ' +
        'All three servers received the same m (the three pictures match), and without the third part of ψ it is uniformly random: ' +
        'it carries nothing about x.',
      ...(ahead
        ? [
            'This time the servers had made that setup before you clicked, among themselves, over direct links between them (their mesh): ' +
              'masks for one input of this model, which nothing about your digit went into. This session took them off the shelf, ' +
              'so no other session can use them again, and its setup was only sending this tab its parts of ψ.',
          ]
        : []),
      ...asParty,
      common,
    ];
  }
  const name = backend === 'mal3' ? 'mal3' : 'rep3';
  const checked =
    backend === 'mal3'
      ? [
          'mal3 also assumes that a server may cheat: every multiplication the servers made was checked against multiplication ' +
            'triples they had verified among themselves, and the answer\'s pieces reached this tab twice each, from the two servers ' +
            'holding them. A server sending anything else would have made the run stop, not changed the answer. That checking is ' +
            'why it sends far more than rep3.',
        ]
      : [];
  return [
    `${name}: each pixel x was split into three random numbers x₀ + x₁ + x₂ = x (modulo 2⁶⁴). Each server received two of them, ` +
      'never all three (its picture shows the first of its two), and any two of the three are uniformly random: they carry nothing about x.',
    ...checked,
    ...(ahead
      ? [
          'This time the servers had made the setup before you clicked, among themselves, over direct links between them (their mesh): ' +
            'the model\'s shares and the random values its layers consume, which nothing about your digit went into. This session took ' +
            'them off the shelf, so no other session can use them again, and it had no setup of its own.',
        ]
      : []),
    ...asParty,
    common,
  ];
}

// ---- start -------------------------------------------------------------------------------

$('tab-pick').addEventListener('click', () => showTab('pick'));
$('tab-draw').addEventListener('click', () => showTab('draw'));
$('tab-pick').parentElement?.addEventListener('keydown', tabKeys);
$('strip').addEventListener('keydown', stripKeys);
SMALL_SCREEN.addEventListener('change', refresh);
$('clear').addEventListener('click', () => pad.clear());
$('classify').addEventListener('click', () => void run());

renderStages(undefined);
refresh();
document.body.dataset.state = 'loading';
// Starts the "3 servers" deployment, whose mesh then makes setup runs before the first click.
watchShelf();

// Each part of loading marks the page when it is done (`data-sdk`, `data-samples`): a page
// that never becomes idle then says what it was still waiting for.
const sdk = init().then((info) => {
  $('runtime').textContent = info.module === 'simd' ? 'WebAssembly · SIMD' : 'WebAssembly (no SIMD)';
  document.body.dataset.sdk = 'ready';
});
const sets = Promise.all(
  (['mnist', 'digits8'] as const).map(async (name) => state.sets.set(name, await getSamples(name, STRIP))),
).then(() => {
  document.body.dataset.samples = 'ready';
});
Promise.all([sdk, sets])
  .then(() => {
    state.ready = true;
    document.body.dataset.state = 'idle';
  })
  .catch((e: unknown) => {
    showError(e);
    document.body.dataset.state = 'error';
  })
  .finally(refresh);
