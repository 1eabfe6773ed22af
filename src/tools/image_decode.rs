//! Decoding an image from outside within a stated budget: one decode at a time in the process
//! (`DECODING`), at most `MAX_PIXELS` pixels and `MAX_DECODE_BYTES` of decoded pixels (the
//! dimensions are read from the header and refused before anything is allocated, and the same
//! figure is `image::Limits::max_alloc`). A PNG larger than what is sent is decoded row by row
//! with 16-bit samples stripped to 8 by the decoder and box-averaged into the output as the
//! rows arrive, so the whole image is never held (an 8000×8000 RGBA16 PNG: its ~16 MiB output).

use std::io::Cursor;
use std::sync::Mutex;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};

use super::ToolError;
use crate::sync::MutexExt;

/// Pixels decoded at most (8192 × 8192).
pub const MAX_PIXELS: u64 = 8192 * 8192;
/// Decoded pixel bytes at most, for the formats decoded whole (a 64 MP RGBA8 image).
pub const MAX_DECODE_BYTES: u64 = 256 * 1024 * 1024;

/// One decode at a time in the process: four images in one reply cost one budget, not four.
static DECODING: Mutex<()> = Mutex::new(());

/// Runs `work` while holding the process's one decoding slot.
pub fn one_at_a_time<T>(work: impl FnOnce() -> T) -> T {
    let _slot = DECODING.locked();
    work()
}

/// Decodes `bytes` (already recognised as `format`), fitted into `edge` px on the long side
/// when it is larger; refused past the budget. Runs under the decoding slot.
pub fn decode(
    bytes: &[u8],
    format: ImageFormat,
    edge: u32,
    display: &str,
) -> Result<(DynamicImage, (u32, u32)), ToolError> {
    one_at_a_time(|| {
        let failed = |err: String| {
            ToolError::Failed(format!(
                "{display} could not be decoded ({err}); the file is damaged or not what its \
                 first bytes claim"
            ))
        };
        let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
        reader.limits(limits());
        let decoder = reader
            .into_decoder()
            .map_err(|err| failed(err.to_string()))?;
        let (width, height) = decoder.dimensions();
        let pixels = u64::from(width) * u64::from(height);
        if pixels > MAX_PIXELS {
            return Err(too_large(display, width, height, "pixels"));
        }
        if format == ImageFormat::Png && width.max(height) > edge {
            drop(decoder);
            if let Some(scaled) = png_rows_fitted(bytes, edge).map_err(failed)? {
                return Ok((scaled, (width, height)));
            }
        } else if decoder.total_bytes() > MAX_DECODE_BYTES {
            return Err(too_large(display, width, height, "bytes"));
        }
        let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
        reader.limits(limits());
        let decoder = reader
            .into_decoder()
            .map_err(|err| failed(err.to_string()))?;
        if decoder.total_bytes() > MAX_DECODE_BYTES {
            return Err(too_large(display, width, height, "bytes"));
        }
        let image = DynamicImage::from_decoder(decoder).map_err(|err| failed(err.to_string()))?;
        Ok((image, (width, height)))
    })
}

fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_PIXELS as u32);
    limits.max_image_height = Some(MAX_PIXELS as u32);
    limits.max_alloc = Some(MAX_DECODE_BYTES + 16 * 1024 * 1024);
    limits
}

fn too_large(display: &str, width: u32, height: u32, what: &str) -> ToolError {
    ToolError::Failed(format!(
        "{display} is {width}×{height}: too many {what} to decode within cairn's image budget \
         (at most {} megapixels and {} MiB of decoded pixels). Scale it down first (e.g. \
         `convert in.png -resize 4096x4096 out.png`) and read that",
        MAX_PIXELS / 1_000_000,
        MAX_DECODE_BYTES >> 20
    ))
}

/// The long edge `edge`, aspect kept (at least 1 px each way).
pub fn fitted_size(width: u32, height: u32, edge: u32) -> (u32, u32) {
    let long = u64::from(width.max(height));
    let scale = |side: u32| {
        let scaled = (u64::from(side) * u64::from(edge) + long / 2) / long;
        scaled.clamp(1, u64::from(edge)) as u32
    };
    (scale(width), scale(height))
}

/// A non-interlaced PNG decoded a row at a time (palettes expanded, 16-bit stripped to 8) and
/// box-averaged into at most `edge` px on the long side; `None` for an interlaced PNG (its
/// passes do not come in row order), which is then decoded whole within the budget.
fn png_rows_fitted(bytes: &[u8], edge: u32) -> Result<Option<DynamicImage>, String> {
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|err| err.to_string())?;
    let (width, height, interlaced) = {
        let info = reader.info();
        (info.width, info.height, info.interlaced)
    };
    if interlaced {
        return Ok(None);
    }
    let (color, _) = reader.output_color_type();
    let channels = color.samples();
    let (out_w, out_h) = fitted_size(width, height, edge);
    // Which output column each input column falls in, and how many fall in each.
    let column: Vec<u32> = (0..width)
        .map(|x| (u64::from(x) * u64::from(out_w) / u64::from(width)) as u32)
        .collect();
    let mut per_column = vec![0u64; out_w as usize];
    for &c in &column {
        per_column[c as usize] += 1;
    }
    let mut sums = vec![0u64; out_w as usize * channels];
    let mut out = Vec::with_capacity(out_w as usize * out_h as usize * channels);
    let (mut row_of_out, mut rows_in) = (0u32, 0u64);
    let flush = |sums: &mut Vec<u64>, rows_in: u64, out: &mut Vec<u8>| {
        for (at, sum) in sums.iter_mut().enumerate() {
            let count = (per_column[at / channels] * rows_in).max(1);
            out.push(((*sum + count / 2) / count).min(255) as u8);
            *sum = 0;
        }
    };
    let mut y = 0u32;
    while let Some(row) = reader.next_row().map_err(|err| err.to_string())? {
        let target = (u64::from(y) * u64::from(out_h) / u64::from(height)) as u32;
        if target != row_of_out && rows_in > 0 {
            flush(&mut sums, rows_in, &mut out);
            rows_in = 0;
            row_of_out = target;
        }
        for (x, pixel) in row.data().chunks_exact(channels).enumerate() {
            let base = column.get(x).copied().unwrap_or(0) as usize * channels;
            for (c, &sample) in pixel.iter().enumerate() {
                sums[base + c] += u64::from(sample);
            }
        }
        rows_in += 1;
        y += 1;
    }
    if rows_in > 0 {
        flush(&mut sums, rows_in, &mut out);
    }
    out.resize(out_w as usize * out_h as usize * channels, 0);
    let image = match color {
        png::ColorType::Grayscale => {
            image::GrayImage::from_raw(out_w, out_h, out).map(DynamicImage::ImageLuma8)
        }
        png::ColorType::GrayscaleAlpha => {
            image::GrayAlphaImage::from_raw(out_w, out_h, out).map(DynamicImage::ImageLumaA8)
        }
        png::ColorType::Rgb | png::ColorType::Indexed => {
            image::RgbImage::from_raw(out_w, out_h, out).map(DynamicImage::ImageRgb8)
        }
        png::ColorType::Rgba => {
            image::RgbaImage::from_raw(out_w, out_h, out).map(DynamicImage::ImageRgba8)
        }
    };
    image
        .map(Some)
        .ok_or_else(|| "the decoded rows do not make an image".into())
}

#[cfg(test)]
#[path = "image_decode_tests.rs"]
mod tests;
