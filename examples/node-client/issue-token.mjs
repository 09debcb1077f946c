// Join tokens issued by a web backend in Node, without the `ringfence` binary: the same string
// `ringfence token issue` prints (relay/src/token.rs), an Ed25519 signature by the deployment's
// signing key over a context followed by the token's body:
//   "ringfence join token v1\0" + "rf1.{deployment}.{session: 32 hex | any}.{party}.{expires: unix seconds}"
//   "ringfence join token v2\0" + "rf2.{deployment}.{session}.{party}.{client key: 64 hex}.{expires}"
// A client inviting the deployment's server parties needs the rf2 form, bound to the Noise
// public key its page or app sent: the server parties refuse the session for any other key.
import { createPrivateKey, sign } from 'node:crypto';

const CONTEXT = Buffer.from('ringfence join token v1\0');
const CONTEXT_V2 = Buffer.from('ringfence join token v2\0');
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
 * (16 bytes, or 'any' for a server party) of `deployment`, valid for `ttlSecs` from `now` (ms);
 * with `clientKey` (the client's 32-byte Noise public key, or its hex), bound to that key.
 */
export function issueToken(key, { deployment, session, party = 3, clientKey, ttlSecs = 600, now = Date.now() }) {
  const expires = Math.floor(now / 1000) + ttlSecs;
  const sessionText = session === 'any' ? 'any' : Buffer.from(session).toString('hex');
  const keyText = clientKey === undefined ? undefined : (typeof clientKey === 'string' ? clientKey : Buffer.from(clientKey).toString('hex')).toLowerCase();
  if (keyText !== undefined && !/^[0-9a-f]{64}$/.test(keyText)) throw new Error('clientKey must be 32 bytes (or 64 hex digits)');
  const body = keyText === undefined
    ? `rf1.${deployment}.${sessionText}.${party}.${expires}`
    : `rf2.${deployment}.${sessionText}.${party}.${keyText}.${expires}`;
  const context = keyText === undefined ? CONTEXT : CONTEXT_V2;
  return `${body}.${sign(null, Buffer.concat([context, Buffer.from(body)]), key).toString('hex')}`;
}
