//! WebAssembly bindings of `ringfence-core` (bindings only, over the unchanged core).
//!
//! * `bindings` (wasm32 only, via wasm-bindgen): a `rep3` compute party `Party` over a
//!   JS-provided transport, share handles, preprocessing stores, coded errors. The npm package
//!   `ringfence` (`web/`) wraps it; `npm run build:wasm` builds it with and without SIMD.
//! * `ringfence_selftest` (feature `selftest`, off in the SDK's build), a raw export that runs a
//!   three-party `rep3` session on the core's in-memory network inside the module.
//!   `scripts/test.mjs` builds this crate for
//!   `wasm32-unknown-unknown` with `simd128`, checks that the module imports nothing from its
//!   host but wasm-bindgen's placeholders (the core is sans-IO: no clock, no OS randomness, no
//!   sockets), and calls the export in Node.

pub mod bindings;

/// Runs a 3-party multiplication, comparison and ReLU of random shared vectors inside the
/// module and checks them against plaintext: returns 1 on success, 0 on a wrong result, 2 on a
/// protocol error.
#[cfg(feature = "selftest")]
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn ringfence_selftest() -> u32 {
    use ringfence_core::net::Roster;
    use ringfence_core::ring::Z64;
    use ringfence_core::sharing::Boolean;
    use ringfence_core::testing;

    let n = Roster::THREE.n();
    let outs = testing::run_rep3_on(&testing::Net::new(n), n, 7, |mut p| async move {
        let x = p.random::<Z64>(100);
        let y = p.random::<Z64>(100);
        let z = p.mul(&x, &y).await?;
        let c = p.lt(&x, &y).await?;
        let d = p.dabits::<Z64>(100).await?;
        let r = p.relu(&x, d).await?;
        let (xs, ys) = (p.reveal(x).await?, p.reveal(y).await?);
        Ok((xs, ys, p.reveal(z).await?, p.reveal_bits(c).await?, p.reveal(r).await?))
    });
    let mut ok = true;
    for out in outs {
        let Ok((x, y, z, c, r)) = out else { return 2 };
        for i in 0..x.len() {
            ok &= z[i] == x[i] * y[i];
            ok &= c[i] == (x[i] < y[i]);
            ok &= r[i] == x[i].max(Z64(0));
        }
    }
    ok as u32
}

#[cfg(all(test, feature = "selftest"))]
mod tests {
    #[test]
    fn selftest_passes_natively() {
        assert_eq!(super::ringfence_selftest(), 1);
    }
}
