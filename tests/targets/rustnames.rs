// rustnames — a Rust program whose functions have mangled names (the v0
// mangling: built with -C symbol-mangling-version=v0 by names_rust.sh):
// shapes::Sorter::crunch is called CALLS times.
// usage: rustnames CALLS — prints "calls=N sum=S".
mod shapes {
    pub struct Sorter {
        pub items: Vec<u64>,
    }
    impl Sorter {
        #[inline(never)]
        pub fn crunch(&self, rounds: u64) -> u64 {
            let mut s = 0u64;
            for r in 0..rounds {
                for v in &self.items {
                    s = s.wrapping_add(v.wrapping_mul(r + 1));
                }
            }
            s
        }
    }
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let sorter = shapes::Sorter { items: (0..4000).collect() };
    let mut sum = 0u64;
    for _ in 0..n {
        sum = sum.wrapping_add(std::hint::black_box(&sorter).crunch(20));
    }
    println!("calls={} sum={}", n, sum);
}
