//! Writes the seed corpora, `fuzz/corpus/<target>/`, from the repository's model files and
//! from real runs of the encoders the targets' decoders read (link handshakes, records,
//! tokens, service messages), so that every target starts from inputs that go all the way
//! through. Run by `node scripts/fuzz.mjs --seeds`; the output is committed.

use std::fs;
use std::path::{Path, PathBuf};

use ringfence_core::net::frame::begin;
use ringfence_core::net::SessionId;
use ringfence_core::nn::ModelFile;
use ringfence_core::service::{MAX_NAME, VERSION};
use ringfence_fuzz::link::{
    keypairs, security, ACCEPTOR, ACCEPTOR_ENTROPY, DIALER, DIALER_ENTROPY, RECORD_KEY,
};
use ringfence_fuzz::{put_chunk, SESSION};
use ringfence_link::record::{Cipher, FrameEncoder, RecordKey};
use ringfence_link::{Aead, Handshake, LinkEnds};

// Linked like the targets: the instrumented dependencies call into libFuzzer's runtime.
use libfuzzer_sys as _;

const MAGIC: u64 = 0x5246_434c;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let models = root.join("../models");
    let corpus = root.join("corpus");
    let mut w = Writer { corpus, count: 0 };

    // Shape files, and the ONNX models small enough to mutate quickly: the shipped ones and
    // the exporters' (residual graphs, skl2onnx's side branches) that the importer's graph pass
    // reads.
    let exported = root.join("../core-rs/tests/data/exported");
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [&models, &exported] {
        files.extend(
            fs::read_dir(dir).expect("a model folder").map(|e| e.expect("an entry").path()),
        );
    }
    for path in files {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let small = fs::metadata(&path).map(|m| m.len() < 64 << 10).unwrap_or(false);
        if ext == "rfshape" || (ext == "onnx" && small) {
            let bytes = fs::read(&path).expect("a model file");
            w.put("model", &file_name(&path), &bytes);
            // The exporters' models as shape files too: their steps (spline activations, vote
            // trees after a dense layer) reach the shape decoder directly.
            if ext == "onnx" && path.starts_with(&exported) {
                if let Ok(file) = ModelFile::parse(&bytes) {
                    w.put(
                        "model",
                        &format!("{}.rfshape", file_name(&path)),
                        &file.shape().encode(),
                    );
                }
            }
        }
    }

    let mut frame = [0x5e; 16].to_vec();
    frame.extend_from_slice(&3u64.to_le_bytes());
    frame.extend_from_slice(&5u32.to_le_bytes());
    frame.extend_from_slice(&begin(SessionId([0x5e; 16]), 3, 5));
    frame.extend_from_slice(b"hello");
    w.put("frame", "valid", &frame);

    service(&mut w, &models);
    link(&mut w);
    #[cfg(feature = "relay")]
    relay(&mut w);
    println!("wrote {} seed files under fuzz/corpus/", w.count);
}

struct Writer {
    corpus: PathBuf,
    count: usize,
}

impl Writer {
    fn put(&mut self, target: &str, name: &str, bytes: &[u8]) {
        let dir = self.corpus.join(target);
        fs::create_dir_all(&dir).expect("creating the corpus folder");
        fs::write(dir.join(name), bytes).expect("writing a seed");
        self.count += 1;
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().expect("a file").to_string_lossy().into_owned()
}

fn words(ws: &[u64]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The service messages: the parties' model descriptions to the client, and a client's request
/// with the other parties' verdicts to P1, written as `service/` lays them out.
fn service(w: &mut Writer, models: &Path) {
    let file = ModelFile::parse(&fs::read(models.join("logreg.rfshape")).expect("logreg.rfshape"))
        .expect("a valid shape file");
    let plan = &file.shape().plan;
    let head = MAGIC << 32 | u64::from(VERSION) << 24;
    let (classes, sizes) = (plan.output_len(), [plan.input_len as u64, plan.output_len() as u64]);
    // The description; its last word sizes the labels' frame that follows (the owner's only).
    let info = |label_words: usize| {
        words(&[head, sizes[0], sizes[1], u64::from(plan.frac_bits), 0, label_words as u64])
    };
    // Labels' frames: integers (kind 1), and text (kind 2: lengths, then the packed bytes).
    let ints: Vec<u64> = [1].into_iter().chain(0..classes as u64).collect();
    let names: Vec<String> = (0..classes).map(|c| format!("class {c}")).collect();
    let bytes: Vec<u8> = names.iter().flat_map(|t| t.bytes()).collect();
    let mut text = vec![2];
    text.extend(names.iter().map(|t| t.len() as u64));
    text.extend(bytes.chunks(8).map(|c| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    }));
    for (name, labels) in
        [("accepted", None), ("accepted-labels", Some(&ints)), ("accepted-names", Some(&text))]
    {
        let mut accepted = vec![0];
        put_chunk(&mut accepted, &info(labels.map_or(0, Vec::len)));
        if let Some(l) = labels {
            put_chunk(&mut accepted, &words(l));
        }
        for _ in 1..3 {
            put_chunk(&mut accepted, &info(0));
        }
        w.put("service_client", name, &accepted);
    }
    // The owner claims 2^28 scores and the largest labels' frame they could have (a client
    // once allocated 34 GB for it).
    let mut huge = vec![0];
    let claim = 1u64 << 28;
    put_chunk(&mut huge, &words(&[head, sizes[0], claim, 13, 0, claim * 33 + 1]));
    w.put("service_client", "huge-labels", &huge);
    let mut refused = vec![1];
    let text = b"no model \"x\" here\0\0\0\0\0\0\0";
    put_chunk(&mut refused, &words(&[head | 1, 0, 0, 0, (text.len() / 8) as u64, 0]));
    put_chunk(&mut refused, text);
    w.put("service_client", "refused", &refused);

    // P1: the rep3 setup's messages from P2 and P0, the request, then P0's and P2's verdicts
    // (the request again, the stocked run's ticket, 1 = accepted, the shape's digest).
    // Backend and output codes: 1 = rep3, 2 = METEOR; 1 = scores, 2 = the class.
    for (name, model, batch, backend, output) in [
        ("meteor", "logreg", 1u64, 2u64, 1u64),
        ("rep3-class", "logreg", 2, 1, 2),
        ("unknown", "lenet", 1, 1, 1),
        ("big", "logreg", 9, 1, 1),
    ] {
        let mut name_words = [0u8; MAX_NAME];
        name_words[..model.len()].copy_from_slice(model.as_bytes());
        let request: Vec<u64> = [head | backend << 16 | output << 8, batch]
            .into_iter()
            .chain(name_words.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))))
            .collect();
        let digest = plan.digest();
        let mut verdict = request.clone();
        verdict.extend([0, 1]);
        verdict.extend(digest.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))));
        let mut input = Vec::new();
        put_chunk(&mut input, &[0x11; 32]);
        put_chunk(&mut input, &[0x22; 32]);
        put_chunk(&mut input, &words(&request));
        put_chunk(&mut input, &words(&verdict));
        put_chunk(&mut input, &words(&verdict));
        w.put("service_party", name, &input);
    }
}

/// Real handshakes against the fuzzed end's fixed identity and entropy (so their bytes replay),
/// each followed by frames sealed with the keys they agreed; and records under the record
/// target's fixed key.
fn link(w: &mut Writer) {
    let _ = keypairs();
    // Small frames keep the seeds quick to mutate; one seed per record mode has a frame cut
    // into several records.
    let frames: [&[u8]; 3] = [b"first frame", &[0xab; 300], b""];
    for dials in [false, true] {
        for noise in [true, false] {
            let mode = u8::from(dials) | u8::from(!noise) << 1;
            let (us, them) = if dials { (DIALER, ACCEPTOR) } else { (ACCEPTOR, DIALER) };
            let (sec_us, sec_them) = (security(us, noise), security(them, noise));
            let ends = |me, security| LinkEnds { me, session: SESSION, security };
            let mut ours = if dials {
                Handshake::dial(ends(us, &sec_us), them, &DIALER_ENTROPY)
            } else {
                Handshake::accept(ends(us, &sec_us), &ACCEPTOR_ENTROPY)
            }
            .expect("our end");
            let mut peer = if dials {
                Handshake::accept(ends(them, &sec_them), &[0x77; 32])
            } else {
                Handshake::dial(ends(them, &sec_them), us, &[0x77; 32])
            }
            .expect("the peer's end");
            let mut input = vec![mode];
            while !(ours.is_done() && peer.is_done()) {
                let out = ours.take_output();
                peer.handle_input(&out).expect("a real handshake");
                let out = peer.take_output();
                if !out.is_empty() {
                    ours.handle_input(&out).expect("a real handshake");
                    put_chunk(&mut input, &out);
                }
            }
            let est = peer.finish().expect("the peer's link");
            let mut enc = FrameEncoder::new(est.send);
            for f in frames {
                let mut wire = Vec::new();
                enc.encode(f, &mut None, &mut wire, usize::MAX).expect("sealing");
                for piece in wire.chunks(40_000) {
                    put_chunk(&mut input, piece);
                }
            }
            let name = format!(
                "{}-{}",
                if dials { "dialer" } else { "acceptor" },
                if noise { "noise" } else { "plain" }
            );
            w.put("link_handshake", &name, &input);
        }
    }
    for (mode, name) in [(0u8, "aesgcm"), (1, "chachapoly"), (2, "plain")] {
        let cipher = match mode {
            0 => Cipher::Noise {
                key: RecordKey::new(Aead::AesGcm, &RECORD_KEY).expect("key"),
                nonce: 0,
            },
            1 => Cipher::Noise {
                key: RecordKey::new(Aead::ChaChaPoly, &RECORD_KEY).expect("key"),
                nonce: 0,
            },
            _ => Cipher::DangerPlain,
        };
        let mut enc = FrameEncoder::new(cipher);
        let mut input = vec![mode];
        for f in frames {
            let mut wire = Vec::new();
            enc.encode(f, &mut None, &mut wire, usize::MAX).expect("sealing");
            for piece in wire.chunks(40_000) {
                put_chunk(&mut input, piece);
            }
        }
        w.put("link_record", name, &input);
        let mut big = vec![mode];
        let mut wire = Vec::new();
        enc.encode(&[0xcd; 70_000], &mut None, &mut wire, usize::MAX).expect("sealing");
        for piece in wire.chunks(30_000) {
            put_chunk(&mut big, piece);
        }
        w.put("link_record", &format!("{name}-records"), &big);
    }
}

#[cfg(feature = "relay")]
fn relay(w: &mut Writer) {
    use ringfence_relay::token::{DeploymentKey, Token};
    use ringfence_relay::wt::wire::Control;

    let session = "0f".repeat(16);
    let key_hex = "ab".repeat(32);
    for (name, p) in [
        ("session", format!("/v1/{session}/1?parties=4&mode=noise")),
        (
            "token",
            format!(
                "/v1/{session}/0?parties=3&mode=plain&token=rf1.acme.any.0.99.{}",
                "cd".repeat(64)
            ),
        ),
        (
            "invite",
            format!("/v1/{session}/2?parties=4&mode=noise&deployment=acme&client_key={key_hex}"),
        ),
        ("lobby", "/v1/lobby/acme/1?parties=4&mode=noise&token=x".to_string()),
    ] {
        w.put("relay_path", name, p.as_bytes());
    }

    let key = DeploymentKey::from_seed([0x42; 32]).expect("a fixed seed");
    let now = 1_700_000_000u64;
    // Server parties' long-lived tokens (rf1) and a client's, bound to its key (rf2).
    let client_key = ringfence_relay::PublicKey([0xab; 32]);
    for (name, session, party, bound) in [
        ("any", None, 1, None),
        ("session", Some(SessionId([0x0f; 16])), 1, None),
        ("client", Some(SessionId([0x0f; 16])), 3, Some(client_key)),
    ] {
        let t = Token {
            deployment: "acme".into(),
            session,
            party: ringfence_core::net::PartyId(party),
            client_key: bound,
            expires: now + 60,
        };
        let mut input = now.to_le_bytes().to_vec();
        input.extend_from_slice(t.sign(&key).as_bytes());
        w.put("relay_token", name, &input);
    }

    for (name, m) in [
        ("offer", r#"{"t":"offer","sdp":"v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n"}"#),
        ("answer", r#"{"t":"answer","sdp":"v=0\r\n"}"#),
        (
            "ice",
            r#"{"t":"ice","candidate":{"candidate":"candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host","sdpMid":"0","sdpMLineIndex":0}}"#,
        ),
        ("no-rtc", r#"{"t":"no-rtc","why":"no WebRTC here"}"#),
        ("use", r#"{"t":"use","via":"webrtc"}"#),
        ("ok", r#"{"t":"ok","via":"relay","why":"ICE failed"}"#),
    ] {
        w.put("rtc_signal", name, m.as_bytes());
    }

    // An invitation as the relay forwards it, with the client's token (what the party's own
    // check accepts: see the target), and one without.
    let client = Token {
        deployment: "acme".into(),
        session: Some(SessionId([0x0f; 16])),
        party: ringfence_core::net::PartyId(3),
        client_key: Some(client_key),
        expires: now + 60,
    }
    .sign(&key);
    let inv = format!(
        r#"{{"session":"{session}","parties":4,"client":3,"client_key":"{key_hex}","token":"{client}"}}"#
    );
    w.put("lobby_invitation", "valid", inv.as_bytes());
    let bare =
        format!(r#"{{"session":"{session}","parties":4,"client":3,"client_key":"{key_hex}"}}"#);
    w.put("lobby_invitation", "no-token", bare.as_bytes());

    for (name, c) in [
        ("admitted", Control::admitted()),
        ("refused", Control::refused(403, "bad token")),
        ("closing", Control::closing("bye")),
    ] {
        w.put("wt_wire", name, &c.to_message());
    }

    let keys: Vec<String> = keypairs().iter().map(|k| k.public.to_hex()).collect();
    let base = format!(
        "party = 1\ndeployment = \"acme\"\nrelay = \"ws://127.0.0.1:9000\"\nkey_file = \"p1.key\"\n\
         public_keys = {keys:?}\ndeployment_key = \"{}\"\n",
        key.public()
    );
    w.put(
        "party_config",
        "minimal",
        format!("{base}\n[[model]]\nname = \"logreg\"\npath = \"logreg.rfshape\"\n").as_bytes(),
    );
    w.put(
        "party_config",
        "full",
        format!(
            "{base}token_file = \"p1.token\"\nmax_sessions = 4\nmax_batch = 8\ntimeout_ms = 5000\n\
             metrics = \"127.0.0.1:9101\"\n\n[mesh]\npeers = [\"127.0.0.1:7100\", \"127.0.0.1:7101\", \
             \"127.0.0.1:7102\"]\ndirect_sessions = false\n\n[[model]]\nname = \"lenet\"\n\
             path = \"lenet.rfshape\"\noutput = \"scores\"\npublic = true\nready = {{ meteor = 1, rep3 = 3, mal3 = 1 }}\n\n\
             [[model]]\nname = \"logreg\"\npath = \"logreg.rfshape\"\n"
        )
        .as_bytes(),
    );
}
