// Join tokens issued by a web backend in Node, without the `ringfence` binary: the same string
// `ringfence token issue` prints (relay/src/token.rs), an Ed25519 signature by the deployment's
// signing key over "ringfence join token v1\0" followed by the token's body
// "rf1.{deployment}.{session: 32 hex | any}.{party}.{expires: unix seconds}".
import { createPrivateKey, sign } from 'node:crypto';

const CONTEXT = Buffer.from('ringfence join token v1\0');
// PKCS #8 DER header of an Ed25519 private key, followed by its 32-byte seed.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The signing key from the file `ringfence token key --out FILE` wrote (64 hex digits). */
export function deploymentKey(fileText) {
  const seed = Buffer.from(fileText.trim(), 'hex');
  if (seed.length !== 32) throw new Error('a deployment key is 64 hex digits');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
}

/**
 * A token admitting participant `party` (3 for the client of three server parties) to `session`
 * (16 bytes, or 'any' for a server party) of `deployment`, valid for `ttlSecs` from `now` (ms).
 */
export function issueToken(key, { deployment, session, party = 3, ttlSecs = 600, now = Date.now() }) {
  const expires = Math.floor(now / 1000) + ttlSecs;
  const sessionText = session === 'any' ? 'any' : Buffer.from(session).toString('hex');
  const body = `rf1.${deployment}.${sessionText}.${party}.${expires}`;
  return `${body}.${sign(null, Buffer.concat([CONTEXT, Buffer.from(body)]), key).toString('hex')}`;
}
