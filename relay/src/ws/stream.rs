//! One peer's virtual byte stream over the relay connection: what the Noise handshake and the
//! record layer run on, exactly as they run on a TCP stream.
//!
//! The client's WebSocket reader pushes every payload from a peer into that peer's
//! [`Inbox`] without ever waiting (an unbounded queue with a cap on unread bytes): one peer
//! whose frames the party is not reading yet must not hold up the frames of another, or two
//! parties could deadlock behind the shared connection. Writes become relay messages
//! `[to] ‖ bytes` on one outgoing queue.

use core::pin::Pin;
use core::task::{Context, Poll};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

use crate::handshake::Duplex;
use crate::link::Allowance;
use ringfence_core::net::PartyId;

/// What the WebSocket reader hands a peer's inbox.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// Payload bytes (never empty).
    Data(Vec<u8>),
    /// The peer left: its link has ended (end of stream).
    End,
    /// The relay connection failed.
    Failed(String),
}

/// The sending side of a peer's inbox, held by the WebSocket reader.
#[derive(Clone)]
pub(crate) struct InboxTx {
    tx: mpsc::UnboundedSender<Inbound>,
    unread: Arc<AtomicUsize>,
    max_unread: usize,
    /// The peer's link allowance: a limited peer's unread bytes are capped by it too.
    allowance: Arc<Allowance>,
    peer: PartyId,
}

/// The receiving side: payloads from one peer, in order.
pub(crate) struct Inbox {
    rx: mpsc::UnboundedReceiver<Inbound>,
    unread: Arc<AtomicUsize>,
}

/// A new inbox refusing more than `max_unread` bytes waiting to be read, or less if the peer's
/// `allowance` says so ([`Allowance::stream_cap`]).
pub(crate) fn inbox(
    peer: PartyId,
    max_unread: usize,
    allowance: Arc<Allowance>,
) -> (InboxTx, Inbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    let unread = Arc::new(AtomicUsize::new(0));
    let tx = InboxTx { tx, unread: unread.clone(), max_unread, allowance, peer };
    (tx, Inbox { rx, unread })
}

impl InboxTx {
    /// Queues `item`; a payload over the unread cap fails the inbox instead (the peer floods).
    pub(crate) fn push(&self, item: Inbound) {
        let item = match item {
            Inbound::Data(d) => {
                let before = self.unread.fetch_add(d.len(), Ordering::AcqRel);
                let cap = self.allowance.stream_cap(self.max_unread);
                if before > cap {
                    return; // failed already (what failed it stays counted): dropped
                }
                if before + d.len() > cap {
                    let why = format!(
                        "{} has more than {cap} bytes waiting to be read: cut off",
                        self.peer
                    );
                    Inbound::Failed(self.allowance.cut_off(why).to_string())
                } else {
                    Inbound::Data(d)
                }
            }
            other => other,
        };
        // The receiver is gone only once the link is dropped: nothing left to deliver to.
        let _ = self.tx.send(item);
    }
}

impl Inbox {
    /// The next item; `None` when the WebSocket reader is gone (treated as end of stream).
    pub(crate) async fn recv(&mut self) -> Option<Inbound> {
        let item = self.rx.recv().await;
        if let Some(Inbound::Data(d)) = &item {
            self.unread.fetch_sub(d.len(), Ordering::AcqRel);
        }
        item
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Inbound>> {
        let item = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(Inbound::Data(d))) = &item {
            self.unread.fetch_sub(d.len(), Ordering::AcqRel);
        }
        item
    }
}

/// Messages for the relay, already addressed (`[to] ‖ payload`).
pub(crate) type Outbox = mpsc::UnboundedSender<Vec<u8>>;

/// The read half of a peer stream.
pub(crate) struct PeerReader {
    inbox: Inbox,
    chunk: Vec<u8>,
    pos: usize,
    done: bool,
}

/// The write half of a peer stream: each write becomes one relay message of at most
/// `max_chunk` payload bytes.
pub(crate) struct PeerWriter {
    to: u8,
    out: Outbox,
    max_chunk: usize,
}

/// A peer stream: its two halves joined for the handshake.
pub(crate) type PeerStream = tokio::io::Join<PeerReader, PeerWriter>;

/// The byte stream to peer `to` over the relay connection.
pub(crate) fn peer_stream(to: u8, inbox: Inbox, out: Outbox, max_chunk: usize) -> PeerStream {
    tokio::io::join(
        PeerReader { inbox, chunk: Vec::new(), pos: 0, done: false },
        PeerWriter { to, out, max_chunk: max_chunk.max(1) },
    )
}

impl Duplex for PeerStream {
    type Reader = PeerReader;
    type Writer = PeerWriter;
    fn into_halves(self) -> (PeerReader, PeerWriter) {
        self.into_inner()
    }
}

impl AsyncRead for PeerReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = &mut *self;
        while me.pos == me.chunk.len() && !me.done {
            match me.inbox.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Inbound::Data(d))) => (me.chunk, me.pos) = (d, 0),
                Poll::Ready(Some(Inbound::End) | None) => me.done = true,
                Poll::Ready(Some(Inbound::Failed(e))) => {
                    me.done = true;
                    return Poll::Ready(Err(io::Error::other(e)));
                }
            }
        }
        let n = buf.remaining().min(me.chunk.len() - me.pos);
        buf.put_slice(&me.chunk[me.pos..me.pos + n]);
        me.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for PeerWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let n = buf.len().min(self.max_chunk);
        let mut msg = Vec::with_capacity(n + 1);
        msg.push(self.to);
        msg.extend_from_slice(&buf[..n]);
        match self.out.send(msg) {
            Ok(()) => Poll::Ready(Ok(n)),
            Err(_) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the relay connection is closed",
            ))),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// The relay has no half-close: the peer sees the end of this link when this party leaves.
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
