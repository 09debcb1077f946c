//! Checked conversions of JS arguments and results. Every check here runs before the call that
//! uses the argument sends anything, so a bad argument never costs a frame.

use js_sys::{BigInt64Array, BigUint64Array, Float64Array, Object, Reflect, Uint8Array};
use ringfence_core::ring::Z64;
use wasm_bindgen::{JsCast, JsValue};

use super::error::{js_error, Code};

/// A non-negative integer (a count, a dimension, a party index) at most `max`.
pub(crate) fn index(v: &JsValue, what: &str, max: u64) -> Result<usize, JsValue> {
    let Some(x) = v.as_f64() else {
        return Err(js_error(
            Code::InvalidArgument,
            format!("{what} must be a number, got {}", describe(v)),
        ));
    };
    if x.fract() != 0.0 || x < 0.0 || x > max as f64 {
        return Err(js_error(
            Code::InvalidArgument,
            format!("{what} must be an integer in 0..={max}, got {x}"),
        ));
    }
    Ok(x as usize)
}

/// Ring elements of Z_2^64 from a `BigInt64Array` (two's complement) or a `BigUint64Array`.
pub(crate) fn ring_values(v: &JsValue, what: &str) -> Result<Vec<Z64>, JsValue> {
    if let Some(a) = v.dyn_ref::<BigInt64Array>() {
        let mut out = vec![0i64; a.length() as usize];
        a.copy_to(&mut out);
        return Ok(out.into_iter().map(|x| Z64(x as u64)).collect());
    }
    if let Some(a) = v.dyn_ref::<BigUint64Array>() {
        let mut out = vec![0u64; a.length() as usize];
        a.copy_to(&mut out);
        return Ok(out.into_iter().map(Z64).collect());
    }
    Err(js_error(
        Code::InvalidArgument,
        format!("{what} must be a BigInt64Array or BigUint64Array, got {}", describe(v)),
    ))
}

/// Reals from a `Float64Array`, a `Float32Array` or an array of numbers.
pub(crate) fn reals(v: &JsValue, what: &str) -> Result<Vec<f64>, JsValue> {
    if let Some(a) = v.dyn_ref::<Float64Array>() {
        return Ok(a.to_vec());
    }
    if let Some(a) = v.dyn_ref::<js_sys::Float32Array>() {
        return Ok(a.to_vec().into_iter().map(f64::from).collect());
    }
    if let Some(a) = v.dyn_ref::<js_sys::Array>() {
        return a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_f64().ok_or_else(|| {
                    js_error(
                        Code::InvalidArgument,
                        format!("{what}[{i}] must be a number, got {}", describe(&x)),
                    )
                })
            })
            .collect();
    }
    Err(js_error(
        Code::InvalidArgument,
        format!("{what} must be a Float64Array, Float32Array or number[], got {}", describe(v)),
    ))
}

/// Exactly `N` bytes from a `Uint8Array`.
pub(crate) fn bytes<const N: usize>(v: &JsValue, what: &str) -> Result<[u8; N], JsValue> {
    let Some(a) = v.dyn_ref::<Uint8Array>() else {
        return Err(js_error(
            Code::InvalidArgument,
            format!("{what} must be a Uint8Array of {N} bytes, got {}", describe(v)),
        ));
    };
    if a.length() as usize != N {
        return Err(js_error(
            Code::LengthMismatch,
            format!("{what} must be {N} bytes, got {}", a.length()),
        ));
    }
    let mut out = [0u8; N];
    a.copy_to(&mut out);
    Ok(out)
}

/// The property `key` of an object argument.
pub(crate) fn field(obj: &JsValue, key: &str, what: &str) -> Result<JsValue, JsValue> {
    if !obj.is_object() {
        return Err(js_error(
            Code::InvalidArgument,
            format!("{what} must be an object, got {}", describe(obj)),
        ));
    }
    Reflect::get(obj, &JsValue::from_str(key))
        .map_err(|_| js_error(Code::InvalidArgument, format!("{what}.{key} is unreadable")))
}

/// Ring elements as a `BigInt64Array` (signed view of Z_2^64).
pub(crate) fn to_bigint64(v: &[Z64]) -> BigInt64Array {
    let signed: Vec<i64> = v.iter().map(|x| x.0 as i64).collect();
    BigInt64Array::from(signed.as_slice())
}

/// A fresh plain object with these properties.
pub(crate) fn object(props: &[(&str, JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in props {
        // A plain fresh object accepts any property.
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o
}

/// A short description of a JS value's type for error messages.
pub(crate) fn describe(v: &JsValue) -> String {
    if v.is_null() {
        return "null".into();
    }
    if v.is_undefined() {
        return "undefined".into();
    }
    if v.is_object() {
        let name = Reflect::get(v, &JsValue::from_str("constructor"))
            .ok()
            .and_then(|c| Reflect::get(&c, &JsValue::from_str("name")).ok())
            .and_then(|n| n.as_string());
        return name.unwrap_or_else(|| "object".into());
    }
    v.js_typeof().as_string().unwrap_or_else(|| "value".into())
}
