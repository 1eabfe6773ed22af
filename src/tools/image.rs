//! Images for the model: read a file beneath its checked root, recognise it by its bytes (not
//! its name), decode it, and make what is sent fit every provider: at most `MAX_EDGE` px on
//! the long edge and `MAX_SEND_BYTES`, re-encoded only when it has to be. There is no cache:
//! every read decodes the file as it is now, within `image_decode`'s budget, one at a time.

use std::io::{Cursor, Read};

use image::{DynamicImage, ImageFormat};

use super::ToolError;
use crate::fs::confined::{Beneath, OpenError};

/// Longest edge sent, in pixels (OpenAI's high-detail input and Anthropic's limit for
/// requests with many images).
pub const MAX_EDGE: u32 = 2048;
/// Largest image sent: Anthropic's per-image limit, the strictest of the common providers.
pub const MAX_SEND_BYTES: usize = 5 * 1024 * 1024;
/// Largest file read.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub data: Vec<u8>,
    pub media_type: &'static str,
    pub width: u32,
    pub height: u32,
    pub original_width: u32,
    pub original_height: u32,
}

pub use crate::content::is_image_path;

fn media_type(format: ImageFormat) -> Option<&'static str> {
    match format {
        ImageFormat::Png => Some("image/png"),
        ImageFormat::Jpeg => Some("image/jpeg"),
        ImageFormat::Gif => Some("image/gif"),
        ImageFormat::WebP => Some("image/webp"),
        _ => None,
    }
}

/// The image in `bytes` as the model gets it (checked, fitted, described): the one way an
/// image is loaded, whether a file (`read_image`, `@shot.png`, `--image`) or bytes the user
/// attached (the clipboard).
pub fn view(bytes: &[u8], display: &str) -> Result<crate::tool_output::ImageView, ToolError> {
    let prepared = prepare(bytes, display)?;
    Ok(crate::tool_output::ImageView {
        path: display.to_string(),
        media_type: prepared.media_type.to_string(),
        width: prepared.width,
        height: prepared.height,
        original_width: prepared.original_width,
        original_height: prepared.original_height,
        bytes: prepared.data.len() as u64,
        hash: String::new(),
        data: prepared.data,
    })
}

/// Decodes `bytes` and returns what to send: the bytes as they are when they already fit,
/// else downscaled to `MAX_EDGE` and re-encoded (PNG when it has transparency and fits,
/// JPEG otherwise).
pub fn prepare(bytes: &[u8], display: &str) -> Result<Prepared, ToolError> {
    let not_image = || {
        ToolError::Failed(format!(
            "{display} is not an image cairn can send: its bytes are not PNG, JPEG, GIF or WebP \
             (whatever its name says). Convert it to PNG, or read it as text with read_file"
        ))
    };
    let format = image::guess_format(bytes).map_err(|_| not_image())?;
    let media_type = media_type(format).ok_or_else(not_image)?;
    let (decoded, (width, height)) = super::image_decode::decode(bytes, format, MAX_EDGE, display)?;
    if width.max(height) <= MAX_EDGE && bytes.len() <= MAX_SEND_BYTES {
        return Ok(Prepared {
            data: bytes.to_vec(),
            media_type,
            width,
            height,
            original_width: width,
            original_height: height,
        });
    }
    let mut edge = MAX_EDGE.min(width.max(height));
    loop {
        let scaled = fit(&decoded, edge);
        let (data, media_type) = super::image_decode::one_at_a_time(|| encode(&scaled, display))?;
        // Still too many bytes (a noisy photo at full size): smaller until it fits.
        if data.len() <= MAX_SEND_BYTES || edge <= 256 {
            return Ok(Prepared {
                data,
                media_type,
                width: scaled.width(),
                height: scaled.height(),
                original_width: width,
                original_height: height,
            });
        }
        edge = edge * 3 / 4;
    }
}

/// `image` scaled so its long edge is at most `edge`, aspect kept: area-averaged straight into
/// the output (`resize` would hold a floating-point copy of the whole width first).
fn fit(image: &DynamicImage, edge: u32) -> DynamicImage {
    if image.width().max(image.height()) <= edge {
        return image.clone();
    }
    let (width, height) = super::image_decode::fitted_size(image.width(), image.height(), edge);
    image.thumbnail_exact(width, height)
}

fn encode(image: &DynamicImage, display: &str) -> Result<(Vec<u8>, &'static str), ToolError> {
    let failed = |err: image::ImageError| {
        ToolError::Failed(format!("{display}: re-encoding the image failed ({err})"))
    };
    if image.color().has_alpha() {
        let mut png = Vec::new();
        image
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .map_err(failed)?;
        if png.len() <= MAX_SEND_BYTES {
            return Ok((png, "image/png"));
        }
    }
    let mut jpeg = Vec::new();
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut Cursor::new(&mut jpeg), 85)
        .encode_image(&rgb)
        .map_err(failed)?;
    Ok((jpeg, "image/jpeg"))
}

/// Reads the file at `place` (opened beneath its root, symlinks refused), at most
/// `MAX_FILE_BYTES`.
pub fn read_file_bytes(place: &Beneath, display: &str) -> Result<Vec<u8>, ToolError> {
    let missing = || ToolError::NotFound {
        path: display.to_string(),
    };
    let (dir, name) = match place.parent() {
        Ok(found) => found,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(err) => return Err(crate::fs::open_error(display, "reading", err).into()),
    };
    let file = match dir.open_regular(&name) {
        Ok(file) => file,
        Err(OpenError::Missing) => return Err(missing()),
        Err(OpenError::Directory) => {
            return Err(ToolError::Failed(format!(
                "{display} is a directory, not an image"
            )));
        }
        Err(OpenError::NotRegular) => {
            return Err(ToolError::Failed(format!(
                "{display} is not a regular file (a device, pipe or socket)"
            )));
        }
        Err(OpenError::Symlink) => return Err(crate::fs::changed(display).into()),
        Err(OpenError::Io(err)) => {
            return Err(crate::fs::open_error(display, "opening", err).into());
        }
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| crate::fs::would_block(display, err))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ToolError::Failed(format!(
            "{display} is larger than {} MB; cairn sends smaller images only",
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn png(width: u32, height: u32, alpha: bool) -> Vec<u8> {
        let image = if alpha {
            DynamicImage::ImageRgba8(image::RgbaImage::from_fn(width, height, |x, y| {
                image::Rgba([(x % 256) as u8, (y % 256) as u8, 7, 200])
            }))
        } else {
            DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
                image::Rgb([(x % 256) as u8, (y % 256) as u8, 7])
            }))
        };
        let mut out = Vec::new();
        image
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn a_small_image_is_sent_as_it_is() {
        let bytes = png(40, 30, false);
        let prepared = prepare(&bytes, "a.png").unwrap();
        assert_eq!(prepared.data, bytes);
        assert_eq!(prepared.media_type, "image/png");
        assert_eq!((prepared.width, prepared.height), (40, 30));
    }

    #[test]
    fn a_large_image_is_downscaled_to_the_long_edge_and_re_encoded() {
        let prepared = prepare(&png(3000, 1000, false), "wide.png").unwrap();
        assert_eq!((prepared.width, prepared.height), (2048, 683));
        assert_eq!(
            (prepared.original_width, prepared.original_height),
            (3000, 1000)
        );
        assert_eq!(prepared.media_type, "image/jpeg");
        let back = image::load_from_memory(&prepared.data).unwrap();
        assert_eq!((back.width(), back.height()), (2048, 683));
        // Transparency survives as PNG.
        let prepared = prepare(&png(1000, 2500, true), "tall.png").unwrap();
        assert_eq!(prepared.media_type, "image/png");
        assert_eq!(prepared.height, 2048);
    }

    #[test]
    fn bytes_that_are_no_image_are_a_clear_error_whatever_the_name() {
        for bytes in [&b"not an image at all"[..], b"\x89PNG\r\n\x1a\nbroken", b""] {
            let err = prepare(bytes, "shot.png").unwrap_err().to_string();
            assert!(err.starts_with("shot.png "), "{err}");
            assert!(
                err.contains("not an image") || err.contains("could not be decoded"),
                "{err}"
            );
        }
        assert!(is_image_path(std::path::Path::new("a/B.PNG")));
        assert!(!is_image_path(std::path::Path::new("a/png")));
    }
}
