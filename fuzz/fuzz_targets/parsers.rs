//! Arbitrary bytes to the scene-file and query-file parsers.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sparti_fuzz::parsers::run(data);
});
