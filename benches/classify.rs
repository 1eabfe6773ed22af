//! Classification time of a long pipeline: it runs before every `bash` call, so its median
//! must stay well under a millisecond. Run by hand: `cargo bench --bench classify`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::permissions::classify::classify;

const RUNS: usize = 2000;

fn long_pipeline() -> String {
    let stages = [
        "cat src/*.rs",
        "grep -v '^//'",
        "sed -e 's/foo/bar/g' -e 's/\\t/  /g'",
        "awk '{print $1, $2}'",
        "tr '[:upper:]' '[:lower:]'",
        "cut -d' ' -f1",
        "sort",
        "uniq -c",
        "sort -rn",
        "head -n 50",
        "xargs -n1 echo",
        "tee stats.txt",
        "wc -l",
    ];
    let pipeline = stages.join(" | ");
    format!(
        "cd sub && {pipeline} && git status --short && find . -name '*.o' -exec rm {{}} \\; ; \
         bash -c \"cargo test 2>&1 | tail -20\" > /tmp/out.log"
    )
}

fn median(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99), samples[samples.len() - 1])
}

fn main() {
    let ws = tempfile::tempdir().unwrap();
    let command = std::env::var("CLASSIFY_COMMAND").unwrap_or_else(|_| long_pipeline());
    let first = Instant::now();
    let verdict = classify(&command, ws.path());
    let first = first.elapsed();
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let again = classify(&command, ws.path());
        samples.push(start.elapsed());
        assert_eq!(again, verdict);
    }
    let (p50, p99, max) = median(samples);
    println!(
        "command: {} bytes, {} pipeline stages",
        command.len(),
        command.matches('|').count() + 1
    );
    println!("verdict: {} ({})", verdict.class, verdict.reason);
    println!("first call (builds the parser): {first:?}");
    let mut short = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        classify("ls -la", ws.path());
        short.push(start.elapsed());
    }
    let (short_p50, _, _) = median(short);
    println!("`ls -la` for comparison: median {short_p50:?}");
    println!("median {p50:?}  p99 {p99:?}  max {max:?}  over {RUNS} runs (target: median < 1 ms)");
}
