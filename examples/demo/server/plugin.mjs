// The demo's HTTP API, as a Vite plugin so that one process (`vite` or `vite preview`) serves
// both the page and the API:
//
//   GET  /api/samples?set=mnist|digits8[&limit=N]   shipped test digits with labels
//   POST /api/session   {model, clientPublicKey[, pageParty]}  → {relay, session, parties}
//   POST /api/session   {model, tabs: true}                     → {relay, session, tokens}
//   GET  /api/session/SESSION/report                 the parties' own figures once it ended (or null)
//   GET  /api/servers[?ready=MODEL[&backend=B]]      the "3 servers" mesh: runs made ahead per model
//                                                    and backend (with ready=: once MODEL has one
//                                                    on B, default meteor, at the three)
//   GET  /api/docs/sdk                               the SDK's documentation (web/README.md), as text
//
// The deployment behind /api/session is deployment.mjs's business alone.
import { readFile } from 'node:fs/promises';
import { openSession, serversState } from './deployment.mjs';
import { samples } from './samples.mjs';

/** Largest request body accepted: a model name and a public key need far less. */
const MAX_BODY = 4096;

/** The SDK's documentation, linked from the page. */
const SDK_DOCS = new URL('../../../web/README.md', import.meta.url);

/** How long a finished session's report waits for the page to fetch it. */
const REPORT_KEPT_MS = 60_000;

/** The API as a Vite plugin, for `vite` (dev) and `vite preview` alike. */
export function demoApi() {
  let shutdown;
  return {
    name: 'ringfence-demo-api',
    configureServer(server) {
      shutdown = mount(server);
    },
    configurePreviewServer(server) {
      const stop = mount(server);
      server.httpServer?.once('close', stop);
    },
    // The dev server's `close()` awaits this hook: no relay or party outlives the server.
    async buildEnd() {
      await shutdown?.();
    },
  };
}

/**
 * Adds the API to a dev or preview server. Returns `shutdown()`, which stops the sessions
 * still running and resolves once their processes are gone.
 */
function mount(server) {
  const ending = new AbortController();
  const reports = new Map();
  // What shutdown waits for: sessions being opened, and sessions whose processes still run.
  const running = new Set();
  const track = (promise) => {
    running.add(promise);
    const untrack = () => running.delete(promise);
    promise.then(untrack, untrack);
    return promise;
  };
  server.middlewares.use('/api/', (req, res) => {
    route(req, { reports, track, signal: ending.signal })
      .then(({ status = 200, body, type }) => reply(res, status, body, type))
      .catch((e) => {
        // Refusals carry their status; anything else is the deployment failing, not the page.
        const status = Number.isInteger(e?.status) ? e.status : 502;
        if (status === 502) server.config.logger.error(`[ringfence-demo] ${e?.stack ?? e}`);
        reply(res, status, { error: String(e?.message ?? e) });
      });
  });
  return async () => {
    ending.abort();
    await Promise.allSettled(running);
  };
}

/** Answers one API request (the mount point `/api/` is already stripped from `req.url`). */
async function route(req, { reports, track, signal }) {
  const url = new URL(req.url, 'http://localhost');
  if (req.method === 'GET' && url.pathname === '/samples') {
    const limit = Number(url.searchParams.get('limit') ?? 48);
    const body = samples(url.searchParams.get('set') ?? 'mnist', Number.isInteger(limit) && limit > 0 ? limit : 48);
    return body ? { body } : { status: 404, body: { error: 'set must be mnist or digits8' } };
  }
  if (req.method === 'POST' && url.pathname === '/session') {
    const { model, clientPublicKey, pageParty, tabs } = await readJson(req);
    const { report, ...session } = await track(openSession({ model, clientPublicKey, pageParty, tabs, signal }));
    if (report) {
      reports.set(session.session, report);
      track(report).finally(() => setTimeout(() => reports.delete(session.session), REPORT_KEPT_MS).unref());
    }
    return { body: session };
  }
  if (req.method === 'GET' && url.pathname === '/servers') {
    const ready = url.searchParams.get('ready') ?? undefined;
    const backend = url.searchParams.get('backend') ?? undefined;
    return { body: await track(serversState({ ready, backend, signal })) };
  }
  if (req.method === 'GET' && url.pathname === '/docs/sdk') {
    // Markdown as plain text: every browser shows it (a `text/markdown` answer is downloaded).
    return { type: 'text/plain; charset=utf-8', body: await readFile(SDK_DOCS, 'utf8') };
  }
  const m = /^\/session\/([0-9a-f]{32})\/report$/.exec(url.pathname);
  if (req.method === 'GET' && m) {
    const report = reports.get(m[1]);
    // Not a 404: a page logs failed fetches as errors, and a deployment may give no report.
    if (!report) return { body: { parties: null } };
    reports.delete(m[1]);
    return { body: { parties: await report } };
  }
  return { status: 404, body: { error: `no API ${req.method} ${url.pathname}` } };
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
      if (body.length > MAX_BODY) {
        reject(Object.assign(new Error('request body too large'), { status: 413 }));
        req.destroy();
      }
    });
    req.on('end', () => {
      try {
        const value = JSON.parse(body);
        if (typeof value !== 'object' || value === null) throw new Error('not an object');
        resolve(value);
      } catch {
        reject(Object.assign(new Error('the body must be a JSON object'), { status: 400 }));
      }
    });
    req.on('error', reject);
  });
}

/** Answers `body` as JSON, or as is when a `type` is given. */
function reply(res, status, body, type) {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': type ?? 'application/json', 'cache-control': 'no-store' });
  res.end(type ? body : JSON.stringify(body));
}
