// The demo server's API (server/plugin.mjs), typed.
import type { Backend, SetName } from './catalog';

export interface Sample {
  readonly index: number;
  /** The true digit. */
  readonly label: number;
  /** Stored bytes, `side × side`. */
  readonly pixels: Uint8Array;
  /** The class onnxruntime gives this digit, per model checked on its set. */
  readonly reference: Readonly<Record<string, number>>;
}

export interface SampleSet {
  readonly set: SetName;
  readonly side: number;
  /** Digits in the shipped set (the API sends the first few). */
  readonly count: number;
  readonly samples: readonly Sample[];
}

/** What `Client.connect` needs, as the API sends it (bytes in hex). */
export interface SessionInfo {
  readonly relay: string;
  readonly session: string;
  readonly parties: readonly string[];
  /** Long-running server parties: the deployment the client invites, and its join token. */
  readonly deployment?: string;
  readonly token?: string;
  /** The relay's WebTransport front end, when it has one (the SDK's `webTransport` option). */
  readonly webTransport?: { readonly url: string; readonly certificateHash: string };
}

/**
 * A session for the "three tabs" deployment: the relay and a join token per participant (the
 * three party tabs, then this tab as the client). The keys are the tabs' own business.
 */
export interface TabsSession {
  readonly relay: string;
  readonly session: string;
  readonly tokens: readonly [string, string, string, string];
  /** The relay's WebTransport front end, for this tab's client, when the relay has one. */
  readonly webTransport?: SessionInfo['webTransport'];
}

/** One server party's own figures of a classification, when the deployment reports them. */
export interface PartyFigures {
  readonly id: number;
  readonly ok: boolean;
  readonly message: string;
  readonly setupBytes?: number;
  readonly onlineBytes?: number;
  readonly setupMs?: number;
  readonly onlineMs?: number;
  readonly rounds?: number;
  /** The session's setup was a run the servers' mesh made ahead of demand. */
  readonly stocked?: boolean;
  /** What making such a run cost this party (the mesh's latest run of the model). */
  readonly madeAhead?: { readonly ms: number; readonly bytes: number };
}

/** The "3 servers" deployment's mesh: setup runs made ahead of demand, per model and backend. */
export interface ServersState {
  /** `down`: sessions make their own setup until the servers link up again. */
  readonly mesh: 'up' | 'down' | 'starting';
  /** Runs ready at all three servers, and how many they keep ready. */
  readonly models: readonly { readonly model: string; readonly backend: Backend; readonly ready: number; readonly target: number }[];
}

/** The demo server could not be reached or refused a request; the message says which. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The HTTP status the demo server answered with, when it answered. */
  readonly status: number | undefined;
  constructor(message: string, options?: ErrorOptions & { status?: number }) {
    super(message, options);
    this.status = options?.status;
  }
}

export async function getSamples(set: SetName, limit: number): Promise<SampleSet> {
  const body = await call<{ set: SetName; side: number; count: number; samples: (Omit<Sample, 'pixels'> & { pixels: string })[] }>(
    `/api/samples?set=${set}&limit=${limit}`,
  );
  return {
    ...body,
    samples: body.samples.map((s) => ({ ...s, pixels: Uint8Array.from(atob(s.pixels), (c) => c.charCodeAt(0)) })),
  };
}

/**
 * Asks the deployment for a session of `model` for the client with this public key (hex);
 * with `pageParty`, this tab will be that party itself, with that public key.
 */
export function openSession(model: string, clientPublicKey: string, pageParty?: { id: number; publicKey: string }): Promise<SessionInfo> {
  return call<SessionInfo>('/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, clientPublicKey, pageParty }),
  });
}

/** Asks the deployment for a session of `model` whose three parties are browser tabs. */
export function openTabsSession(model: string): Promise<TabsSession> {
  return call<TabsSession>('/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, tabs: true }),
  });
}

/** The parties' figures of a finished session, or `undefined` when the deployment gives none. */
export async function getReport(session: string): Promise<readonly PartyFigures[] | undefined> {
  const body = await call<{ parties: PartyFigures[] | null }>(`/api/session/${session}/report`);
  return body.parties ?? undefined;
}

/** The "3 servers" deployment's mesh (starting the deployment if it is not running yet). */
export function getServersState(): Promise<ServersState> {
  return call<ServersState>('/api/servers');
}

async function call<T>(path: string, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(`cannot reach the demo server (${String(e instanceof Error ? e.message : e)}): is it still running?`, { cause: e });
  }
  const body: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    const reason = typeof body === 'object' && body !== null && 'error' in body ? String(body.error) : `HTTP ${res.status}`;
    throw new ApiError(`the demo server answered ${res.status}: ${reason}`, { status: res.status });
  }
  return body as T;
}
