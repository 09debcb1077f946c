//! Errors crossing into JavaScript: a JS `Error` with a stable `code` property.
//!
//! The codes are part of the SDK's API (`RingfenceErrorCode` in `web/src/errors.ts` lists the
//! same strings); messages are for humans and may change.

use js_sys::Reflect;
use ringfence_core::net::TransportError;
use ringfence_core::Error;
use wasm_bindgen::JsValue;

/// The stable error codes of the bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    /// An argument has the wrong type (e.g. a `number[]` where a `BigInt64Array` is required).
    InvalidArgument,
    /// Operand lengths or dimensions disagree.
    LengthMismatch,
    /// The caller used the API wrongly (wrong role, consumed share, concurrent calls).
    ApiMisuse,
    /// A value does not fit its encoding (fixed point).
    OutOfRange,
    /// A model file could not be imported or planned (malformed ONNX, unsupported operator).
    InvalidModel,
    /// A preprocessing store (daBits, truncation pairs) has too little material left.
    PreprocessingExhausted,
    /// A peer sent a frame that breaks the protocol.
    PeerMisbehaved,
    /// The link to a peer failed (closed, I/O error).
    Transport,
    /// Nothing arrived from a peer within the transport's timeout.
    Timeout,
    /// A compute party declined a well-formed request (unknown model, limits), giving its
    /// reason in the message.
    Refused,
    /// A check of a malicious-secure scheme failed (a MAC, a triple): the session stopped and
    /// released nothing.
    CheckFailed,
    /// A failure the bindings do not classify (a core error variant added later).
    Internal,
}

impl Code {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::LengthMismatch => "LENGTH_MISMATCH",
            Self::ApiMisuse => "API_MISUSE",
            Self::OutOfRange => "OUT_OF_RANGE",
            Self::InvalidModel => "INVALID_MODEL",
            Self::PreprocessingExhausted => "PREPROCESSING_EXHAUSTED",
            Self::PeerMisbehaved => "PEER_MISBEHAVED",
            Self::Transport => "TRANSPORT",
            Self::Timeout => "TIMEOUT",
            Self::Refused => "REFUSED",
            Self::CheckFailed => "CHECK_FAILED",
            Self::Internal => "INTERNAL",
        }
    }
}

/// A JS `Error` with `message` and the property `code`.
pub(crate) fn js_error(code: Code, message: impl AsRef<str>) -> JsValue {
    let e = js_sys::Error::new(message.as_ref());
    set(&e, "code", &code.as_str().into());
    e.into()
}

/// Converts a core error: the code by blame, plus `peer` (a number) for peer-caused errors.
pub(crate) fn from_core(err: Error) -> JsValue {
    let (code, peer) = match &err {
        Error::PeerMisbehaved { peer, .. } => (Code::PeerMisbehaved, Some(peer.0)),
        Error::Transport { peer, source: TransportError::Timeout(_) } => {
            (Code::Timeout, Some(peer.0))
        }
        Error::Transport { peer, .. } => (Code::Transport, Some(peer.0)),
        Error::Refused { peer, .. } => (Code::Refused, Some(peer.0)),
        Error::Abort { blame, .. } => (Code::CheckFailed, blame.map(|p| p.0)),
        Error::ApiMisuse(_) => (Code::ApiMisuse, None),
        Error::OutOfRange(_) => (Code::OutOfRange, None),
        Error::PreprocessingExhausted(_) => (Code::PreprocessingExhausted, None),
        _ => (Code::Internal, None),
    };
    let e = js_error(code, err.to_string());
    if let Some(p) = peer {
        set(&e, "peer", &JsValue::from(p));
    }
    e
}

fn set(target: &JsValue, key: &str, value: &JsValue) {
    // Setting a property on a fresh, non-frozen `Error` cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}
