//! The core's [`Transport`] over a JavaScript object `{ send(to, frame), recv(from) }`.
//!
//! `send` must only queue the frame (never wait for the peer); `recv` returns a promise of the
//! next frame from that peer. A thrown error or a rejected promise becomes a [`TransportError`]:
//! `code: "CLOSED"` maps to [`TransportError::Closed`], `code: "TIMEOUT"` (with an optional
//! `timeoutMs`) to [`TransportError::Timeout`], anything else to [`TransportError::Io`] with
//! the error's message.

use js_sys::{Promise, Reflect, Uint8Array};
use ringfence_core::net::{PartyId, Transport, TransportError};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(typescript_custom_section)]
const RAW_TRANSPORT_TS: &str = r#"
/** Moves frames between this party and its peers (see `Transport` in the SDK). */
export interface RawTransport {
  /** Queues `frame` for party `to`; must not wait for the peer. */
  send(to: number, frame: Uint8Array): void;
  /** Resolves with the next frame from party `from`, in order. */
  recv(from: number): Promise<Uint8Array>;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// A JS transport object (TypeScript interface `RawTransport`).
    #[wasm_bindgen(typescript_type = "RawTransport")]
    pub type RawTransport;

    #[wasm_bindgen(method, catch, js_name = send)]
    fn send_frame(this: &RawTransport, to: u32, frame: Uint8Array) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method, catch, js_name = recv)]
    fn recv_frame(this: &RawTransport, from: u32) -> Result<JsValue, JsValue>;
}

/// The core's transport over a [`RawTransport`].
pub(crate) struct JsTransport {
    raw: RawTransport,
}

impl JsTransport {
    pub(crate) fn new(raw: RawTransport) -> Self {
        Self { raw }
    }
}

impl Transport for JsTransport {
    fn send(&mut self, to: PartyId, frame: Vec<u8>) -> Result<(), TransportError> {
        // `from` copies into a fresh JS buffer: a view into wasm memory would not survive.
        let frame = Uint8Array::from(frame.as_slice());
        self.raw.send_frame(to.0.into(), frame).map(drop).map_err(|e| transport_error(&e))
    }

    async fn recv(&mut self, from: PartyId) -> Result<Vec<u8>, TransportError> {
        let pending = self.raw.recv_frame(from.0.into()).map_err(|e| transport_error(&e))?;
        let value =
            JsFuture::from(Promise::resolve(&pending)).await.map_err(|e| transport_error(&e))?;
        match value.dyn_into::<Uint8Array>() {
            Ok(frame) => Ok(frame.to_vec()),
            Err(_) => Err(TransportError::Io(format!(
                "transport recv({}) resolved with something other than a Uint8Array",
                from.0
            ))),
        }
    }
}

/// Classifies an error thrown or rejected by the JS transport.
fn transport_error(e: &JsValue) -> TransportError {
    let prop = |k: &str| Reflect::get(e, &JsValue::from_str(k)).ok();
    match prop("code").and_then(|c| c.as_string()).as_deref() {
        Some("CLOSED") => TransportError::Closed,
        Some("TIMEOUT") => {
            let ms = prop("timeoutMs").and_then(|v| v.as_f64()).unwrap_or(0.0);
            TransportError::Timeout(ms as u64)
        }
        _ => TransportError::Io(message_of(e)),
    }
}

/// The message of a JS error, or a rendering of any other thrown value.
pub(crate) fn message_of(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}
