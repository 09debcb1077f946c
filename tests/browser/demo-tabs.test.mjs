// The demo app's "three tabs" deployment: the demo page and three party windows in Chromium,
// the parties linked by WebRTC DataChannels. demo-tabs-netns.mjs, run inside a private network
// namespace (netns.mjs) so that ICE never sees a real interface; skipped, saying why, where
// `unshare -n` is not permitted.
import { netnsTest } from './netns.mjs';

netnsTest(
  'demo: three party tabs classify over WebRTC (in a private network namespace)',
  new URL('./demo-tabs-netns.mjs', import.meta.url),
  { timeout: 660_000 },
);
