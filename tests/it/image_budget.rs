//! Images from outside within a stated budget (issue 32 item 6): the 497 KB PNG of 8000×8000
//! RGBA16 pixels that cost ~0.8 GB to decode is read by `cairn tool run read_image` in a child
//! whose own peak memory (its rusage, through a small launcher) is measured; a header claiming more pixels than the
//! budget is refused before anything is allocated, in every format's spelling of the claim.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::process::Stdio;

use crate::support::cairn_cmd::Sandbox;

/// An RGBA16 PNG written a row at a time (never held whole): a gradient, so rows differ.
fn rgba16_png(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Sixteen);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().unwrap();
        let mut stream = writer.stream_writer().unwrap();
        let mut row = vec![0u8; width as usize * 8];
        for y in 0..height {
            let shade = ((y * 255) / height) as u8;
            for pixel in row.chunks_exact_mut(8) {
                pixel.copy_from_slice(&[shade, 0, 0x40, 0, 0x80, 0, 0xFF, 0xFF]);
            }
            std::io::Write::write_all(&mut stream, &row).unwrap();
        }
        stream.finish().unwrap();
    }
    out
}

/// Starts its arguments as a child of its own, waits for it with wait4 and prints the child's
/// peak RSS (KiB) on stderr. A process forked from the test binary would carry the binary's
/// own resident size into its rusage (Linux records the old memory's high-water mark at
/// exec), and the binary is large while the whole suite runs: the launcher is small.
const LAUNCHER: &str = "import os, sys\n\
pid = os.fork()\n\
if pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n\
_, status, usage = os.wait4(pid, 0)\n\
sys.stderr.write('\\n%s%d\\n' % ('PEAK_KIB=', usage.ru_maxrss))\n\
code = os.waitstatus_to_exitcode(status)\n\
sys.exit(code if code >= 0 else 128 - code)\n";

/// Whether the launcher can run; without python3 the measured tests are skipped, as the
/// limits tests are.
fn launcher(test: &str) -> bool {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        eprintln!("SKIPPED {test}: python3 (the peak-memory launcher) is not installed");
    }
    found
}

/// Runs `cairn tool run TOOL ARGS` and returns (exit code, stdout and stderr, peak RSS in MiB)
/// from the child's own rusage, measured by a small launcher (`LAUNCHER`).
fn run_measured(sb: &Sandbox, tool: &str, args: &str) -> (i32, String, f64) {
    let cairn = sb.command(&["tool", "run", tool, args], &[]).into_std();
    let mut command = std::process::Command::new("python3");
    command
        .arg("-c")
        .arg(LAUNCHER)
        .arg(cairn.get_program())
        .args(cairn.get_args());
    if let Some(dir) = cairn.get_current_dir() {
        command.current_dir(dir);
    }
    for (name, value) in cairn.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let output = command.stdin(Stdio::null()).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let (stderr, peak) = match stderr.rsplit_once("\nPEAK_KIB=") {
        Some((rest, peak)) => (rest.to_string(), peak.trim().parse::<f64>().unwrap()),
        None => panic!("the launcher reported no peak: {stderr}"),
    };
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &stderr;
    (output.status.code().unwrap_or(-1), text, peak / 1024.0)
}

#[test]
fn an_8000_by_8000_rgba16_png_is_read_within_the_budget() {
    if !launcher("an_8000_by_8000_rgba16_png_is_read_within_the_budget") {
        return;
    }
    let bytes = rgba16_png(8000, 8000);
    let sb = Sandbox::new();
    std::fs::write(sb.path("huge16.png"), &bytes).unwrap();
    std::fs::write(sb.path("small.png"), rgba16_png(64, 64)).unwrap();
    let (_, _, baseline) = run_measured(&sb, "read_image", r#"{"path":"small.png"}"#);
    let (code, stdout, peak) = run_measured(&sb, "read_image", r#"{"path":"huge16.png"}"#);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("2048") && stdout.contains("8000"),
        "{stdout}"
    );
    // The whole image at 16 bits is 488 MiB (and decoding it whole cost ~0.8 GB); fitted from
    // its rows it costs the output and the re-encoding.
    assert!(
        peak - baseline < 120.0,
        "{} KB file: peak {peak:.0} MiB, a small image {baseline:.0} MiB",
        bytes.len() / 1024
    );
}

/// A PNG header claiming `width`×`height` RGBA16, with no pixel data after it.
fn png_header(width: u32, height: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[16, 6, 0, 0, 0]);
    out.extend_from_slice(&13u32.to_be_bytes());
    out.extend_from_slice(&ihdr);
    out.extend_from_slice(&crc32fast::hash(&ihdr).to_be_bytes());
    out
}

/// A GIF header (logical screen and one image descriptor) claiming `width`×`height`.
fn gif_header(width: u16, height: u16) -> Vec<u8> {
    let mut out = b"GIF89a".to_vec();
    out.extend_from_slice(&width.to_le_bytes());
    out.extend_from_slice(&height.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0x2C, 0, 0, 0, 0]);
    out.extend_from_slice(&width.to_le_bytes());
    out.extend_from_slice(&height.to_le_bytes());
    out.extend_from_slice(&[0, 2, 2, 0x4C, 0x01, 0, 0x3B]);
    out
}

#[test]
fn headers_claiming_more_than_the_budget_are_refused_in_every_format() {
    if !launcher("headers_claiming_more_than_the_budget_are_refused_in_every_format") {
        return;
    }
    let sb = Sandbox::new();
    let bombs: [(&str, Vec<u8>); 4] = [
        ("wide.png", png_header(1_000_000, 100)),
        ("square.png", png_header(20_000, 20_000)),
        ("named-jpg.jpg", png_header(9000, 9000)),
        ("big.gif", gif_header(65_535, 65_535)),
    ];
    for (name, bytes) in bombs {
        std::fs::write(sb.path(name), bytes).unwrap();
        let args = serde_json::json!({ "path": name }).to_string();
        let (code, stdout, peak) = run_measured(&sb, "read_image", &args);
        assert_ne!(code, 0, "{name}: {stdout}");
        assert!(
            stdout.contains("budget") || stdout.contains("could not be decoded"),
            "{name}: {stdout}"
        );
        assert!(peak < 200.0, "{name}: {peak:.0} MiB");
    }
}
