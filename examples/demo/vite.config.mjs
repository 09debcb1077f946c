// The page (index.html, src/) and its API (server/), served by one Vite process on loopback;
// party.html is the page of one party tab in the "three tabs" deployment.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { demoApi } from './server/plugin.mjs';

const page = (name) => fileURLToPath(new URL(name, import.meta.url));

export default defineConfig({
  plugins: [demoApi()],
  // The relay and the parties listen on 127.0.0.1 only, so the page is served there too. Both
  // pages' modules are compiled as the server starts, not when the first page asks for them.
  server: { host: '127.0.0.1', warmup: { clientFiles: ['./index.html', './party.html'] } },
  preview: { host: '127.0.0.1' },
  // Both pages are entries: built side by side, and crawled together for the dev server's
  // pre-bundling (so opening a party tab does not make Vite optimize anew and reload).
  build: { rolldownOptions: { input: { main: page('index.html'), party: page('party.html') } } },
  clearScreen: false,
});
