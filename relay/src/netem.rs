//! A user-space network emulator for benchmarks: a TCP forwarder that gives every byte a
//! one-way delay and a bottleneck rate, in each direction.
//!
//! Why not `tc netem`: the benchmark machines' kernels ship without the `sch_netem` qdisc
//! (`tc qdisc add dev lo root netem delay 35ms` fails with "Specified qdisc kind is unknown"),
//! and nothing can be loaded. This forwarder emulates the same link model at the application
//! boundary: a byte entering at time t leaves the bottleneck at
//! `max(t, previous departure) + 8·len/rate` and is delivered `delay` later. The sender is held
//! back until its bytes have left the bottleneck, so a fast sender cannot queue unboundedly.
//! What it does not model: loss, jitter, and TCP's own window dynamics over a long fat pipe.
//!
//! ```no_run
//! # async fn f(party: std::net::SocketAddr) -> std::io::Result<()> {
//! use ringfence_relay::netem::{LinkShape, ShapedProxy};
//! let proxy = ShapedProxy::start(party, LinkShape::METEOR_WAN).await?;
//! // Peers dial proxy.addr() instead of `party`: 70 ms RTT, 320 Mbit/s each way.
//! # let _ = proxy.addr(); Ok(()) }
//! ```

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The emulated link, per direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkShape {
    /// One-way propagation delay (the round-trip time is twice this).
    pub delay: Duration,
    /// Bottleneck rate in bits per second.
    pub rate_bps: f64,
}

impl LinkShape {
    /// The METEOR paper's WAN: 70 ms round trip, 320 Mbit/s.
    pub const METEOR_WAN: Self = Self { delay: Duration::from_millis(35), rate_bps: 320e6 };

    /// A link with round-trip time `rtt` and `mbit` Mbit/s.
    pub fn new(rtt: Duration, mbit: f64) -> Self {
        Self { delay: rtt / 2, rate_bps: mbit * 1e6 }
    }

    /// Time the bottleneck takes to send `bytes`.
    fn serialization(&self, bytes: usize) -> Duration {
        Duration::from_secs_f64(bytes as f64 * 8.0 / self.rate_bps)
    }
}

/// A running forwarder: connections to [`ShapedProxy::addr`] are forwarded to the target
/// through the emulated link. Dropping it stops accepting and ends its connections.
pub struct ShapedProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl ShapedProxy {
    /// Listens on an ephemeral loopback port and forwards every connection to `target`.
    pub async fn start(target: SocketAddr, shape: LinkShape) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((inbound, _)) = listener.accept().await {
                conns.spawn(async move {
                    if let Ok(outbound) = TcpStream::connect(target).await {
                        forward(inbound, outbound, shape).await;
                    }
                });
            }
        });
        Ok(Self { addr, task })
    }

    /// The address peers dial instead of the target.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for ShapedProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Forwards both directions until either side closes.
async fn forward(a: TcpStream, b: TcpStream, shape: LinkShape) {
    let _ = a.set_nodelay(true);
    let _ = b.set_nodelay(true);
    let (ar, aw) = a.into_split();
    let (br, bw) = b.into_split();
    tokio::join!(direction(ar, bw, shape), direction(br, aw, shape));
}

/// One direction: the reader paces itself at the bottleneck rate and timestamps each chunk;
/// the writer delivers each chunk at its timestamp.
async fn direction(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, shape: LinkShape) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let reader = async move {
        let mut free_at = Instant::now();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let departs = free_at.max(Instant::now()) + shape.serialization(n);
            free_at = departs;
            if tx.send((departs + shape.delay, buf[..n].to_vec())).is_err() {
                break;
            }
            // Back-pressure: the next read waits until these bytes have left the bottleneck.
            tokio::time::sleep_until(departs).await;
        }
    };
    let writer = async move {
        while let Some((at, bytes)) = rx.recv().await {
            tokio::time::sleep_until(at).await;
            if to.write_all(&bytes).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(reader, writer);
}
