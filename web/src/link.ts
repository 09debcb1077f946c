/**
 * The side of a transport the wasm session sees: the received-bytes counter for progress reports
 * (the core counts what it sends) and cancellation by an `AbortSignal`. Kept apart from `Party`
 * and `Client` so the abort logic lives in one place and wraps any {@link Transport}.
 * @internal
 * @module
 */

import { RingfenceError } from './errors.js';
import type { AbortSignalLike } from './platform.js';
import type { Transport } from './transport.js';

/** The error a link rejects with once aborted: the core reads `code: 'CLOSED'` as a dead link. */
function closedError(): Error {
  return Object.assign(new Error('the party was aborted'), { code: 'CLOSED' });
}

/**
 * A transport wrapped with a counter and an abort switch. On abort every pending and later
 * `recv` rejects at once (so the wasm operation waiting on a peer ends instead of hanging),
 * `send` throws, and the underlying transport is closed exactly once.
 * @internal
 */
export class Link {
  /** The wrapped transport handed to the wasm party. */
  readonly transport: Transport;
  /** Frame bytes that came in through `recv`. */
  bytesReceived = 0;
  readonly #inner: Transport;
  readonly #signal: AbortSignalLike | undefined;
  readonly #onAbort = () => this.#abort();
  /** Rejecters of everything racing the abort right now (pending `recv`s and operations). */
  readonly #waiting = new Set<(e: Error) => void>();
  #closed = false;
  #aborted = false;

  constructor(inner: Transport, signal?: AbortSignalLike) {
    this.#inner = inner;
    this.#signal = signal;
    this.transport = {
      send: (to, frame) => {
        if (this.#closed) throw closedError();
        this.#inner.send(to, frame);
      },
      recv: async (from) => {
        if (this.#closed) throw closedError();
        const frame = await this.#orAbort(this.#inner.recv(from));
        this.bytesReceived += frame.byteLength;
        return frame;
      },
      close: () => this.close(),
    };
    // Buffer recycling passes straight through, when the transport offers it.
    if (inner.allocFrame) this.transport.allocFrame = (to, length) => inner.allocFrame!(to, length);
    if (inner.releaseFrame) this.transport.releaseFrame = (from, frame) => inner.releaseFrame!(from, frame);
    if (signal?.aborted) this.#abort();
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The `ABORTED` error when the signal fired, else `undefined`. */
  abortError(): RingfenceError | undefined {
    return abortError(this.#signal);
  }

  /**
   * Settles like `work`, except that an abort rejects at once with `ABORTED` (also when `work`
   * later fails because the abort closed its link).
   */
  async race<T>(work: Promise<T>): Promise<T> {
    try {
      return await this.#orAbort(work);
    } catch (e) {
      throw this.abortError() ?? e;
    }
  }

  /** Stops listening to the signal (the session is over); the transport stays open. */
  detach(): void {
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  /** Stops listening to the signal and closes the underlying transport (once). */
  close(): void {
    this.detach();
    if (this.#closed) return;
    this.#closed = true;
    this.#inner.close?.();
  }

  #abort(): void {
    this.#aborted = true;
    this.close();
    for (const reject of [...this.#waiting]) reject(closedError());
  }

  /**
   * `p`, or a rejection as soon as the link aborts. A per-call waiter (not one shared promise
   * raced forever) so that a long session does not pile up reactions.
   */
  #orAbort<T>(p: Promise<T>): Promise<T> {
    if (this.#aborted) {
      // `p` may still settle later; its rejection is expected then.
      p.catch(() => {});
      return Promise.reject(closedError());
    }
    return new Promise<T>((resolve, reject) => {
      this.#waiting.add(reject);
      p.then(resolve, reject).finally(() => this.#waiting.delete(reject));
    });
  }
}

/** The `ABORTED` error when `signal` fired, else `undefined`. @internal */
export function abortError(signal: AbortSignalLike | undefined): RingfenceError | undefined {
  if (!signal?.aborted) return undefined;
  return new RingfenceError('ABORTED', `aborted: ${describeReason(signal.reason)}`, { cause: signal.reason });
}

/**
 * `work` (e.g. connecting, before there is a {@link Link} to abort), or `ABORTED` as soon as
 * `signal` fires; a result that arrives after the abort goes to `discard` (to close a connection
 * nobody will use).
 * @internal
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignalLike | undefined, discard: (late: T) => void): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) discard(v);
        else resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(abortError(signal) ?? e);
      },
    );
  });
}

function describeReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return String(reason);
}
