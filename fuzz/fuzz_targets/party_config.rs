//! A server party's TOML configuration (`ringfence party --config FILE`), read and checked as
//! the binary does before it opens the files it names.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_relay::config::party::PartyConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(c) = PartyConfig::parse(text) {
        // A deployment of 1, 2, 3, 5 or 7 servers (spdz2k's one or two, rss's five or seven),
        // this party among them.
        let n = c.public_keys.len();
        assert!([1, 2, 3, 5, 7].contains(&n) && usize::from(c.party.0) < n);
        assert!(!c.models.is_empty());
        assert!(c.max_sessions > 0 && c.max_batch > 0 && !c.timeout.is_zero());
    }
});
