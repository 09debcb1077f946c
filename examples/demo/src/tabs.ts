// The demo tab's side of the "three tabs" deployment: which party tabs are open, opening the
// missing ones, and one session run with them (their public keys in, the relay and tokens out,
// their reports back). The party tabs' side is party-tab.ts.
import { hex, unhex } from './hex';
import type { TabsSession } from './api';
import { channelName, partyUrl, windowName, type TabMessage, type TabReport } from './tabs-protocol';

/** A party tab failed, went away, or never opened; `party` says which, when one is to blame. */
export class TabsError extends Error {
  override readonly name = 'TabsError';
  constructor(
    message: string,
    readonly party?: number,
  ) {
    super(message);
  }
}

/** How long a party tab may take to answer with its key, once present. */
const KEY_TIMEOUT_MS = 10_000;

const PARTIES = [0, 1, 2] as const;

export class PartyTabs {
  /** Names this demo tab's channel; kept across reloads, so open party tabs stay in use. */
  readonly room: string;
  /** Parties whose window the browser refused to open at the last attempt. */
  blocked: readonly number[] = [];
  readonly #channel: BroadcastChannel;
  /** The tab serving each party (the newest when two were opened for one). */
  readonly #present = new Map<number, { tab: string; since: number }>();
  readonly #listeners = new Set<(m: TabMessage) => void>();
  readonly #onChange: () => void;

  constructor(onChange: () => void) {
    this.#onChange = onChange;
    const stored = sessionStorage.getItem('ringfence-demo-room');
    this.room = stored ?? hex(crypto.getRandomValues(new Uint8Array(8)));
    if (!stored) sessionStorage.setItem('ringfence-demo-room', this.room);
    this.#channel = new BroadcastChannel(channelName(this.room));
    this.#channel.onmessage = (e: MessageEvent<TabMessage>) => this.#receive(e.data);
    // Party tabs that outlived a reload of this one answer.
    this.#post({ t: 'roll-call' });
  }

  /** The URL of party `party`'s page. */
  url(party: number): string {
    return new URL(partyUrl(this.room, party), document.baseURI).href;
  }

  /** Whether party `party`'s tab is open and listening. */
  isOpen(party: number): boolean {
    return this.#present.has(party);
  }

  get allOpen(): boolean {
    return PARTIES.every((p) => this.#present.has(p));
  }

  /**
   * Opens the party tabs that are not open yet. Call it straight from the click handler:
   * browsers open pop-ups only in answer to the user's gesture, most of them one per click.
   * The parties the browser refused are kept in {@link blocked}.
   */
  openMissing(): void {
    this.blocked = PARTIES.filter((p) => !this.#present.has(p) && !this.#openWindow(p));
    this.#onChange();
  }

  /** Opens party `party`'s tab from a click; returns whether the browser let it. */
  open(party: number): boolean {
    const opened = this.#openWindow(party);
    this.blocked = opened ? this.blocked.filter((p) => p !== party) : [...new Set([...this.blocked, party])];
    this.#onChange();
    return opened;
  }

  /** A small window per party, side by side, so that the three can be watched at work. */
  #openWindow(party: number): boolean {
    const width = 420;
    const height = 760;
    const left = Math.max(0, window.screenX + 40 + party * (width + 16));
    const features = `popup,width=${width},height=${height},left=${left},top=${Math.max(0, window.screenY + 60)}`;
    return window.open(this.url(party), windowName(this.room, party), features) !== null;
  }

  /** Resolves once all three party tabs are open; rejects after `ms`. */
  whenAllOpen(ms: number): Promise<void> {
    if (this.allOpen) return Promise.resolve();
    return new Promise((resolve, reject) => {
      // Ask again every second: a tab's announcement can be missed (e.g. sent while this tab
      // was busy or before a window finished navigating), and a tab answers every roll-call.
      const again = setInterval(() => this.#post({ t: 'roll-call' }), 1000);
      const check = () => {
        if (!this.allOpen) return;
        clearTimeout(timer);
        clearInterval(again);
        this.#listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        clearInterval(again);
        this.#listeners.delete(check);
        const missing = PARTIES.filter((p) => !this.#present.has(p)).map((p) => `P${p}`);
        reject(new TabsError(`${missing.join(', ')} did not open within ${ms / 1000} s: allow pop-ups for this page, or open them with the links under “Party tabs”`));
      }, ms);
      this.#listeners.add(check);
    });
  }

  /**
   * Starts `session` in the three party tabs: each gets the relay and its token and answers
   * with a fresh public key; once all three have, they get every key (the client's last) and
   * connect. Resolves with the parties' public keys and `served`, which settles with the three
   * tabs' reports once they answered the client, or rejects with the first tab that failed or
   * went away. Aborting `signal` tells the tabs to stop.
   */
  async start(session: TabsSession, model: string, clientPublicKey: Uint8Array, signal: AbortSignal) {
    const id = session.session;
    const tabs = PARTIES.map((p) => {
      const tab = this.#present.get(p);
      if (!tab) throw new TabsError(`the tab of party P${p} is not open`, p);
      return tab.tab;
    });
    const keys: (Uint8Array | undefined)[] = [];
    const reports: (TabReport | undefined)[] = [];
    // One listener for both phases: the keys, then the reports; `settle` ends the current one.
    let phase: 'keys' | 'serving' = 'keys';
    let settle!: { resolve: () => void; reject: (e: Error) => void };
    const gotKeys = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    const listener = (m: TabMessage) => {
      if (m.t === 'failed' && m.session === id) settle.reject(new TabsError(m.message, m.party));
      else if (m.t === 'bye' && tabs[m.party] === m.tab) settle.reject(new TabsError(`the tab of party P${m.party} was closed`, m.party));
      else if (m.t === 'key' && m.session === id && phase === 'keys') {
        const key = unhex(m.publicKey);
        if (key?.length !== 32) return settle.reject(new TabsError(`party P${m.party}'s tab sent a malformed key`, m.party));
        keys[m.party] = key;
        if (PARTIES.every((p) => keys[p])) settle.resolve();
      } else if (m.t === 'served' && m.session === id && phase === 'serving') {
        reports[m.party] = m.report;
        if (PARTIES.every((p) => reports[p])) settle.resolve();
      }
    };
    const onAbort = () => this.#post({ t: 'abort', session: id, reason: String(signal.reason instanceof Error ? signal.reason.message : signal.reason) });
    signal.addEventListener('abort', onAbort, { once: true });
    this.#listeners.add(listener);
    const stop = () => {
      this.#listeners.delete(listener);
      signal.removeEventListener('abort', onAbort);
    };
    try {
      PARTIES.forEach((p) => this.#post({ t: 'join', tab: tabs[p]!, session: id, relay: session.relay, token: session.tokens[p], model }));
      const late = setTimeout(() => settle.reject(new TabsError(`the party tabs did not answer within ${KEY_TIMEOUT_MS / 1000} s`)), KEY_TIMEOUT_MS);
      await gotKeys.finally(() => clearTimeout(late));
    } catch (e) {
      stop();
      onAbort();
      throw e;
    }
    const parties = keys as Uint8Array[];
    phase = 'serving';
    const served = new Promise<TabReport[]>((resolve, reject) => {
      settle = { resolve: () => resolve(reports as TabReport[]), reject };
    }).finally(stop);
    this.#post({ t: 'keys', session: id, publicKeys: [...parties, clientPublicKey].map(hex) });
    return { parties, served };
  }

  #receive(m: TabMessage): void {
    if (m.t === 'here') {
      const known = this.#present.get(m.party);
      if (!known || known.since <= m.since) this.#present.set(m.party, { tab: m.tab, since: m.since });
      this.blocked = this.blocked.filter((p) => p !== m.party);
      this.#onChange();
    } else if (m.t === 'bye' && this.#present.get(m.party)?.tab === m.tab) {
      this.#present.delete(m.party);
      this.#onChange();
    }
    for (const fn of [...this.#listeners]) fn(m);
  }

  #post(m: TabMessage): void {
    this.#channel.postMessage(m);
  }
}
