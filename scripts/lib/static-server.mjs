// A static file server on 127.0.0.1 for pages that load the SDK and its .wasm modules: the
// browser tests' harness (tests/browser/harness.mjs) and the examples' own servers
// (examples/worker-party/serve.mjs). Plain Node, no dependencies.

import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, resolve, sep } from 'node:path';

/** Content types of what a page with the SDK loads. */
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm', // WebAssembly.instantiateStreaming requires it
};

/**
 * Serves the directories of `roots` (URL path prefix ending in `/` → directory; the first
 * prefix that matches wins, so list `/` last) on 127.0.0.1:`port` (0: a free port). Files with
 * an extension of `types` (beside .html, .js and .wasm: extension → content type) and inside
 * their directory only; anything else is a 404. `headers` go with every file. Resolves with
 * `{ url, close }`.
 */
export async function serveStatic(roots, { port = 0, types = {}, headers = {} } = {}) {
  const known = { ...TYPES, ...types };
  const server = createServer(async (req, res) => {
    try {
      let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (path.endsWith('/')) path += 'index.html';
      const prefix = Object.keys(roots).find((p) => path.startsWith(p));
      const root = roots[prefix];
      const file = resolve(root, `.${path.slice(prefix.length - 1)}`);
      const type = known[extname(file)];
      // Resolving `..` segments can land outside `root`: nothing there is served.
      if (!type || !file.startsWith(root + sep)) throw new Error('not served');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': type, ...headers }).end(body);
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
