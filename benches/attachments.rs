//! Attachment figures: the `@` finder's index over 50,000 files (time, memory), its query
//! latency, the downscale of a 12-megapixel photo, the request bytes of one attached image,
//! and the PNG encoding of a clipboard screenshot (Ctrl+V). Run with `cargo bench --bench attachments`; figures are printed, nothing asserted.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::content::ImageRef;
use cairn::finder::FileIndex;
use cairn::llm::{ChatMessage, UserContent};

/// Resident memory of this process, in bytes (Linux).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn finder() {
    let dir = tempfile::tempdir().unwrap();
    for package in 0..500 {
        let src = dir.path().join(format!("packages/pkg{package:03}/src"));
        std::fs::create_dir_all(&src).unwrap();
        for file in 0..100 {
            std::fs::write(src.join(format!("widget_{file:02}.tsx")), "").unwrap();
        }
    }
    let before = rss();
    let started = Instant::now();
    let index = FileIndex::start(dir.path());
    while !index.is_ready() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let built = started.elapsed();
    let files = index.files();
    let heap: usize = files.iter().map(|f| f.capacity() + 24).sum();
    println!(
        "finder index: {} files in {built:?}; paths {:.1} MB on the heap, RSS +{:.1} MB",
        files.len(),
        heap as f64 / 1e6,
        rss().saturating_sub(before) as f64 / 1e6
    );
    let queries = [
        "widget",
        "pkg4 w07",
        "p123srcw5",
        "zzz",
        "packages/pkg499/src/widget_99",
    ];
    let rounds = 20;
    let started = Instant::now();
    for _ in 0..rounds {
        for query in queries {
            std::hint::black_box(index.matches(query, 20));
        }
    }
    let per = started.elapsed() / (rounds * queries.len() as u32);
    println!(
        "finder query over 50,000 files: {per:?} each (mean of {})",
        rounds * 5
    );
}

fn images() {
    let photo = image::RgbImage::from_fn(4000, 3000, |x, y| {
        image::Rgb([
            (x * 7 % 256) as u8,
            (y * 3 % 256) as u8,
            ((x ^ y) % 256) as u8,
        ])
    });
    let mut png = Vec::new();
    image::DynamicImage::ImageRgb8(photo)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let started = Instant::now();
    let prepared = cairn::tools::image::prepare(&png, "photo.png").unwrap();
    println!(
        "downscale 4000×3000 ({:.1} MB PNG) → {}×{} {} ({:.2} MB) in {:?}",
        png.len() as f64 / 1e6,
        prepared.width,
        prepared.height,
        prepared.media_type,
        prepared.data.len() as f64 / 1e6,
        started.elapsed()
    );
    let mut content = UserContent::from("what is wrong in this screenshot?");
    content.push_image(
        ImageRef {
            hash: String::new(),
            media_type: prepared.media_type.into(),
            name: "photo.png".into(),
            width: prepared.width,
            height: prepared.height,
            bytes: prepared.data.len() as u64,
        },
        &prepared.data,
    );
    let message = serde_json::to_vec(&ChatMessage::User { content }).unwrap();
    println!(
        "request bytes of one attached image (its user message): {:.2} MB",
        message.len() as f64 / 1e6
    );
}

/// Ctrl+V: the clipboard's raw pixels encoded as the PNG that is attached (runs on a
/// blocking thread, not the UI's), for a full-HD and a 4K screenshot.
fn clipboard() {
    use cairn::paste::clipboard::{self, ClipboardContent, ClipboardError, ClipboardImage};
    struct Screenshot(Option<ClipboardContent>);
    impl clipboard::ClipboardSource for Screenshot {
        fn read(&mut self) -> Result<ClipboardContent, ClipboardError> {
            Ok(self.0.take().unwrap_or(ClipboardContent::Empty))
        }
    }
    for (w, h) in [(1920u32, 1080u32), (3840, 2160)] {
        let pixels = (0..w * h)
            .flat_map(|i| {
                let (x, y) = (i % w, i / w);
                // Flat areas with text-like edges, as a screenshot has.
                let ink = if (x / 7 + y / 13) % 9 == 0 { 30 } else { 235 };
                [ink, ink, ink / 2 + (y / 40 % 8) as u8, 255]
            })
            .collect();
        let mut source = Screenshot(Some(ClipboardContent::Image(ClipboardImage::Rgba {
            width: w,
            height: h,
            pixels,
        })));
        let started = Instant::now();
        let read = clipboard::read(&mut source, "clipboard.png").unwrap();
        let took = started.elapsed();
        if let clipboard::Clipped::Image(image) = read {
            println!(
                "clipboard {w}×{h} RGBA → PNG of {:.2} MB in {took:?}",
                image.bytes as f64 / 1e6
            );
        }
    }
}

fn main() {
    finder();
    images();
    clipboard();
}
