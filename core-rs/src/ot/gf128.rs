//! GF(2^128) with the polynomial `x^128 + x^7 + x^2 + x + 1` (bit `i` of a `u128` is the
//! coefficient of `x^i`), for the OT extension's consistency check. Portable carry-less
//! multiplication: the check costs one product per extended OT.

/// The carry-less product of two 64-bit polynomials.
fn clmul64(a: u64, b: u64) -> u128 {
    let a = u128::from(a);
    let mut r = 0u128;
    for i in 0..64 {
        // Branch-free: the mask is all ones where bit i of b is set.
        r ^= (a << i) & (0u128.wrapping_sub(u128::from(b >> i & 1)));
    }
    r
}

/// The carry-less product of two 128-bit polynomials, `(hi, lo)`.
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a as u64, (a >> 64) as u64);
    let (b0, b1) = (b as u64, (b >> 64) as u64);
    // Karatsuba: three 64-bit products.
    let lo = clmul64(a0, b0);
    let hi = clmul64(a1, b1);
    let mid = clmul64(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
    (hi ^ (mid >> 64), lo ^ (mid << 64))
}

/// `a·b` in GF(2^128).
pub fn mul(a: u128, b: u128) -> u128 {
    let (hi, lo) = mul_wide(a, b);
    reduce(hi, lo)
}

/// `Σ a_i·b_i` in GF(2^128), reduced once: with PCLMULQDQ where the CPU has it.
pub fn dot(a: &[u128], b: &[u128]) -> u128 {
    let (hi, lo) = crate::ring::backend::clmul_dot(a, b).unwrap_or_else(|| {
        a.iter().zip(b).fold((0, 0), |(h, l), (&x, &y)| {
            let (ph, pl) = mul_wide(x, y);
            (h ^ ph, l ^ pl)
        })
    });
    reduce(hi, lo)
}

/// `hi·x^128 + lo` modulo the polynomial: `x^128 = x^7 + x^2 + x + 1`.
fn reduce(hi: u128, lo: u128) -> u128 {
    let fold = |h: u128| h ^ (h << 1) ^ (h << 2) ^ (h << 7);
    let over = (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    lo ^ fold(hi) ^ fold(over)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook shift-and-add product.
    fn slow(mut a: u128, b: u128) -> u128 {
        let mut r = 0;
        for i in 0..128 {
            if b >> i & 1 == 1 {
                r ^= a;
            }
            let carry = a >> 127;
            a <<= 1;
            if carry == 1 {
                a ^= 0x87;
            }
        }
        r
    }

    #[test]
    fn products_agree_with_shift_and_add_and_the_field_laws() {
        let mut prg = crate::prg::Prg::new(&crate::prg::Seed::from_bytes([9; 32]), 0, 0);
        let mut r = || u128::from(prg.next_u64()) | u128::from(prg.next_u64()) << 64;
        for _ in 0..200 {
            let (a, b, c) = (r(), r(), r());
            assert_eq!(mul(a, b), slow(a, b));
            assert_eq!(mul(a, b), mul(b, a));
            assert_eq!(mul(a, b ^ c), mul(a, b) ^ mul(a, c));
            assert_eq!(mul(a, 1), a);
        }
        assert_eq!(mul(1 << 127, 2), 0x87);
        let (xs, ys): (Vec<u128>, Vec<u128>) = (0..300).map(|_| (r(), r())).unzip();
        let want = xs.iter().zip(&ys).fold(0, |acc, (&x, &y)| acc ^ slow(x, y));
        assert_eq!(dot(&xs, &ys), want, "the dot product, with this CPU's backend");
    }
}
