//! A party holding a different static key than the one its peers expect is refused at the
//! handshake, by both the party it dials and the party that dials it.

use crate::common;

use std::time::Duration;

use ringfence_core::net::PartyId;
use ringfence_relay::{RelayError, Security, StaticKeypair};

#[test]
fn an_impostor_key_is_refused_at_handshake() {
    let (mut parties, keys) = common::parties(3, false, Duration::from_secs(1));
    // P1 runs with a fresh key; P0 and P2 still expect the original one.
    let impostor = StaticKeypair::generate().unwrap();
    let mut public_keys: Vec<_> = keys.iter().map(|k| k.public).collect();
    public_keys[1] = impostor.public;
    parties[1].cfg.security = Security::Noise { keypair: impostor, public_keys };
    for p in &mut parties {
        p.cfg.connect_timeout = Duration::from_millis(1500);
    }
    let results = common::run(parties, |me, t| async move { (me, t.map(|_| ()).unwrap_err()) });
    for (me, e) in results {
        let text = e.to_string();
        match me {
            // P0 dials P1, which cannot complete KK with P0's expectation: P0 fails the dial,
            // at the handshake or (when P1 already gave up after P2 rejected it and closed its
            // port) at the connection. Either way the error names P1.
            PartyId(0) => assert!(
                matches!(e, RelayError::Handshake { peer: PartyId(1), .. })
                    || matches!(&e, RelayError::Io { context, .. } if context.contains("dialling P1")),
                "{me}: {text}"
            ),
            // P1 rejects P0 and is rejected by P2; P2 rejects P1's dial.
            _ => {
                assert!(
                    matches!(e, RelayError::Handshake { .. } | RelayError::ConnectTimeout { .. }),
                    "{me}: {text}"
                );
            }
        }
        if me == PartyId(2) {
            assert!(text.contains("rejected"), "{text}");
        }
    }
}
