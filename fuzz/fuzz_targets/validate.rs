#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| crd_audit_engine::fuzz::validate(data));
