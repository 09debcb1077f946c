//! Parties, transports and the protocol context.
//!
//! The core never touches a socket. A [`Transport`] is injected: it moves opaque frames between
//! this party and its peers (TCP+Noise natively, WebSocket/WebRTC in a browser, queues in tests)
//! and owns time (it turns a vanished peer into [`TransportError::Timeout`]). [`Ctx`] adds what
//! every protocol needs on top: framing with session/step/length checks, exact counters of bytes
//! and rounds, the operation counter that names PRG streams, and poisoning after a failure.
//! A session's [`Roster`] says who its compute parties and clients are.

pub mod frame;
mod roster;

use core::fmt;
use core::future::Future;

use crate::error::Error;
use crate::ring::{Ring, MAX_ELEMENT_BYTES, Z64};
pub use frame::{FrameError, SessionId};
pub use roster::Roster;

/// A participant's index in a session: compute parties are `0..n`, external input providers
/// (clients) take the ids after them (see [`Roster`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PartyId(pub u8);

impl PartyId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Debug for PartyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P{}", self.0)
    }
}

impl fmt::Display for PartyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P{}", self.0)
    }
}

/// A 32-byte digest as the four words of a control message.
pub(crate) fn digest_words(d: &[u8; 32]) -> Vec<Z64> {
    d.chunks(8).map(|c| Z64(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))).collect()
}

/// The digest in the first four words of `w` (the inverse of [`digest_words`]).
pub(crate) fn words_digest(w: &[Z64]) -> [u8; 32] {
    let mut d = [0; 32];
    for (c, z) in d.chunks_mut(8).zip(w) {
        c.copy_from_slice(&z.0.to_le_bytes());
    }
    d
}

/// Failure of the link to a peer, reported by a [`Transport`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The peer closed the link or vanished.
    #[error("link closed")]
    Closed,
    /// Nothing arrived within the transport's timeout.
    #[error("no frame within {0} ms")]
    Timeout(u64),
    /// The underlying I/O or crypto layer failed.
    #[error("{0}")]
    Io(String),
}

/// How much one peer may send that this party has not read yet: the most a [`Transport`]
/// buffers for it. A peer that goes beyond is cut off: its link fails with the reason, and so
/// does every later `recv` from it and `send` to it.
///
/// Protocols that know what a peer legitimately sends set it ([`Ctx::expect_from`]); a server
/// serving an untrusted client does, so that the client cannot make it buffer more than its
/// request needs (see [`crate::service`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvLimit {
    /// The largest frame, header included.
    pub max_frame: usize,
    /// Frame bytes, headers included, that may wait unread (received, not yet taken by `recv`).
    pub max_unread: usize,
}

impl RecvLimit {
    /// No limit beyond the transport's own (frames of at most [`frame::MAX_PAYLOAD`] bytes).
    pub const NONE: Self =
        Self { max_frame: frame::HEADER_LEN + frame::MAX_PAYLOAD, max_unread: usize::MAX };

    /// Exactly what messages of `sizes` payload bytes take when each travels as frames of at
    /// most `max_payload` bytes (as [`Ctx::send`] splits them).
    pub fn for_messages(sizes: &[usize], max_payload: usize) -> Self {
        let per = max_payload.max(1);
        let mut limit = Self { max_frame: frame::HEADER_LEN, max_unread: 0 };
        for &bytes in sizes {
            let frames = bytes.div_ceil(per).max(1);
            limit.max_frame = limit.max_frame.max(frame::HEADER_LEN + bytes.min(per));
            limit.max_unread = limit
                .max_unread
                .saturating_add(bytes)
                .saturating_add(frames.saturating_mul(frame::HEADER_LEN));
        }
        limit
    }

    /// The larger of two limits, field by field.
    pub fn max(self, other: Self) -> Self {
        Self {
            max_frame: self.max_frame.max(other.max_frame),
            max_unread: self.max_unread.max(other.max_unread),
        }
    }
}

/// Moves frames between this party and its peers.
///
/// `send` only queues: it must never wait for the peer to read, so that two parties sending to
/// each other in the same round cannot deadlock. `recv` resolves with the next frame from that
/// peer, in order, or fails when the link fails or the transport's timeout expires.
///
/// [`Ctx`] calls [`Transport::send_parts`] and [`Transport::recv_into`]. Their defaults go
/// through `send` and `recv` (owned frames: what a transport that queues frames for another task
/// needs); a transport that copies every frame anyway, e.g. across the JavaScript boundary,
/// overrides them to copy from the caller's slices and into the caller's reused buffer.
pub trait Transport {
    /// Queues `frame` for delivery to `to`.
    fn send(&mut self, to: PartyId, frame: Vec<u8>) -> Result<(), TransportError>;
    /// Waits for the next frame from `from`.
    fn recv(&mut self, from: PartyId) -> impl Future<Output = Result<Vec<u8>, TransportError>>;

    /// Queues the frame `header ‖ payload` for delivery to `to`. The default concatenates them
    /// into one `Vec` for [`Transport::send`].
    fn send_parts(
        &mut self,
        to: PartyId,
        header: &[u8],
        payload: &[u8],
    ) -> Result<(), TransportError> {
        let mut frame = Vec::with_capacity(header.len() + payload.len());
        frame.extend_from_slice(header);
        frame.extend_from_slice(payload);
        self.send(to, frame)
    }

    /// Waits for the next frame from `from` and puts it in `buf` in place of its contents. The
    /// caller keeps `buf` from one frame to the next. The default moves the frame of
    /// [`Transport::recv`] into `buf`.
    fn recv_into(
        &mut self,
        from: PartyId,
        buf: &mut Vec<u8>,
    ) -> impl Future<Output = Result<(), TransportError>> {
        async move {
            *buf = self.recv(from).await?;
            Ok(())
        }
    }

    /// Bounds what `from` may send from now on beyond what this party has read (see
    /// [`RecvLimit`]). The default ignores it: a transport that cannot bound a peer's buffer
    /// (in-memory queues in tests) keeps its own limits.
    fn limit_recv(&mut self, from: PartyId, limit: RecvLimit) {
        let _ = (from, limit);
    }
}

/// Exact communication counters of one party.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frame bytes sent (headers included), over all peers.
    pub bytes_sent: u64,
    /// Payload bytes sent (ring elements only), over all peers.
    pub payload_bytes_sent: u64,
    /// Frames sent.
    pub frames_sent: u64,
    /// Communication rounds this party took part in.
    pub rounds: u64,
}

impl core::ops::Sub for Stats {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self {
            bytes_sent: self.bytes_sent - o.bytes_sent,
            payload_bytes_sent: self.payload_bytes_sent - o.payload_bytes_sent,
            frames_sent: self.frames_sent - o.frames_sent,
            rounds: self.rounds - o.rounds,
        }
    }
}

/// A party's view of a running session: its id, its links, framing state and counters.
///
/// Protocols are `async fn`s taking `&mut Ctx<T>`. A round is opened by every party with
/// [`Ctx::round`] (also parties that send nothing in it), then filled with `send`s and `recv`s.
/// After any error the context is poisoned and every later call returns that error.
pub struct Ctx<T> {
    me: PartyId,
    session: SessionId,
    transport: T,
    send_step: Vec<u64>,
    recv_step: Vec<u64>,
    stats: Stats,
    op: u64,
    max_payload: usize,
    poisoned: Option<Error>,
    /// The last received frame: [`Transport::recv_into`] may reuse its allocation.
    recv_buf: Vec<u8>,
}

impl<T> fmt::Debug for Ctx<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("me", &self.me)
            .field("session", &self.session)
            .field("stats", &self.stats)
            .field("op", &self.op)
            .field("poisoned", &self.poisoned)
            .finish_non_exhaustive()
    }
}

impl<T: Transport> Ctx<T> {
    /// A context for party `me` among `participants` ids (compute parties plus clients).
    pub fn new(me: PartyId, participants: usize, session: SessionId, transport: T) -> Self {
        Self {
            me,
            session,
            transport,
            send_step: vec![0; participants],
            recv_step: vec![0; participants],
            stats: Stats::default(),
            op: 0,
            max_payload: frame::MAX_PAYLOAD,
            poisoned: None,
            recv_buf: Vec::new(),
        }
    }

    /// This party's id.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// How many participants the session has (compute parties plus clients).
    pub fn participants(&self) -> usize {
        self.send_step.len()
    }

    /// The session this context runs.
    pub fn session(&self) -> SessionId {
        self.session
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The transport, e.g. to read its own wire counters.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Gives the transport back (e.g. to close it).
    pub fn into_transport(self) -> T {
        self.transport
    }

    /// Starts a new operation and returns its number, the PRG domain of its randomness.
    ///
    /// Every party calls this at the same points of the program, so the numbers agree.
    pub fn next_op(&mut self) -> u64 {
        self.op += 1;
        self.op
    }

    /// Opens a communication round (counted once per party, whatever it sends or receives).
    pub fn round(&mut self) {
        self.stats.rounds += 1;
    }

    /// One round in which this party sends every one of `peers` a word and hears one from
    /// each: after it, none of them is still waiting for this party (a closing barrier).
    pub async fn barrier(&mut self, peers: &[PartyId]) -> Result<(), Error> {
        self.round();
        for &j in peers {
            self.send(j, &[crate::ring::Z64(0)])?;
        }
        for &j in peers {
            self.recv::<crate::ring::Z64>(j, 1).await?;
        }
        Ok(())
    }

    /// Fails with the poisoning error, if any.
    pub fn check(&self) -> Result<(), Error> {
        match &self.poisoned {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Poisons the context with `e` (every later call returns it) and gives `e` back: for a
    /// protocol that finds a peer at fault in well-framed data, which the framing cannot see.
    pub(crate) fn poison(&mut self, e: Error) -> Error {
        self.poisoned = Some(e.clone());
        e
    }

    fn link(&self, peer: PartyId) -> Result<usize, Error> {
        let i = peer.index();
        if i >= self.send_step.len() || peer == self.me {
            return Err(Error::ApiMisuse(format!("{} has no link to {peer}", self.me)));
        }
        Ok(i)
    }

    /// Sends `data` to `to`: one frame, or consecutive frames of at most [`frame::MAX_PAYLOAD`]
    /// bytes for very large batches (the receiver knows the length and reads the same split).
    pub fn send<R: Ring>(&mut self, to: PartyId, data: &[R]) -> Result<(), Error> {
        self.check()?;
        let i = self.link(to)?;
        let mut chunks = data.chunks(self.chunk_elems::<R>()).peekable();
        if chunks.peek().is_none() {
            return self.send_frame::<R>(i, to, &[]);
        }
        for chunk in chunks {
            self.send_frame(i, to, chunk)?;
        }
        Ok(())
    }

    /// Elements of `R` per frame when a batch must be split.
    fn chunk_elems<R: Ring>(&self) -> usize {
        (self.max_payload / R::BYTES).max(1)
    }

    /// Lowers the payload bytes per frame (default and maximum [`frame::MAX_PAYLOAD`], minimum
    /// one element of the widest ring, [`MAX_ELEMENT_BYTES`]), e.g. to test splitting. A
    /// session parameter: every party must use the same value.
    pub fn set_max_payload(&mut self, bytes: usize) {
        self.max_payload = bytes.clamp(MAX_ELEMENT_BYTES, frame::MAX_PAYLOAD);
    }

    /// Tells the transport that `from` may send, beyond what this party has read, only the
    /// messages of `sizes` elements of `R` (as [`Ctx::send`] frames them); more is cut off.
    pub fn expect_from<R: Ring>(&mut self, from: PartyId, sizes: &[usize]) {
        let bytes: Vec<usize> = sizes.iter().map(|n| n.saturating_mul(R::BYTES)).collect();
        let limit = RecvLimit::for_messages(&bytes, self.max_payload);
        self.transport.limit_recv(from, limit);
    }

    /// Tells the transport what `from` may send beyond what this party has read.
    pub fn limit_from(&mut self, from: PartyId, limit: RecvLimit) {
        self.transport.limit_recv(from, limit);
    }

    fn send_frame<R: Ring>(&mut self, i: usize, to: PartyId, data: &[R]) -> Result<(), Error> {
        let len = data.len() * R::BYTES;
        let header = frame::header(self.session, self.send_step[i], len);
        // The payload is `data`'s own bytes (no copy) wherever the encoding is the memory layout.
        let mut scratch = Vec::new();
        let payload = R::wire_bytes(data, &mut scratch);
        self.send_step[i] += 1;
        self.stats.bytes_sent += (header.len() + payload.len()) as u64;
        self.stats.payload_bytes_sent += len as u64;
        self.stats.frames_sent += 1;
        self.transport
            .send_parts(to, &header, payload)
            .map_err(|source| self.poison(Error::Transport { peer: to, source }))
    }

    /// Sends `to` an abort notice ([`frame::ABORT_NOTICE`]: a check failed) in place of the next
    /// frame on that link. Sent even when the context is poisoned, since it reports exactly
    /// that; it carries nothing of the run.
    pub fn send_abort_notice(&mut self, to: PartyId) -> Result<(), Error> {
        let i = self.link(to)?;
        let header = frame::header(self.session, self.send_step[i], frame::ABORT_NOTICE as usize);
        let code = frame::ABORT_CHECK_FAILED.to_le_bytes();
        self.send_step[i] += 1;
        self.stats.bytes_sent += (header.len() + code.len()) as u64;
        self.stats.frames_sent += 1;
        self.transport
            .send_parts(to, &header, &code)
            .map_err(|source| Error::Transport { peer: to, source })
    }

    /// Receives exactly `n` elements from `from`, checking session, step and length.
    pub async fn recv<R: Ring>(&mut self, from: PartyId, n: usize) -> Result<Vec<R>, Error> {
        let mut out = Vec::with_capacity(n);
        self.recv_into(from, n, &mut out).await?;
        Ok(out)
    }

    /// Like [`Ctx::recv`], appending to `out`.
    pub async fn recv_into<R: Ring>(
        &mut self,
        from: PartyId,
        n: usize,
        out: &mut Vec<R>,
    ) -> Result<(), Error> {
        self.check()?;
        let i = self.link(from)?;
        out.reserve(n);
        let per = self.chunk_elems::<R>();
        let mut left = n;
        loop {
            let take = left.min(per);
            self.recv_frame(i, from, take, out).await?;
            left -= take;
            if left == 0 {
                return Ok(());
            }
        }
    }

    async fn recv_frame<R: Ring>(
        &mut self,
        i: usize,
        from: PartyId,
        n: usize,
        out: &mut Vec<R>,
    ) -> Result<(), Error> {
        if let Err(source) = self.transport.recv_into(from, &mut self.recv_buf).await {
            return Err(self.poison(Error::Transport { peer: from, source }));
        }
        let checked = frame::check(&self.recv_buf, self.session, self.recv_step[i], n * R::BYTES)
            .and_then(|p| match R::first_invalid(p) {
                Some(at) => Err(FrameError::InvalidElement(at / R::BYTES)),
                None => Ok(p),
            });
        match checked {
            Ok(payload) => {
                R::decode(payload, out);
                self.recv_step[i] += 1;
                Ok(())
            }
            Err(FrameError::Aborted(code)) => Err(self.poison(Error::Abort {
                blame: None,
                reason: match code {
                    frame::ABORT_CHECK_FAILED => format!("{from} stopped the run: a check failed"),
                    other => format!("{from} stopped the run (reason code {other})"),
                },
            })),
            Err(reason) => Err(self.poison(Error::PeerMisbehaved { peer: from, reason })),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use super::*;
    use crate::rep3::{next, prev, Rep3};
    use crate::ring::{Z128, Z64};
    use crate::testing::{self, MemTransport, Net};

    /// A transport with only the borrowed-slice methods, as the wasm one copies frames: `send`
    /// and `recv` panic, so the context must use `send_parts` and `recv_into`.
    struct Borrowing {
        inner: MemTransport,
        /// Frames received, and how many of them found `buf` already big enough.
        received: Rc<Cell<(usize, usize)>>,
    }

    impl Transport for Borrowing {
        fn send(&mut self, _: PartyId, _: Vec<u8>) -> Result<(), TransportError> {
            unreachable!("the context sends through send_parts")
        }

        async fn recv(&mut self, _: PartyId) -> Result<Vec<u8>, TransportError> {
            unreachable!("the context receives through recv_into")
        }

        fn send_parts(
            &mut self,
            to: PartyId,
            header: &[u8],
            payload: &[u8],
        ) -> Result<(), TransportError> {
            self.inner.send(to, [header, payload].concat())
        }

        async fn recv_into(
            &mut self,
            from: PartyId,
            buf: &mut Vec<u8>,
        ) -> Result<(), TransportError> {
            let frame = self.inner.recv(from).await?;
            let (n, reused) = self.received.get();
            self.received.set((n + 1, reused + usize::from(buf.capacity() >= frame.len())));
            buf.clear();
            buf.extend_from_slice(&frame);
            Ok(())
        }
    }

    async fn program<T: Transport>(mut p: Rep3<T>) -> Result<(Vec<Vec<Z64>>, Stats), Error> {
        let x = p.random::<Z64>(300);
        let y = p.random::<Z64>(300);
        let mut out = Vec::new();
        for _ in 0..3 {
            let z = p.mul(&x, &y).await?;
            out.push(p.reveal(z).await?);
        }
        Ok((out, p.ctx().stats()))
    }

    #[test]
    fn a_transport_may_send_borrowed_parts_and_receive_into_the_contexts_buffer() {
        let plain = testing::run_rep3(5, program::<MemTransport>);

        let roster = Roster::THREE;
        let net = Net::new(roster.n());
        let received = Rc::new(Cell::new((0, 0)));
        let seeds = testing::rep3_seeds(5);
        type Out = Result<(Vec<Vec<Z64>>, Stats), Error>;
        let futs: Vec<testing::PartyFuture<'_, Out>> = seeds
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let me = PartyId(i as u8);
                let t = Borrowing { inner: net.transport(me), received: received.clone() };
                let ctx = Ctx::new(me, roster.n(), SessionId([1; 16]), t);
                Box::pin(async move { program(Rep3::setup(ctx, s).await?).await })
                    as testing::PartyFuture<'_, Out>
            })
            .collect();
        let borrowed: Vec<_> = net.run(futs).into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(borrowed, plain, "same outputs and counters as with owned frames");
        let (frames, reused) = received.get();
        // Each party receives 2 frames in the setup, then 1 per mul and 1 per reveal.
        assert_eq!(frames, 3 * (2 + 3 * 2));
        assert!(
            reused >= frames / 2,
            "buf keeps its allocation between frames ({reused}/{frames})"
        );
    }

    /// Z_2^128 elements cross the links byte for byte, in one frame and split over several:
    /// the smallest payload limit still holds one 16-byte element.
    #[test]
    fn z128_elements_round_trip_through_frames() {
        let data: Vec<Z128> = [0, 1, u128::MAX, 1 << 127, (1 << 127) - 1, 1 << 64, 0xfeed << 90]
            .into_iter()
            .map(Z128)
            .collect();
        for limit in [frame::MAX_PAYLOAD, 48, 1] {
            let outs = testing::run_rep3(7, |mut p| {
                let data = data.clone();
                async move {
                    let ctx = p.ctx_mut();
                    ctx.set_max_payload(limit);
                    let me = ctx.me();
                    let before = ctx.stats();
                    ctx.round();
                    ctx.send(next(me), &data)?;
                    let got = ctx.recv::<Z128>(prev(me), data.len()).await?;
                    Ok((got, ctx.stats() - before))
                }
            });
            let per_frame = (limit.max(MAX_ELEMENT_BYTES) / 16).min(data.len());
            for (got, cost) in outs {
                assert_eq!(got, data, "payload limit {limit}");
                assert_eq!(cost.payload_bytes_sent, 16 * data.len() as u64);
                assert_eq!(cost.frames_sent, data.len().div_ceil(per_frame) as u64);
            }
        }
    }
}
