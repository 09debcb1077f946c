// Serves this example on 127.0.0.1: the page (this directory) at / and the built SDK
// (the `ringfence` package's dist/, with its .wasm modules) at /ringfence/. Prints the URL.
//   node examples/worker-party/serve.mjs [--port N]      (default: a free port)
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '../../scripts/lib/static-server.mjs';

const ROOTS = {
  '/ringfence/': dirname(fileURLToPath(import.meta.resolve('ringfence'))),
  '/': dirname(fileURLToPath(import.meta.url)),
};

/** Starts the server; resolves with `{ url, close }`. */
export function serve(port = 0) {
  return serveStatic(ROOTS, { port });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--port');
  const { url } = await serve(at > 0 ? Number(process.argv[at + 1]) : 0);
  console.log(`worker-party example: ${url} (Ctrl-C stops it)`);
}
