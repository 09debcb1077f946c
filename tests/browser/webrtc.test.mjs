// Three browser pages as the three parties, over direct WebRTC DataChannels (RtcTransport),
// computing a product and a LeNet inference: webrtc-netns.mjs, run inside a private network
// namespace (netns.mjs), where ICE finds loopback and a veth pair that exists only there —
// never a real interface. Skipped, saying why, where `unshare -n` is not permitted.
import { netnsTest } from './netns.mjs';

netnsTest(
  'three browser pages compute a product and LeNet over WebRTC DataChannels (in a private network namespace)',
  new URL('./webrtc-netns.mjs', import.meta.url),
  { timeout: 360_000 },
);
