//! Operation sequences against all six structures and the brute force.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sparti_fuzz::ops::run(data);
});
