/**
 * What every transport keeps per link: the frames received from the peer and the `recv`s
 * waiting for them, and the error a transport rejects with.
 * @internal
 * @module
 */

/** Builds the error a transport rejects with, in the shape the party understands. */
export function linkError(code: 'CLOSED' | 'TIMEOUT' | 'TRANSPORT', message: string, timeoutMs?: number): Error {
  return Object.assign(new Error(message), { code, timeoutMs });
}

interface Waiter {
  resolve(frame: Uint8Array): void;
  reject(e: Error): void;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * The frames received from one peer, in order, and the `recv`s waiting for them. Once the link
 * ended ({@link FrameInbox.fail}), `recv` rejects with why, after the frames already received;
 * the first reason given is kept, and frames pushed after it are dropped.
 */
export class FrameInbox {
  readonly #from: number;
  readonly #timeoutMs: number | undefined;
  readonly #frames: Uint8Array[] = [];
  readonly #waiters: Waiter[] = [];
  #ended: Error | undefined;

  /**
   * @param from - The peer's party id (for the timeout's message).
   * @param timeoutMs - How long a `recv` waits before it rejects with `code: 'TIMEOUT'`
   *   (`undefined`: as long as it takes).
   */
  constructor(from: number, timeoutMs?: number) {
    this.#from = from;
    this.#timeoutMs = timeoutMs;
  }

  /** Why the link ended, if it did (frames received before may still be unread). */
  get ended(): Error | undefined {
    return this.#ended;
  }

  /** Hands `frame` to the oldest waiting `recv`, or queues it. */
  push(frame: Uint8Array): void {
    if (this.#ended) return;
    const w = this.#waiters.shift();
    if (w) {
      clearTimeout(w.timer);
      w.resolve(frame);
    } else {
      this.#frames.push(frame);
    }
  }

  /** Ends the link with `e` (unless it ended already): waiting `recv`s reject now. */
  fail(e: Error): void {
    this.#ended ??= e;
    for (const w of this.#waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(this.#ended);
    }
  }

  /** The next frame from the peer. */
  recv(): Promise<Uint8Array> {
    const frame = this.#frames.shift();
    if (frame) return Promise.resolve(frame);
    if (this.#ended) return Promise.reject(this.#ended);
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject };
      const ms = this.#timeoutMs;
      if (ms !== undefined) {
        w.timer = setTimeout(() => {
          const i = this.#waiters.indexOf(w);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(linkError('TIMEOUT', `no frame from party ${this.#from} within ${ms} ms`, ms));
        }, ms);
      }
      this.#waiters.push(w);
    });
  }
}
