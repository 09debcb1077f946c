//! Shared harness: n parties over real loopback TCP, one thread and one current-thread tokio
//! runtime per party.

#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use ringfence_core::net::{PartyId, SessionId};
use ringfence_relay::{RelayError, Security, StaticKeypair, TcpTransport, TransportConfig};

/// The session all tests run.
pub const SESSION: SessionId = SessionId(*b"relay-test-sessn");

/// One party's configuration and bound listener.
pub struct Party {
    pub cfg: TransportConfig,
    pub listener: std::net::TcpListener,
}

/// Binds `n` loopback listeners and returns matching configurations.
pub fn parties(n: usize, plain: bool, recv_timeout: Duration) -> (Vec<Party>, Vec<StaticKeypair>) {
    let keys: Vec<StaticKeypair> = (0..n).map(|_| StaticKeypair::generate().unwrap()).collect();
    let listeners: Vec<std::net::TcpListener> =
        (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let addrs: Vec<SocketAddr> = listeners.iter().map(|l| l.local_addr().unwrap()).collect();
    let parties = listeners
        .into_iter()
        .enumerate()
        .map(|(i, listener)| {
            let security = if plain {
                Security::DangerInsecurePlain
            } else {
                Security::Noise {
                    keypair: keys[i].clone(),
                    public_keys: keys.iter().map(|k| k.public).collect(),
                }
            };
            let mut cfg = TransportConfig::new(PartyId(i as u8), addrs.clone(), security, SESSION);
            cfg.recv_timeout = recv_timeout;
            cfg.connect_timeout = Duration::from_secs(5);
            Party { cfg, listener }
        })
        .collect();
    (parties, keys)
}

/// Runs `f` for every party on its own thread and runtime, after connecting; returns the
/// results in party order.
pub fn run<F, Fut, O>(parties: Vec<Party>, f: F) -> Vec<O>
where
    F: Fn(PartyId, Result<TcpTransport, RelayError>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = O>,
    O: Send + 'static,
{
    let handles: Vec<_> = parties
        .into_iter()
        .map(|p| {
            let f = f.clone();
            std::thread::spawn(move || {
                let rt =
                    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                rt.block_on(async move {
                    p.listener.set_nonblocking(true).unwrap();
                    let l = tokio::net::TcpListener::from_std(p.listener).unwrap();
                    let me = p.cfg.me;
                    let t = TcpTransport::connect(p.cfg, Some(l)).await;
                    f(me, t).await
                })
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}
