//! Throughput of the SSE parser alone and of parser + chunk assembler, in MB/s, over a large
//! generated stream (text, reasoning and split tool-call arguments, CRLF line ends, fed in
//! 16 KiB reads). Run by hand: `cargo bench --bench sse_parse`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::llm::StreamDelta;
use cairn::llm::sse::SseParser;
use cairn::llm::stream::ReplyDecoder;

const READ: usize = 16 * 1024;

fn chunk(delta: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}],\"usage\":null}}\r\n\r\n"
    )
}

fn generate(target_bytes: usize) -> Vec<u8> {
    let mut body = String::with_capacity(target_bytes + 4096);
    body.push_str(": keep-alive\r\n\r\n");
    let mut i = 0usize;
    while body.len() < target_bytes / 4 {
        body.push_str(&chunk(&format!(
            "{{\"reasoning_content\":\"thinking {i} über\"}}"
        )));
        i += 1;
    }
    while body.len() < target_bytes / 2 {
        body.push_str(&chunk(&format!("{{\"content\":\"word{i} — \"}}")));
        i += 1;
    }
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":""}}]}"#,
    ));
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"content\":\""}}]}"#,
    ));
    while body.len() < target_bytes {
        body.push_str(&chunk(&format!(
            r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":"line {i} caf\\u00e9\\n"}}}}]}}"#
        )));
        i += 1;
    }
    body.push_str(&chunk(
        r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}"#,
    ));
    body.push_str(
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n",
    );
    body.push_str("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\r\n\r\ndata: [DONE]\r\n\r\n");
    body.into_bytes()
}

/// CPU time of this thread: unlike wall time it does not count time other processes on a
/// busy machine took from us.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant libc knows.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Best wall time and best thread CPU time over `runs`, and what `f` counted.
fn best_of(runs: usize, mut f: impl FnMut() -> usize) -> (Duration, Duration, usize) {
    let (mut wall, mut cpu) = (Duration::MAX, Duration::MAX);
    let mut count = 0;
    for _ in 0..runs {
        let (start, start_cpu) = (Instant::now(), thread_cpu_time());
        count = f();
        cpu = cpu.min(thread_cpu_time() - start_cpu);
        wall = wall.min(start.elapsed());
    }
    (wall, cpu, count)
}

fn main() {
    let body = generate(64 * 1024 * 1024);
    let mb = body.len() as f64 / 1e6;

    let (parse, parse_cpu, frames) = best_of(5, || {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        let mut frames = 0;
        for read in body.chunks(READ) {
            parser.feed(read, &mut out);
            frames += out.len();
            out.clear();
        }
        parser.finish(&mut out);
        frames + out.len()
    });

    let (assemble, assemble_cpu, deltas) = best_of(5, || {
        let mut deltas = 0usize;
        let mut sink = |_: StreamDelta| deltas += 1;
        let mut decoder = ReplyDecoder::new();
        for read in body.chunks(READ) {
            decoder.feed(read, &mut sink).unwrap();
        }
        let completion = decoder.finish(&mut sink).unwrap();
        assert_eq!(completion.tool_calls.len(), 1);
        deltas
    });

    println!("stream: {mb:.1} MB, {frames} events, {deltas} deltas, reads of {READ} bytes");
    let rate = |d: Duration| mb / d.as_secs_f64();
    println!("                        wall MB/s   cpu MB/s");
    println!(
        "sse parser:             {:9.0}  {:9.0}",
        rate(parse),
        rate(parse_cpu)
    );
    println!(
        "sse parser + assembler: {:9.0}  {:9.0}",
        rate(assemble),
        rate(assemble_cpu)
    );
}
