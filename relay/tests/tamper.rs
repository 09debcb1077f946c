//! A man in the middle that flips one ciphertext byte makes the receiver fail with an I/O
//! error (no panic, no corrupted frame delivered); the sender's other links are unaffected.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use ringfence_core::net::{Ctx, PartyId, TransportError};
use ringfence_core::ring::Z64;
use ringfence_core::Error;

/// Forwards one connection from `listener` to `target`, flipping the byte at stream offset `at`
/// in the dialer-to-acceptor direction.
fn flipping_proxy(listener: TcpListener, target: std::net::SocketAddr, at: usize) {
    std::thread::spawn(move || {
        let Ok((mut down, _)) = listener.accept() else { return };
        let Ok(mut up) = TcpStream::connect(target) else { return };
        let (mut down2, mut up2) = (down.try_clone().unwrap(), up.try_clone().unwrap());
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut up2, &mut down2);
        });
        let mut buf = [0u8; 4096];
        let mut seen = 0;
        while let Ok(n) = down.read(&mut buf) {
            if n == 0 {
                break;
            }
            if (seen..seen + n).contains(&at) {
                buf[at - seen] ^= 0x01;
            }
            seen += n;
            if up.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
}

#[test]
fn a_flipped_ciphertext_byte_is_an_error_not_a_panic() {
    let (mut parties, _) = common::parties(3, false, Duration::from_secs(3));
    // P0 dials P1 through the proxy. The handshake is 24 + 2 + 48 bytes; flip inside the first
    // record after it.
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_addr = proxy.local_addr().unwrap();
    flipping_proxy(proxy, parties[1].cfg.addrs[1], 74 + 40);
    parties[0].cfg.addrs[1] = proxy_addr;
    let results = common::run(parties, |me, t| async move {
        let mut ctx = Ctx::new(me, 3, common::SESSION, t.unwrap());
        ctx.round();
        let data: Vec<Z64> = (0..1000).map(Z64).collect();
        for j in 0..3u8 {
            if j != me.0 {
                ctx.send(PartyId(j), &data).unwrap();
            }
        }
        // Receive from P0 last: after the tampered link fails, the context is poisoned.
        let mut out = Vec::new();
        for j in [2u8, 1, 0] {
            if j != me.0 {
                out.push((j, ctx.recv::<Z64>(PartyId(j), 1000).await.map(|v| v == data)));
            }
        }
        (me, out)
    });
    for (me, out) in results {
        for (from, r) in out {
            if (me, from) == (PartyId(1), 0) {
                match r {
                    Err(Error::Transport { source: TransportError::Io(m), .. }) => {
                        assert!(m.contains("decrypt"), "{m}")
                    }
                    other => panic!("tampered link gave {other:?}"),
                }
            } else {
                assert_eq!(r, Ok(true), "{me} from P{from}");
            }
        }
    }
}
