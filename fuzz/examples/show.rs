//! Prints the operations an `ops` input decodes to, then runs it:
//! `cargo run --example show -- FILE`.

fn main() {
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).expect("readable file");
        let input = sparti_fuzz::ops::Input::decode(&data);
        println!("{path}: config {:#04x}", input.config);
        for (i, op) in input.ops.iter().enumerate() {
            println!("  {i}: {op:?}");
        }
        sparti_fuzz::ops::run_input(&input);
        println!("  ok");
    }
}
