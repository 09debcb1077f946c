// Serves this example on 127.0.0.1: the page (this directory) at / and the built SDK
// (the `ringfence` package's dist/, with its .wasm modules) at /ringfence/. Prints the URL.
//   node examples/worker-party/serve.mjs [--port N]      (default: a free port)
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOTS = {
  '/ringfence/': dirname(fileURLToPath(import.meta.resolve('ringfence'))),
  '/': dirname(fileURLToPath(import.meta.url)),
};
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm', // WebAssembly.instantiateStreaming requires it
};

/** Starts the server; resolves with `{ url, close }`. */
export async function serve(port = 0) {
  const server = createServer(async (req, res) => {
    try {
      let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (path.endsWith('/')) path += 'index.html';
      const prefix = Object.keys(ROOTS).find((p) => path.startsWith(p));
      const root = ROOTS[prefix];
      const file = resolve(root, `.${path.slice(prefix.length - 1)}`);
      // Known file types only, and nothing outside the two directories.
      if (!TYPES[extname(file)] || !file.startsWith(root + sep)) throw new Error('not served');
      res.writeHead(200, { 'content-type': TYPES[extname(file)] }).end(await readFile(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((ok) => (server.closeAllConnections(), server.close(ok))),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--port');
  const { url } = await serve(at > 0 ? Number(process.argv[at + 1]) : 0);
  console.log(`worker-party example: ${url} (Ctrl-C stops it)`);
}
