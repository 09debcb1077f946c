//! The core's [`Transport`] over a JavaScript object `{ send(to, frame), recv(from) }`.
//!
//! `send` must only queue the frame (never wait for the peer); `recv` returns a promise of the
//! next frame from that peer. Two optional methods let a transport recycle frame buffers:
//! `allocFrame(to, length)` gives the buffer the next frame to `to` is written into (else a new
//! `Uint8Array`), and `releaseFrame(from, frame)` hands back a received frame once its bytes
//! are copied into wasm memory. A thrown error or a rejected promise becomes a [`TransportError`]:
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
  /** Optional: a buffer of exactly `length` bytes for the next frame to party `to`. */
  allocFrame?(to: number, length: number): Uint8Array;
  /** Optional: the party is done with `frame`, received from party `from`. */
  releaseFrame?(from: number, frame: Uint8Array): void;
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

    #[wasm_bindgen(method, catch, js_name = allocFrame)]
    fn alloc_frame(this: &RawTransport, to: u32, length: u32) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method, catch, js_name = releaseFrame)]
    fn release_frame(
        this: &RawTransport,
        from: u32,
        frame: &Uint8Array,
    ) -> Result<JsValue, JsValue>;
}

/// The core's transport over a [`RawTransport`].
pub(crate) struct JsTransport {
    raw: RawTransport,
    /// Whether `raw` has `allocFrame` and `releaseFrame` (looked up once).
    recycles: [bool; 2],
}

impl JsTransport {
    pub(crate) fn new(raw: RawTransport) -> Self {
        let has = |name: &str| {
            Reflect::get(&raw, &JsValue::from_str(name)).is_ok_and(|f| f.is_function())
        };
        let recycles = [has("allocFrame"), has("releaseFrame")];
        Self { raw, recycles }
    }

    /// A JS buffer of `length` bytes for the next frame to `to`.
    fn frame_buffer(&self, to: PartyId, length: u32) -> Result<Uint8Array, TransportError> {
        if !self.recycles[0] {
            return Ok(Uint8Array::new_with_length(length));
        }
        let b = self.raw.alloc_frame(to.0.into(), length).map_err(|e| transport_error(&e))?;
        match b.dyn_into::<Uint8Array>() {
            Ok(b) if b.length() == length => Ok(b),
            _ => Err(TransportError::Io(format!(
                "transport allocFrame({}, {length}) returned no Uint8Array of {length} bytes",
                to.0
            ))),
        }
    }

    /// Hands `frame`, a JS buffer (never a view into wasm memory, which would not survive), to
    /// the JS transport, which may keep it.
    fn send_js(&self, to: PartyId, frame: Uint8Array) -> Result<(), TransportError> {
        self.raw.send_frame(to.0.into(), frame).map(drop).map_err(|e| transport_error(&e))
    }

    /// The next frame from `from`, still in JS memory.
    async fn recv_js(&self, from: PartyId) -> Result<Uint8Array, TransportError> {
        let pending = self.raw.recv_frame(from.0.into()).map_err(|e| transport_error(&e))?;
        let value =
            JsFuture::from(Promise::resolve(&pending)).await.map_err(|e| transport_error(&e))?;
        value.dyn_into::<Uint8Array>().map_err(|_| {
            TransportError::Io(format!(
                "transport recv({}) resolved with something other than a Uint8Array",
                from.0
            ))
        })
    }
}

impl Transport for JsTransport {
    fn send(&mut self, to: PartyId, frame: Vec<u8>) -> Result<(), TransportError> {
        self.send_parts(to, &frame, &[])
    }

    /// One copy, from the caller's slices straight into the JS buffer: no frame assembled in
    /// wasm memory first.
    fn send_parts(
        &mut self,
        to: PartyId,
        header: &[u8],
        payload: &[u8],
    ) -> Result<(), TransportError> {
        let (h, len) = (header.len() as u32, (header.len() + payload.len()) as u32);
        let frame = self.frame_buffer(to, len)?;
        frame.subarray(0, h).copy_from(header);
        frame.subarray(h, len).copy_from(payload);
        self.send_js(to, frame)
    }

    async fn recv(&mut self, from: PartyId) -> Result<Vec<u8>, TransportError> {
        Ok(self.recv_js(from).await?.to_vec())
    }

    /// One copy, into `buf`'s allocation: only a frame longer than any before grows it, and
    /// only the bytes past its current length are zeroed first.
    async fn recv_into(&mut self, from: PartyId, buf: &mut Vec<u8>) -> Result<(), TransportError> {
        let frame = self.recv_js(from).await?;
        buf.resize(frame.length() as usize, 0);
        frame.copy_to(buf);
        if self.recycles[1] {
            self.raw.release_frame(from.0.into(), &frame).map_err(|e| transport_error(&e))?;
        }
        Ok(())
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
