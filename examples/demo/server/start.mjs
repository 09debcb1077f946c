// Starts the demo app (page and API) from Node, for `npm run demo` and the browser test: the
// same Vite dev server as `npm run dev -w examples/demo`, on 127.0.0.1.
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Starts the dev server on 127.0.0.1:`port` (the next free port if it is taken; 0: any free
 * port). Resolves with `{ url, close }`; `close()` also stops the sessions' processes.
 */
export async function startDemoServer({ port = 5173, logLevel = 'warn' } = {}) {
  const server = await createServer({
    root: ROOT,
    configFile: fileURLToPath(new URL('../vite.config.mjs', import.meta.url)),
    logLevel,
    server: { port },
  });
  try {
    await server.listen();
  } catch (e) {
    await server.close();
    throw e;
  }
  const url = server.resolvedUrls?.local[0];
  if (!url) {
    await server.close();
    throw new Error('the demo server started but has no local URL');
  }
  return { url, close: () => server.close() };
}
