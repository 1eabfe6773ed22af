//! What a hostile page costs cairn to turn into text (issue 32): conversion time and peak
//! memory for adversarial pages (deep nesting, wide tables, elements just under the caps) of
//! 1 MiB and 10 MiB and for a normal 1 MiB article. Each case runs in a child process of its
//! own (this binary again, with `--case NAME`), so its peak RSS is its own.
//! Run with `cargo bench --bench web_hostile`; figures are printed, nothing asserted.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::process::Command;
use std::time::Instant;

use cairn::web::html_scan::{MAX_DEPTH, MAX_ELEMENTS};
use cairn::web::page::{Format, html_to};

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
}

fn fill(bytes: usize, unit: &str) -> String {
    unit.repeat(bytes / unit.len().max(1))
}

fn article(bytes: usize) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Big</title></head><body><nav><a href='/'>Home</a></nav><article><h1>A long article</h1>",
    );
    let mut section = 0;
    while html.len() < bytes {
        section += 1;
        html.push_str(&format!(
            "<h2>Section {section}</h2><p>The <a href=\"/docs/{section}\">toml crate</a> reads a configuration file into your own types with serde, and its errors name the line and the column of the mistake.</p><pre><code>let config: Config = toml::from_str(text)?; // {section}</code></pre><ul><li>one</li><li>two</li></ul>"
        ));
    }
    html.push_str("</article></body></html>");
    html
}

/// Chains of divs just under the depth cap, repeated: the deepest page that is still parsed.
fn deep_within_caps(bytes: usize) -> String {
    let depth = MAX_DEPTH - 8;
    let chain = format!("{}text {}", "<div>".repeat(depth), "</div>".repeat(depth));
    let chains = (MAX_ELEMENTS - 100) / depth;
    let mut html = String::from("<html><body>");
    for _ in 0..chains {
        if html.len() + chain.len() > bytes {
            break;
        }
        html.push_str(&chain);
    }
    html.push_str("</body></html>");
    html
}

fn page(case: &str) -> String {
    const MIB: usize = 1 << 20;
    match case {
        "b5000" => format!("{}x", "<b>".repeat(5000)),
        "deep-1m" => fill(MIB, "<div>"),
        "deep-10m" => fill(10 * MIB, "<div>"),
        "table-1m" => format!(
            "<table>{}</table>",
            fill(MIB, "<tr><td>1</td><td>2</td></tr>")
        ),
        "table-10m" => format!(
            "<table>{}</table>",
            fill(10 * MIB, "<tr><td>1</td><td>2</td></tr>")
        ),
        "under-caps-1m" => deep_within_caps(MIB),
        "under-caps-10m" => deep_within_caps(10 * MIB),
        "wide-under-caps" => format!(
            "<table>{}</table>",
            "<tr><td>1</td><td>2</td></tr>".repeat(MAX_ELEMENTS / 3 - 10)
        ),
        "article-1m" => article(MIB),
        "article-10m" => article(10 * MIB),
        other => panic!("unknown case {other}"),
    }
}

fn child(case: &str) {
    let html = page(case);
    let before = peak_rss_kib();
    let started = Instant::now();
    let out = html_to(&html, "https://example.org/a", Format::Markdown);
    let took = started.elapsed();
    println!(
        "{case:>16}: {:>6.2} MiB in, {:>8.0} ms, peak RSS {:>6.1} MiB (page built: {:.1} MiB), {} chars out{}",
        html.len() as f64 / (1 << 20) as f64,
        took.as_secs_f64() * 1000.0,
        peak_rss_kib() as f64 / 1024.0,
        before as f64 / 1024.0,
        out.text.len(),
        out.note.map(|n| format!(" [{n}]")).unwrap_or_default()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--case") {
        // The converter runs on a thread with a large stack in cairn; so does it here.
        let case = args[at + 1].clone();
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || child(&case))
            .unwrap()
            .join()
            .unwrap();
        return;
    }
    let me = std::env::current_exe().unwrap();
    for case in [
        "b5000",
        "deep-1m",
        "deep-10m",
        "table-1m",
        "table-10m",
        "under-caps-1m",
        "under-caps-10m",
        "wide-under-caps",
        "article-1m",
        "article-10m",
    ] {
        let out = Command::new(&me).args(["--case", case]).output().unwrap();
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            println!("{case}: failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
