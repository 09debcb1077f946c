//! No private key appears in the `Debug` output of key or configuration types.

use crate::common;

use std::time::Duration;

use ringfence_relay::{PrivateKey, Security, StaticKeypair};

#[test]
fn private_keys_never_print() {
    let (parties, keys) = common::parties(3, false, Duration::from_secs(1));
    for (p, k) in parties.iter().zip(&keys) {
        let secret = k.private.to_hex();
        let bytes = format!("{:?}", k.private.as_bytes());
        let texts = [
            format!("{:?}", k),
            format!("{:#?}", k),
            format!("{:?}", k.private),
            format!("{:?}", p.cfg),
            format!("{:#?}", p.cfg),
            format!("{:?}", p.cfg.security),
            format!("{:?}", PrivateKey::from_hex(&secret).unwrap()),
        ];
        for t in &texts {
            assert!(!t.contains(&secret) && !t.contains(&secret.to_uppercase()), "{t}");
            assert!(!t.contains(&bytes), "{t}");
            assert!(!t.contains(&secret[..16]), "{t}");
        }
        // Public keys are fine to print and help debugging.
        assert!(format!("{:?}", p.cfg).contains(&k.public.to_hex()));
    }
    let kp = StaticKeypair::generate().unwrap();
    let cfg = Security::Noise { keypair: kp.clone(), public_keys: vec![kp.public] };
    assert!(!format!("{cfg:?}").contains(&kp.private.to_hex()));
}
