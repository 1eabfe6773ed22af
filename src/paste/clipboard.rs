//! Ctrl+V: what the system clipboard holds right now. An image becomes a `PendingImage` (PNG
//! bytes, sent as `Attachment::ImageBytes`); text is handed back to be pasted as text (read
//! at this moment, so never stale); an empty clipboard, or none at all (no display server,
//! an SSH session), is a message that says what to do instead. Reading goes through the
//! `ClipboardSource` trait so tests feed their own bytes; `SystemClipboard` is arboard's (the
//! clipboard crate of the Rust ecosystem: X11 and, with its `wayland-data-control` feature,
//! Wayland compositors, macOS and Windows). A read can block (an X11 owner that never
//! answers waits out arboard's timeout), so the TUI runs it on a blocking thread.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader, RgbaImage};

use super::PendingImage;
use crate::bus::Attachment;

/// An image as a clipboard hands it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClipboardImage {
    /// Raw pixels, 4 bytes each (what arboard returns on every platform).
    Rgba {
        width: u32,
        height: u32,
        pixels: Vec<u8>,
    },
    /// An encoded file (PNG, JPEG, …) as some clipboards and tests give it.
    Encoded(Vec<u8>),
}

/// What the clipboard holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClipboardContent {
    Image(ClipboardImage),
    Text(String),
    Empty,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClipboardError {
    #[error(
        "no clipboard to read here: {0}. Paste the image file's path instead (most terminals \
         paste a file dragged onto them as its path), or type @path/to/image.png"
    )]
    Unavailable(String),
    #[error("the clipboard could not be read: {0}")]
    Failed(String),
    #[error("the clipboard's image could not be used: {0}")]
    BadImage(String),
}

/// Where clipboard contents come from.
pub trait ClipboardSource {
    fn read(&mut self) -> Result<ClipboardContent, ClipboardError>;
}

/// What Ctrl+V brings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clipped {
    Image(PendingImage),
    Text(String),
    Empty,
}

/// Reads `source` once; an image is named `name` (`clipboard.png`) and encoded as PNG.
pub fn read(source: &mut dyn ClipboardSource, name: &str) -> Result<Clipped, ClipboardError> {
    match source.read()? {
        ClipboardContent::Image(image) => pending(image, name).map(Clipped::Image),
        ClipboardContent::Text(text) if text.is_empty() => Ok(Clipped::Empty),
        ClipboardContent::Text(text) => Ok(Clipped::Text(text)),
        ClipboardContent::Empty => Ok(Clipped::Empty),
    }
}

/// The clipboard's image as an attachment: raw pixels become a PNG; encoded bytes are kept
/// as they are once they prove to be an image (its header gives the size).
fn pending(image: ClipboardImage, name: &str) -> Result<PendingImage, ClipboardError> {
    let (png, width, height) = match image {
        ClipboardImage::Rgba {
            width,
            height,
            pixels,
        } => {
            let bad = || {
                ClipboardError::BadImage(format!(
                    "{width}×{height} pixels do not match its {} bytes",
                    pixels.len()
                ))
            };
            let buffer = RgbaImage::from_raw(width, height, pixels.clone()).ok_or_else(bad)?;
            let mut png = Vec::new();
            DynamicImage::ImageRgba8(buffer)
                .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
                .map_err(|err| ClipboardError::BadImage(err.to_string()))?;
            (png, width, height)
        }
        ClipboardImage::Encoded(bytes) => {
            let (width, height) = ImageReader::new(Cursor::new(&bytes))
                .with_guessed_format()
                .ok()
                .filter(|reader| reader.format().is_some())
                .ok_or_else(|| {
                    ClipboardError::BadImage("its bytes are not an image format cairn reads".into())
                })?
                .into_dimensions()
                .map_err(|err| ClipboardError::BadImage(err.to_string()))?;
            (bytes, width, height)
        }
    };
    Ok(PendingImage {
        name: name.to_string(),
        bytes: png.len() as u64,
        width,
        height,
        attachment: Attachment::ImageBytes {
            name: name.to_string(),
            bytes: png,
        },
    })
}

/// Why there is no clipboard to read, judged from the environment (`env` looks a variable
/// up), before any connection is tried: on Linux and the BSDs a clipboard needs a display
/// server, and a terminal over SSH or on a console has none.
pub fn unavailable(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if !cfg!(all(unix, not(target_os = "macos"))) {
        return None;
    }
    let set = |name: &str| env(name).is_some_and(|value| !value.is_empty());
    if set("DISPLAY") || set("WAYLAND_DISPLAY") {
        return None;
    }
    let over_ssh = set("SSH_CONNECTION") || set("SSH_TTY");
    Some(if over_ssh {
        "this is an SSH session without a display (neither DISPLAY nor WAYLAND_DISPLAY is \
         set), and the clipboard is on the machine you connect from"
            .to_string()
    } else {
        "neither DISPLAY nor WAYLAND_DISPLAY is set (no desktop session in this terminal)"
            .to_string()
    })
}

/// Looks an environment variable up.
type Env = Box<dyn Fn(&str) -> Option<String> + Send>;

/// The system clipboard through arboard; `env` is the process environment unless a test
/// gives its own.
pub struct SystemClipboard {
    env: Env,
}

impl Default for SystemClipboard {
    fn default() -> Self {
        Self::with_env(|name| std::env::var(name).ok())
    }
}

impl SystemClipboard {
    pub fn with_env(env: impl Fn(&str) -> Option<String> + Send + 'static) -> Self {
        Self { env: Box::new(env) }
    }
}

impl ClipboardSource for SystemClipboard {
    fn read(&mut self) -> Result<ClipboardContent, ClipboardError> {
        if let Some(why) = unavailable(&*self.env) {
            return Err(ClipboardError::Unavailable(why));
        }
        // A new connection per read: what is read is what the clipboard holds now.
        let mut clipboard = arboard::Clipboard::new().map_err(|err| match err {
            arboard::Error::ClipboardNotSupported => ClipboardError::Unavailable(err.to_string()),
            other => ClipboardError::Failed(other.to_string()),
        })?;
        match clipboard.get_image() {
            Ok(image) => {
                return Ok(ClipboardContent::Image(ClipboardImage::Rgba {
                    width: u32::try_from(image.width).unwrap_or(u32::MAX),
                    height: u32::try_from(image.height).unwrap_or(u32::MAX),
                    pixels: image.bytes.into_owned(),
                }));
            }
            Err(arboard::Error::ContentNotAvailable | arboard::Error::ConversionFailure) => {}
            Err(err) => return Err(ClipboardError::Failed(err.to_string())),
        }
        match clipboard.get_text() {
            Ok(text) => Ok(ClipboardContent::Text(text)),
            Err(arboard::Error::ContentNotAvailable) => Ok(ClipboardContent::Empty),
            Err(err) => Err(ClipboardError::Failed(err.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    struct Fixed(Result<ClipboardContent, ClipboardError>);

    impl ClipboardSource for Fixed {
        fn read(&mut self) -> Result<ClipboardContent, ClipboardError> {
            self.0.clone()
        }
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = RgbaImage::from_fn(width, height, |x, y| {
            image::Rgba([x as u8, y as u8, 9, 255])
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgba8(image)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn png_bytes_on_the_clipboard_become_an_image_attachment_as_they_are() {
        let bytes = png(40, 30);
        let mut source = Fixed(Ok(ClipboardContent::Image(ClipboardImage::Encoded(
            bytes.clone(),
        ))));
        let Clipped::Image(image) = read(&mut source, "clipboard.png").unwrap() else {
            panic!("an image");
        };
        assert_eq!((image.width, image.height), (40, 30));
        assert_eq!(image.bytes, bytes.len() as u64);
        assert_eq!(
            image.attachment,
            Attachment::ImageBytes {
                name: "clipboard.png".into(),
                bytes
            }
        );
        assert!(
            image.label().starts_with("clipboard.png ("),
            "{}",
            image.label()
        );
        assert!(image.label().ends_with(", 40×30)"), "{}", image.label());
    }

    #[test]
    fn raw_pixels_are_encoded_as_a_png_that_decodes_to_the_same_picture() {
        let pixels: Vec<u8> = (0..(3 * 2 * 4)).map(|i| i as u8).collect();
        let mut source = Fixed(Ok(ClipboardContent::Image(ClipboardImage::Rgba {
            width: 3,
            height: 2,
            pixels: pixels.clone(),
        })));
        let Clipped::Image(image) = read(&mut source, "clipboard.png").unwrap() else {
            panic!("an image");
        };
        let Attachment::ImageBytes { bytes, .. } = &image.attachment else {
            panic!("bytes");
        };
        assert_eq!(image::guess_format(bytes).unwrap(), ImageFormat::Png);
        let back = image::load_from_memory(bytes).unwrap().to_rgba8();
        assert_eq!(back.into_raw(), pixels);
    }

    #[test]
    fn a_broken_image_on_the_clipboard_is_a_clear_error() {
        for image in [
            ClipboardImage::Encoded(b"not an image".to_vec()),
            ClipboardImage::Encoded(Vec::new()),
            ClipboardImage::Rgba {
                width: 100,
                height: 100,
                pixels: vec![0; 7],
            },
        ] {
            let mut source = Fixed(Ok(ClipboardContent::Image(image)));
            let err = read(&mut source, "clipboard.png").unwrap_err();
            assert!(matches!(err, ClipboardError::BadImage(_)), "{err}");
            assert!(err.to_string().contains("image could not be used"), "{err}");
        }
    }

    #[test]
    fn text_is_handed_back_as_text_and_nothing_is_empty() {
        let mut source = Fixed(Ok(ClipboardContent::Text("hello".into())));
        assert_eq!(
            read(&mut source, "c.png").unwrap(),
            Clipped::Text("hello".into())
        );
        let mut source = Fixed(Ok(ClipboardContent::Text(String::new())));
        assert_eq!(read(&mut source, "c.png").unwrap(), Clipped::Empty);
        let mut source = Fixed(Ok(ClipboardContent::Empty));
        assert_eq!(read(&mut source, "c.png").unwrap(), Clipped::Empty);
    }

    #[test]
    #[cfg(all(unix, not(target_os = "macos")))]
    fn without_a_display_the_system_clipboard_says_so_and_what_to_do() {
        let mut headless = SystemClipboard::with_env(|_| None);
        let err = headless.read().unwrap_err();
        assert!(matches!(err, ClipboardError::Unavailable(_)), "{err}");
        let text = err.to_string();
        assert!(text.contains("no clipboard"), "{text}");
        assert!(text.contains("DISPLAY"), "{text}");
        assert!(text.contains("path"), "says what to do instead: {text}");
        // Over SSH it says where the clipboard is; an empty variable is no display.
        let mut ssh = SystemClipboard::with_env(|name| match name {
            "SSH_CONNECTION" => Some("10.0.0.1 5000 10.0.0.2 22".into()),
            "DISPLAY" => Some(String::new()),
            _ => None,
        });
        let text = ssh.read().unwrap_err().to_string();
        assert!(text.contains("SSH session"), "{text}");
        assert_eq!(
            unavailable(&|name| (name == "WAYLAND_DISPLAY").then(|| "wayland-0".into())),
            None
        );
        assert_eq!(
            unavailable(&|name| (name == "DISPLAY").then(|| ":0".into())),
            None
        );
    }
}
