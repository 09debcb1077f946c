//! End to end: one server's view plus the relay's transcript of the link it is not on
//! (security review, item 1).
//!
//! A 3-party session whose pairwise seeds come from real link handshakes (recorded byte for
//! byte as the relay forwards them) shares a METEOR client's input and, in `rep3`, a weight of
//! the model owner P0. The attacker is P1, a semi-honest server: it keeps what it receives and
//! the two seeds it holds, and lacks only the seed of the P0–P2 link. With that seed it
//! unmasks both exactly (the attack is real); the test then hands it what the relay's
//! transcript of the P0–P2 handshake yields instead. Under link v1's derivation that transcript
//! gave the seed away; under link v2 no derivation of it does.
//!
//! This runs at the level of the link handshake and the core protocol on the in-memory network
//! (`ringfence_core::testing::Net`), not through a relay process: the relay forwards the
//! handshake bytes unchanged, so the recorded bytes are its transcript.

mod transcript;

use ringfence_core::meteor::client::MeteorClient;
use ringfence_core::meteor::Meteor;
use ringfence_core::net::frame::HEADER_LEN;
use ringfence_core::net::{Ctx, PartyId, SessionId};
use ringfence_core::prg::{Prg, Seed};
use ringfence_core::rep3::{Rep3, Rep3Seeds};
use ringfence_core::ring::{IntRing, Ring, Z64};
use ringfence_core::testing::{Envelope, Net, PartyFuture};
use ringfence_core::Error;
use ringfence_link::NOISE_PROTOCOL;
use transcript::{keypairs, observe, public_derivations, record_link, v1_seed, Observed, Wire};

const SESSION: SessionId = SessionId(*b"seed-attack-sess");
const CLIENT: PartyId = PartyId(3);
const OWNER: PartyId = PartyId(0);
const ATTACKER: PartyId = PartyId(1);

/// The protocol's numbering that the attack relies on (public: every party calls `next_op` at
/// the same points of the program, and the PRG purposes are constants of the source).
/// `Rep3::setup` is operation 1, the client's input mask operation 2, the key of the digests
/// the parties compare operation 3, their check that they received the same masked input
/// operation 4, P0's input operation 5.
const OP_CLIENT_MASK: u64 = 2;
const OP_WEIGHTS: u64 = 5;
/// `rep3::purpose::RANDOM` and `rep3::purpose::INPUT`.
const PURPOSE_RANDOM: u32 = 1;
const PURPOSE_INPUT: u32 = 3;

/// The three links of a session, recorded: `(seeds, handshake hashes)` by pair, and the wire of
/// the P0–P2 link with the observer's reading of it.
struct Links {
    /// The link seeds the parties derived, `[P0–P1, P1–P2, P0–P2]`.
    seeds: [[u8; 32]; 3],
    /// The parties' handshake hashes, same order.
    hashes: [[u8; 32]; 3],
    /// The relay's transcript of P0–P2 and what the observer makes of it.
    wire02: Wire,
    observed02: Observed,
    public_keys: [ringfence_link::PublicKey; 3],
}

fn pair_index(a: u8, b: u8) -> usize {
    match (a.min(b), a.max(b)) {
        (0, 1) => 0,
        (1, 2) => 1,
        (0, 2) => 2,
        p => panic!("no link {p:?}"),
    }
}

fn record_links() -> Links {
    let keys = keypairs(3);
    let mut seeds = [[0u8; 32]; 3];
    let mut hashes = [[0u8; 32]; 3];
    let mut wire02 = None;
    for (pair, entropy) in [((0, 1), 0x31), ((1, 2), 0x32), ((0, 2), 0x33)] {
        let (d, a, wire) = record_link(&keys, SESSION, pair, entropy);
        assert_eq!(d.seed_bytes, a.seed_bytes);
        let k = pair_index(pair.0, pair.1);
        seeds[k] = *d.seed_bytes;
        hashes[k] = d.handshake_hash.unwrap();
        if pair == (0, 2) {
            wire02 = Some(wire);
        }
    }
    let wire02 = wire02.unwrap();
    let observed02 =
        observe(&wire02, NOISE_PROTOCOL, b"ringfence link v2", &keys[0].public, &keys[2].public);
    let public_keys = [keys[0].public, keys[1].public, keys[2].public];
    Links { seeds, hashes, wire02, observed02, public_keys }
}

/// Runs P0..P2 with pairwise seeds `pair` and an external client with input `x`; P0 shares the
/// weights `w` in `rep3`. Returns every frame sent, after checking that the client got `x`
/// back (so the session really computed on the shared values).
fn run_session(pair: [[u8; 32]; 3], x: &[Z64], w: &[Z64]) -> Vec<Envelope> {
    let net = Net::new(4);
    let seed = |a: u8, b: u8| Seed::from_bytes(pair[pair_index(a, b)]);
    let mut futs: Vec<PartyFuture<'_, Result<Option<Vec<Z64>>, Error>>> = Vec::new();
    for i in 0..3u8 {
        let seeds = Rep3Seeds {
            prev: seed(i, (i + 2) % 3),
            next: seed(i, (i + 1) % 3),
            own: Seed::from_bytes([0x70 + i; 32]),
        };
        let ctx = Ctx::new(PartyId(i), 4, SESSION, net.transport(PartyId(i)));
        futs.push(Box::pin(async move {
            let mut p = Meteor::new(Rep3::setup(ctx, seeds).await?);
            let mask = p.input_mask::<Z64>(CLIENT, x.len());
            p.deliver_mask(&mask).await?;
            let xs = p.share(CLIENT, None, mask).await?;
            let mine = (PartyId(i) == OWNER).then_some(w);
            p.rep3_mut().input(OWNER, mine, w.len()).await?;
            p.reveal_to_client(CLIENT, xs).await?;
            Ok(None)
        }));
    }
    let ctx = Ctx::new(CLIENT, 4, SESSION, net.transport(CLIENT));
    futs.push(Box::pin(async move {
        let mut c = MeteorClient::new(ctx);
        let mask = c.receive_mask::<Z64>(x.len()).await?;
        c.share(x, mask)?;
        Ok(Some(c.reconstruct::<Z64>(x.len()).await?))
    }));
    let outs = net.run(futs);
    let outs: Vec<_> = outs.into_iter().map(|o| o.expect("a party failed")).collect();
    assert_eq!(outs[3].as_deref(), Some(x), "the client reconstructs its input");
    net.log()
}

/// The one frame `from` → `to` with a payload of `n` ring elements, decoded.
fn received(log: &[Envelope], from: PartyId, to: PartyId, n: usize) -> Vec<Z64> {
    let frames: Vec<&Envelope> = log
        .iter()
        .filter(|e| e.from == from && e.to == to && e.bytes.len() == HEADER_LEN + 8 * n)
        .collect();
    assert_eq!(frames.len(), 1, "{from} → {to}: one frame of {n} elements");
    frames[0].bytes[HEADER_LEN..]
        .chunks_exact(8)
        .map(|c| Z64(u64::from_le_bytes(c.try_into().unwrap())))
        .collect()
}

/// `n` elements of the PRG stream `(seed, op, purpose)`, as the core draws them.
fn stream(seed: &[u8; 32], op: u64, purpose: u32, n: usize) -> Vec<Z64> {
    let mut v = vec![Z64(0); n];
    Z64::fill_random(&mut Prg::new(&Seed::from_bytes(*seed), op, purpose), &mut v);
    v
}

/// What P1 receives and holds: its view of the session.
struct View {
    /// The client's masked input m = x − ψ (from the client).
    m: Vec<Z64>,
    /// P0's input message to P1: w − s, where s is P0's PRG stream under the P0–P2 seed.
    rest: Vec<Z64>,
    /// P1's own seeds: with P0, with P2.
    with_p0: [u8; 32],
    with_p2: [u8; 32],
}

fn view(log: &[Envelope], pair: &[[u8; 32]; 3], nx: usize, nw: usize) -> View {
    View {
        m: received(log, CLIENT, ATTACKER, nx),
        rest: received(log, OWNER, ATTACKER, nw),
        with_p0: pair[pair_index(0, 1)],
        with_p2: pair[pair_index(1, 2)],
    }
}

/// P1's attack on the client's input, given a candidate for the P0–P2 seed: ψ has component
/// 0 from the P0–P2 key, component 1 from P0–P1, component 2 from P1–P2, so x = m + ψ.
fn attack_input(v: &View, seed02: &[u8; 32]) -> Vec<Z64> {
    let n = v.m.len();
    let psi = [
        stream(seed02, OP_CLIENT_MASK, PURPOSE_RANDOM, n),
        stream(&v.with_p0, OP_CLIENT_MASK, PURPOSE_RANDOM, n),
        stream(&v.with_p2, OP_CLIENT_MASK, PURPOSE_RANDOM, n),
    ];
    (0..n).map(|i| v.m[i] + psi[0][i] + psi[1][i] + psi[2][i]).collect()
}

/// P1's attack on P0's weights: w = (w − s) + s, with s drawn from the P0–P2 key.
fn attack_weights(v: &View, seed02: &[u8; 32]) -> Vec<Z64> {
    let s = stream(seed02, OP_WEIGHTS, PURPOSE_INPUT, v.rest.len());
    v.rest.iter().zip(&s).map(|(r, s)| *r + *s).collect()
}

fn secrets() -> (Vec<Z64>, Vec<Z64>) {
    let x = [7i64, -3, 255, 0, 1 << 40, -123_456].map(Z64::from_i64).to_vec();
    let w = [11i64, -2048, 5, 99_999, -1].map(Z64::from_i64).to_vec();
    (x, w)
}

/// No element of `guess` equals the secret's (each would be a 2^-64 chance).
fn nothing_recovered(guess: &[Z64], secret: &[Z64]) -> bool {
    guess.iter().zip(secret).all(|(g, s)| g != s)
}

#[test]
fn v2_the_relay_transcript_does_not_give_p1_the_seed_it_lacks() {
    let links = record_links();
    let (x, w) = secrets();
    let log = run_session(links.seeds, &x, &w);
    let v = view(&log, &links.seeds, x.len(), w.len());

    // The attack is real: with the one seed it lacks, P1 unmasks the input and the weights.
    let true02 = links.seeds[pair_index(0, 2)];
    assert_eq!(attack_input(&v, &true02), x);
    assert_eq!(attack_weights(&v, &true02), w);

    // What the relay's transcript of P0–P2 and the public keys give it recovers nothing.
    let keys = [&links.public_keys[0], &links.public_keys[2]];
    let candidates = public_derivations(&links.observed02, &links.wire02, keys);
    for (k, c) in candidates.iter().enumerate() {
        assert!(nothing_recovered(&attack_input(&v, c), &x), "derivation {k} unmasks the input");
        assert!(nothing_recovered(&attack_weights(&v, c), &w), "derivation {k} unmasks a weight");
    }
}

#[test]
fn v1_the_relay_transcript_gave_p1_the_seed_it_lacks() {
    let links = record_links();
    // The same handshakes, with link v1's seeds: SHA-256 of a label and the handshake hash.
    let v1 = links.hashes.map(|h| v1_seed(&h));
    let (x, w) = secrets();
    let log = run_session(v1, &x, &w);
    let v = view(&log, &v1, x.len(), w.len());

    // The observer's hash of the P0–P2 transcript is the parties' (public data only), so
    // P1 computes the missing seed and reads the client's input and the weights.
    let from_transcript = v1_seed(&links.observed02.h);
    assert_eq!(attack_input(&v, &from_transcript), x);
    assert_eq!(attack_weights(&v, &from_transcript), w);
}
