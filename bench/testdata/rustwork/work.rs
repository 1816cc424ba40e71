// The workloads of bench/internal/gowork (sort, recursive calls,
// string-keyed maps), written plainly in Rust with only its standard
// library, so BenchmarkRustWasm can show what the same work costs when
// a guest is not compiled by Go. encoding/json has no counterpart: the
// registries these machines reach carry no serde.

use std::collections::HashMap;

#[no_mangle]
pub extern "C" fn rustwork_sort(n: u32) -> u64 {
    let n = n as usize;
    let mut a = vec![0u64; n];
    let mut x: u64 = 88172645463325252;
    for v in a.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *v = x;
    }
    a.sort_unstable();
    a[n / 2]
}

#[no_mangle]
pub extern "C" fn rustwork_fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        rustwork_fib(n - 1) + rustwork_fib(n - 2)
    }
}

#[no_mangle]
pub extern "C" fn rustwork_map(n: u32) -> u64 {
    let n = n as usize;
    let keys: Vec<String> = (0..n).map(|i| format!("key-{}", i)).collect();
    let mut m: HashMap<&str, usize> = HashMap::with_capacity(n);
    for (i, k) in keys.iter().enumerate() {
        m.insert(k.as_str(), i);
    }
    let mut sum: u64 = 0;
    for _ in 0..10 {
        for k in &keys {
            sum += *m.get(k.as_str()).unwrap_or(&0) as u64;
        }
    }
    sum
}
