// The page (index.html, src/) and its API (server/), served by one Vite process on loopback.
import { defineConfig } from 'vite';
import { demoApi } from './server/plugin.mjs';

export default defineConfig({
  plugins: [demoApi()],
  // The relay and the parties listen on 127.0.0.1 only, so the page is served there too.
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
  clearScreen: false,
});
