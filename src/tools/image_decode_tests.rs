#![allow(clippy::unwrap_used)]

use super::*;

/// A PNG of `width`×`height` written a row at a time (never held whole), each pixel from `px`.
pub fn streamed_png(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    px: impl Fn(u32, u32) -> Vec<u8>,
) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(color);
        encoder.set_depth(depth);
        let mut writer = encoder.write_header().unwrap();
        let mut stream = writer.stream_writer().unwrap();
        for y in 0..height {
            let row: Vec<u8> = (0..width).flat_map(|x| px(x, y)).collect();
            std::io::Write::write_all(&mut stream, &row).unwrap();
        }
        stream.finish().unwrap();
    }
    out
}

/// A PNG header claiming `width`×`height`, with no pixel data after it.
fn header_only(width: u32, height: u32) -> Vec<u8> {
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

#[test]
fn a_16_bit_png_larger_than_the_edge_is_fitted_from_its_rows_stripped_to_8_bits() {
    // 4000×2000 RGBA16: left half red, right half blue, alpha full; 16-bit samples 0xABCD.
    let bytes = streamed_png(
        4000,
        2000,
        png::ColorType::Rgba,
        png::BitDepth::Sixteen,
        |x, _| {
            if x < 2000 {
                vec![0xAB, 0xCD, 0, 0, 0, 0, 0xFF, 0xFF]
            } else {
                vec![0, 0, 0, 0, 0xAB, 0xCD, 0xFF, 0xFF]
            }
        },
    );
    let (image, original) = decode(&bytes, ImageFormat::Png, 2048, "a.png").unwrap();
    assert_eq!(original, (4000, 2000));
    assert_eq!((image.width(), image.height()), (2048, 1024));
    let rgba = image.to_rgba8();
    assert_eq!(rgba.get_pixel(10, 10).0, [0xAB, 0, 0, 0xFF]);
    assert_eq!(rgba.get_pixel(2040, 1000).0, [0, 0, 0xAB, 0xFF]);
    assert!(matches!(image, DynamicImage::ImageRgba8(_)));
}

#[test]
fn averages_are_exact_on_a_checkerboard_and_grey_and_palette_pngs_fit_too() {
    // A 1-px checkerboard of 0 and 200 halves to a flat 100.
    let bytes = streamed_png(
        4096,
        100,
        png::ColorType::Grayscale,
        png::BitDepth::Eight,
        |x, y| vec![if (x + y) % 2 == 0 { 0 } else { 200 }],
    );
    let (image, _) = decode(&bytes, ImageFormat::Png, 2048, "c.png").unwrap();
    assert_eq!((image.width(), image.height()), (2048, 50));
    assert!(image.to_luma8().pixels().all(|p| p.0[0] == 100));
}

#[test]
fn headers_past_the_pixel_budget_are_refused_before_any_pixel_is_allocated() {
    for (w, h) in [
        (100_000, 100_000),
        (8193, 8193),
        (1, 70_000_000),
        (70_000_000, 1),
        (u32::MAX, u32::MAX),
    ] {
        let err = match decode(&header_only(w, h), ImageFormat::Png, 2048, "bomb.png") {
            Err(err) => err.to_string(),
            Ok(_) => panic!("{w}×{h} decoded"),
        };
        assert!(err.contains("bomb.png"), "{err}");
        assert!(
            err.contains("budget") || err.contains("could not be decoded"),
            "{w}×{h}: {err}"
        );
    }
    // Just within: the header is read and the (missing) data is the complaint, not the size.
    let err = decode(&header_only(8192, 8192), ImageFormat::Png, 2048, "x.png")
        .unwrap_err()
        .to_string();
    assert!(err.contains("could not be decoded"), "{err}");
}

#[test]
fn fitted_sizes_keep_the_aspect_and_never_reach_zero() {
    assert_eq!(fitted_size(3000, 1000, 2048), (2048, 683));
    assert_eq!(fitted_size(1000, 2500, 2048), (819, 2048));
    assert_eq!(fitted_size(70_000, 1, 2048), (2048, 1));
    assert_eq!(fitted_size(8000, 8000, 2048), (2048, 2048));
}

/// The figure for four reads in one reply: four threads prepare the 8000×8000 RGBA16 PNG at
/// once. Run alone (`cargo test --lib four_parallel -- --ignored --nocapture`): it reads this
/// process's peak RSS, which other tests running beside it would raise.
#[test]
#[ignore]
#[allow(clippy::print_stderr)]
fn four_parallel_reads_of_the_big_png_peak() {
    let peak = || {
        std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    let bytes = std::sync::Arc::new(streamed_png(
        8000,
        8000,
        png::ColorType::Rgba,
        png::BitDepth::Sixteen,
        |x, y| vec![(x % 256) as u8, 0, (y % 256) as u8, 0, 0x80, 0, 0xFF, 0xFF],
    ));
    let before = peak();
    let started = std::time::Instant::now();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let bytes = std::sync::Arc::clone(&bytes);
            std::thread::spawn(move || {
                crate::tools::image::prepare(&bytes, "big.png")
                    .unwrap()
                    .width
            })
        })
        .collect();
    for thread in threads {
        assert_eq!(thread.join().unwrap(), 2048);
    }
    eprintln!(
        "four parallel reads of an 8000×8000 RGBA16 PNG ({} KB): {:.1} s, peak RSS {before} MiB before, {} MiB after",
        bytes.len() / 1024,
        started.elapsed().as_secs_f64(),
        peak()
    );
}
