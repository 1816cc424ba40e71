// The native side of BenchmarkRustWasm: runs one workload of work.rs
// ITERS times and prints the median wall and thread-CPU nanoseconds of
// one run and the workload's checksum, so the benchmark compares like
// with like on both sides of the same run.

#[path = "work.rs"]
mod work;

use std::time::Instant;

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

fn thread_cpu_ns() -> u128 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: ts is a valid, writable timespec for the call's duration.
    if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.sec as u128 * 1_000_000_000 + ts.nsec as u128
}

fn median(mut v: Vec<u128>) -> u128 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: native sort|fib|map N ITERS");
        std::process::exit(2);
    }
    let n: u32 = args[2].parse().expect("N");
    let iters: usize = args[3].parse::<usize>().expect("ITERS").max(1);
    let f: extern "C" fn(u32) -> u64 = match args[1].as_str() {
        "sort" => work::rustwork_sort,
        "fib" => work::rustwork_fib,
        "map" => work::rustwork_map,
        other => {
            eprintln!("unknown workload {}", other);
            std::process::exit(2);
        }
    };
    let mut check = 0u64;
    let mut wall = Vec::with_capacity(iters);
    let mut cpu = Vec::with_capacity(iters);
    for _ in 0..iters {
        let (t, c) = (Instant::now(), thread_cpu_ns());
        check = f(n);
        cpu.push(thread_cpu_ns() - c);
        wall.push(t.elapsed().as_nanos());
    }
    println!("{} {} {}", median(wall), median(cpu), check);
}
