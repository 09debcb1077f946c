/**
 * The few runtime types the public API mentions, declared here by the parts the SDK uses, so
 * that the package's `.d.ts` type-check in any project: with the DOM library, with Node's
 * types, or with neither (`lib: ["es2022"]`, `types: []`). The runtimes' own objects fit them.
 * @module
 */

/** The part of an `AbortSignal` the SDK uses (browsers', Node's and workers' signals fit). */
export interface AbortSignalLike {
  /** Whether the signal fired. */
  readonly aborted: boolean;
  /** Why it fired (becomes the `cause` of the `ABORTED` error). */
  readonly reason?: unknown;
  /** Registers `listener` for the `'abort'` event. */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  /** Removes a listener registered with `addEventListener`. */
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A URL object (`URL`), by the one property the SDK reads. */
export interface UrlLike {
  /** The whole URL. */
  readonly href: string;
}

/** Bytes: an `ArrayBuffer` or a view of one (`Uint8Array`, `Buffer`, `DataView`, ...). */
export type BytesLike = ArrayBuffer | ArrayBufferView;

/**
 * A compiled `WebAssembly.Module`. Typed as any object (the `WebAssembly` namespace is not in
 * every project's types); {@link init} checks it is one at run time.
 */
export type CompiledWasmModule = object;

/**
 * The runtime's `MessagePort` type where the project's types declare one (DOM, Node), so that
 * ports can go into transfer lists; else the part of it the SDK uses.
 */
export type RuntimeMessagePort<Fallback> = typeof globalThis extends {
  /** The runtime's `MessagePort` constructor, where declared. */
  MessagePort: {
    /** Its instances' type. */
    prototype: infer P;
  };
}
  ? P
  : Fallback;

/** The part of a `ReadableStream` the SDK uses. */
export interface ReadableStreamLike<T> {
  /** Locks the stream to a reader. */
  getReader(): ReadableStreamReaderLike<T>;
}

/** The part of a `ReadableStreamDefaultReader` the SDK uses. */
export interface ReadableStreamReaderLike<T> {
  /** The next chunk, or `done` once the stream ended. */
  read(): Promise<
    | {
        /** The stream ended. */
        done: true;
        /** Nothing. */
        value?: T | undefined;
      }
    | {
        /** More may follow. */
        done: false;
        /** The chunk. */
        value: T;
      }
  >;
  /** Unlocks the stream. */
  releaseLock(): void;
}

/** The part of a `WritableStream` the SDK uses. */
export interface WritableStreamLike<T> {
  /** Locks the stream to a writer. */
  getWriter(): WritableStreamWriterLike<T>;
}

/** The part of a `WritableStreamDefaultWriter` the SDK uses. */
export interface WritableStreamWriterLike<T> {
  /** Queues a chunk. */
  write(chunk: T): Promise<void>;
  /** Closes the stream after the queued chunks. */
  close(): Promise<void>;
}
