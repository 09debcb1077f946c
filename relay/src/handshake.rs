//! Link establishment over a byte stream: drives the sans-IO [`Handshake`] of
//! `ringfence-link` (hello, then Noise `KK` or the insecure nonce exchange; see there for the
//! bytes and what they prove) over any ordered byte stream ([`Duplex`]): a TCP connection, or
//! one peer's virtual stream multiplexed over a WebSocket to the relay (`crate::ws`).
//!
//! Reads are exact (what the handshake still wants), so no record bytes are read ahead.

use ringfence_core::net::PartyId;
use ringfence_link::{Established, Handshake, LinkEnds};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use zeroize::Zeroizing;

use crate::error::RelayError;

/// An ordered, reliable byte stream a link runs over, splittable into independently owned
/// halves for the link's reader and writer tasks.
pub(crate) trait Duplex: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// The read half.
    type Reader: AsyncRead + Unpin + Send + 'static;
    /// The write half.
    type Writer: AsyncWrite + Unpin + Send + 'static;
    /// Splits the stream.
    fn into_halves(self) -> (Self::Reader, Self::Writer);
}

impl Duplex for TcpStream {
    type Reader = OwnedReadHalf;
    type Writer = OwnedWriteHalf;
    fn into_halves(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        self.into_split()
    }
}

/// An authenticated link with its stream, ready for the record layer.
pub(crate) struct Handshaken<S> {
    pub(crate) stream: S,
    pub(crate) link: Established,
}

/// Runs the dialer's side with `peer` over a freshly connected `stream`.
pub(crate) async fn dial<S: Duplex>(
    ends: LinkEnds<'_>,
    peer: PartyId,
    stream: S,
) -> Result<Handshaken<S>, RelayError> {
    let h = Handshake::dial(ends, peer, &*entropy()?)?;
    drive(h, stream, Some(peer)).await
}

/// Runs the acceptor's side over an accepted `stream`; the peer is whoever the hello names,
/// provided the handshake proves it.
pub(crate) async fn accept<S: Duplex>(
    ends: LinkEnds<'_>,
    stream: S,
) -> Result<Handshaken<S>, RelayError> {
    let h = Handshake::accept(ends, &*entropy()?)?;
    drive(h, stream, None).await
}

async fn drive<S: Duplex>(
    mut h: Handshake,
    mut stream: S,
    dialled: Option<PartyId>,
) -> Result<Handshaken<S>, RelayError> {
    let fail = |h: &Handshake, what: &str, e: std::io::Error| {
        let peer = h.peer().or(dialled).unwrap_or(PartyId(u8::MAX));
        RelayError::Handshake { peer, reason: format!("{what}: {e}") }
    };
    loop {
        let out = h.take_output();
        if !out.is_empty() {
            stream.write_all(&out).await.map_err(|e| fail(&h, "sending handshake", e))?;
        }
        if h.is_done() {
            break;
        }
        let mut buf = vec![0u8; h.wants()];
        stream.read_exact(&mut buf).await.map_err(|e| fail(&h, "reading handshake", e))?;
        h.handle_input(&buf)?;
    }
    Ok(Handshaken { stream, link: h.finish()? })
}

/// 32 fresh bytes from the OS for the handshake's ephemeral key or nonce.
fn entropy() -> Result<Zeroizing<[u8; 32]>, RelayError> {
    let mut b = Zeroizing::new([0u8; 32]);
    getrandom::fill(&mut *b).map_err(|e| RelayError::Crypto(format!("OS random source: {e}")))?;
    Ok(b)
}
