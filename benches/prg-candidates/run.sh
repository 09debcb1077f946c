#!/usr/bin/env bash
# Benchmarks the PRG candidates natively (generic x86-64 and -C target-cpu=native) and on
# wasm32-unknown-unknown (with and without simd128, run in Node), then prints one table.
# Usage: benches/prg-candidates/run.sh [name-filter...]   (filters are substrings of row names)
#        EXPERIMENTS=1 benches/prg-candidates/run.sh   adds the rejected ChaCha code shapes (x_*)
# Timing: best of 7 runs timed by CPU time (not wall time), each ~0.12 s, after calibration.
set -euo pipefail
cd "$(dirname "$0")"
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
out=target/results
mkdir -p "$out"
feat=()
[[ "${EXPERIMENTS:-0}" == 1 ]] && feat=(--features experiments)
q() { cargo build --release --quiet "$@"; }

# prg.rs's unit tests on native and on wasm32+simd128 (under Node's WASI), so the simd128 path is
# checked against the scalar reference too.
echo "testing prg.rs (native generic, native target-cpu=native, wasm32-wasip1+simd128)..." >&2
CARGO_TARGET_DIR=target/native-generic cargo test --release --quiet --lib >&2
CARGO_TARGET_DIR=target/native-cpu RUSTFLAGS="-C target-cpu=native" cargo test --release --quiet --lib >&2
rustup target list --installed | grep -qx wasm32-wasip1 || rustup target add wasm32-wasip1
wasi_test=$(CARGO_TARGET_DIR=target/wasi-simd RUSTFLAGS="-C target-feature=+simd128" \
  cargo test --release --lib --target wasm32-wasip1 --no-run --message-format=json 2>/dev/null |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n")){try{const m=JSON.parse(l);if(m.executable)console.log(m.executable)}catch{}}})')
node --no-warnings run-wasi-tests.mjs "$wasi_test" >&2

echo "building native (generic x86-64)..." >&2
CARGO_TARGET_DIR=target/native-generic RUSTFLAGS="" q --bin native "${feat[@]}"
echo "building native (target-cpu=native)..." >&2
CARGO_TARGET_DIR=target/native-cpu RUSTFLAGS="-C target-cpu=native" q --bin native "${feat[@]}"
echo "building wasm32 +simd128..." >&2
CARGO_TARGET_DIR=target/wasm-simd RUSTFLAGS="-C target-feature=+simd128" \
  q --lib --target wasm32-unknown-unknown --features wasm-simd "${feat[@]}"
echo "building wasm32 (no SIMD)..." >&2
CARGO_TARGET_DIR=target/wasm-scalar RUSTFLAGS="-C target-feature=-simd128" \
  q --lib --target wasm32-unknown-unknown "${feat[@]}"

echo "running native generic..." >&2
target/native-generic/release/native "$@" > "$out/native-generic.tsv"
echo "running native target-cpu=native..." >&2
target/native-cpu/release/native "$@" > "$out/native-cpu.tsv"
echo "running wasm simd128 (node $(node --version))..." >&2
node run-wasm.mjs target/wasm-simd/wasm32-unknown-unknown/release/prg_candidates.wasm 1 "$@" > "$out/wasm-simd.tsv"
echo "running wasm no-SIMD..." >&2
node run-wasm.mjs target/wasm-scalar/wasm32-unknown-unknown/release/prg_candidates.wasm 0 "$@" > "$out/wasm-scalar.tsv"

node table.mjs "$out/native-generic.tsv" "$out/native-cpu.tsv" "$out/wasm-simd.tsv" "$out/wasm-scalar.tsv"
