//! A peer speaking link v1 (hello magic "RFNC1", whose pairwise seeds anyone who saw the
//! handshake could recompute) is refused by a native party with the reason, not by a bare
//! handshake failure.

use crate::common;

use std::io::Write;
use std::time::Duration;

use ringfence_relay::RelayError;

#[test]
fn a_link_v1_peer_is_refused_with_the_reason() {
    let (mut parties, _) = common::parties(2, false, Duration::from_secs(1));
    parties[1].cfg.connect_timeout = Duration::from_millis(1500);
    let p1 = parties[1].listener.local_addr().unwrap();
    // P0's place is taken by a v1 dialer: its hello (magic, Noise mode 1, P0 → P1, the session)
    // and a message 1 of the right size.
    drop(parties.remove(0));
    let dialer = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(p1).unwrap();
        let mut wire = b"RFNC1".to_vec();
        wire.extend_from_slice(&[1, 0, 1]);
        wire.extend_from_slice(&common::SESSION.0);
        wire.extend_from_slice(&49u16.to_be_bytes());
        wire.extend_from_slice(&[0x5a; 49]);
        s.write_all(&wire).unwrap();
        // Held open until P1 has given up, so the refusal is P1's verdict on the hello.
        std::thread::sleep(Duration::from_millis(2500));
    });
    let results = common::run(parties, |_, t| async move { t.map(|_| ()).unwrap_err() });
    dialer.join().unwrap();
    let e = &results[0];
    let RelayError::ConnectTimeout { last_rejected: Some(why), .. } = e else {
        panic!("expected a refusal with its reason: {e}")
    };
    assert!(why.contains("link v1") && why.contains("public data"), "{e}");
    assert!(why.contains("upgrade"), "{e}");
}
