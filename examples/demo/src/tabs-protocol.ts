// What the demo tab (the client) and the three party tabs of the "three tabs" deployment say
// to each other. They share a BroadcastChannel named after the demo tab's room, so only tabs of
// this origin take part, and only public things cross it: public keys, the relay's URL, join
// tokens and figures. Each private key stays in the tab that made it.
import type { RtcLinkKind, ServeStages } from 'ringfence';

/** Where the three tabs' links ran: all direct, all through the relay, or some of each. */
export type LinkKind = RtcLinkKind | 'mixed';

/** One party tab's account of the request it served. */
export interface TabReport {
  readonly stages: ServeStages;
  readonly kind: LinkKind;
  /** How this tab reached each other party. */
  readonly via: readonly { readonly peer: number; readonly kind: RtcLinkKind }[];
  /** Why links fell back to the relay, when any did. */
  readonly fallbackReason?: string;
  /** Frame bytes this tab sent over the DataChannels, to the other party tabs. */
  readonly webrtcBytesSent: number;
}

export type TabMessage =
  // Party tab → demo tab: present (when it loads, and answering a roll call). `since` orders
  // two tabs opened for the same party: the newer one takes over.
  | { readonly t: 'here'; readonly party: number; readonly tab: string; readonly since: number }
  | { readonly t: 'bye'; readonly party: number; readonly tab: string }
  // Demo tab → party tabs.
  | { readonly t: 'roll-call' }
  | {
      readonly t: 'join';
      /** The one tab that serves (another tab of the same party ignores it). */
      readonly tab: string;
      readonly session: string;
      readonly relay: string;
      readonly token: string;
      readonly model: string;
    }
  /** Every participant's public key (hex), the client's last: the session can start. */
  | { readonly t: 'keys'; readonly session: string; readonly publicKeys: readonly string[] }
  | { readonly t: 'abort'; readonly session: string; readonly reason: string }
  // Party tab → demo tab, per session.
  | { readonly t: 'key'; readonly party: number; readonly session: string; readonly publicKey: string }
  | { readonly t: 'served'; readonly party: number; readonly session: string; readonly report: TabReport }
  | { readonly t: 'failed'; readonly party: number; readonly session: string; readonly message: string };

/** The channel of room `room`. */
export const channelName = (room: string) => `ringfence-demo-tabs:${room}`;

/** The page of party `party` in room `room`, relative to the demo's base. */
export const partyUrl = (room: string, party: number) => `party.html?room=${encodeURIComponent(room)}&party=${party}`;

/** The window name of a party tab: a second open of the same party reuses its window. */
export const windowName = (room: string, party: number) => `ringfence-party-${room}-${party}`;

/** The three links combined into one word. */
export function combinedKind(kinds: readonly LinkKind[]): LinkKind {
  if (kinds.every((k) => k === 'webrtc')) return 'webrtc';
  if (kinds.every((k) => k === 'relay')) return 'relay';
  return 'mixed';
}
