// A browser page and two native parties (`ringfence interop-party` / `session-party` with
// `--webrtc`) compute a product of edge values and a LeNet inference with the browser↔native
// pairs on direct WebRTC DataChannels (str0m on the native side), and fall back to the relay
// when a native party has no WebRTC: webrtc-native-netns.mjs, run inside a private network
// namespace (netns.mjs). Skipped, saying why, where `unshare -n` is not permitted.
import { netnsTest } from './netns.mjs';

netnsTest(
  'a browser party and two native parties compute over WebRTC DataChannels, or the relay when a native has none (in a private network namespace)',
  new URL('./webrtc-native-netns.mjs', import.meta.url),
  { timeout: 480_000 },
);
