//! A model file as a server loads it: ONNX (protobuf decoding, import, planning) or a `.rfshape`
//! shape file, whichever `ModelFile::parse` takes it for.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ringfence_core::nn::{ModelFile, ModelShape};

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = ModelFile::parse(data) {
        // Whatever parses must re-encode to a shape file that reads back the same: P1 and P2
        // load the shape file `ringfence model shape` writes from P0's ONNX.
        let shape = file.shape();
        let again = ModelShape::decode(&shape.encode()).expect("a written shape file reads back");
        assert_eq!(&again, shape);
        assert_eq!(again.plan.digest(), shape.plan.digest());
    }
});
