//! Join tokens as the relay verifies them (`Trusted::verify`: parsing, the deployment's
//! Ed25519 signature, the expiry), and deployment keys read from hex. Input: 8 bytes of "now"
//! (u64 LE), then the token text. The relay trusts deployment `acme` with a fixed key; the seed
//! corpus holds tokens it signed.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_relay::token::{DeploymentKey, DeploymentPublicKey, Trusted};

/// The fixed deployment key of the target and its seeds.
const SEED: [u8; 32] = [0x42; 32];

fuzz_target!(|data: &[u8]| {
    let Some((now, text)) = data.split_first_chunk::<8>() else { return };
    let Ok(text) = std::str::from_utf8(text) else { return };
    let key = DeploymentKey::from_seed(SEED).expect("a fixed seed");
    let mut trusted = Trusted::default();
    trusted.add("acme", key.public());
    if let Ok(t) = trusted.verify(text, u64::from_le_bytes(*now)) {
        assert_eq!(t.deployment, "acme");
        assert!(t.expires >= u64::from_le_bytes(*now));
        // Only a token `acme`'s key signed verifies: re-signing what it grants gives it back
        // (up to the case of the signature's hex digits, which the parser accepts either way).
        assert_eq!(t.sign(&key), text.to_ascii_lowercase());
    }
    let _ = DeploymentPublicKey::from_hex(text);
    let _ = DeploymentKey::from_hex(text);
});
