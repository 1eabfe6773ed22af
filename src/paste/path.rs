//! A paste that is the path of an image file: terminals paste a file dragged onto them as its
//! path, quoted (`'/tmp/My Shot.png'`) or with its spaces escaped (`/tmp/My\ Shot.png`), and
//! file managers copy a `file://` URI. When the whole paste names one or more existing image
//! files, they are attached; any other paste (a path of a missing file, prose that mentions a
//! path, a `.rs` file) stays text, as typed.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use image::ImageReader;

use super::PendingImage;
use crate::bus::Attachment;

/// A paste longer than this is text: nobody pastes that many paths.
const MAX_PASTE: usize = 16 * 1024;
/// Files one paste attaches at most.
const MAX_FILES: usize = 20;

/// What a paste is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pasted {
    /// Only paths of image files, all there: attach them.
    Images(Vec<PendingImage>),
    /// Only paths of existing files named like images, but this one is not an image: pasted
    /// as text, and the user is told why.
    NotAnImage { path: String, why: String },
    /// Anything else: pasted as text.
    Text,
}

/// Reads the paste as paths (relative ones from `cwd`, `~` from `home`) and looks at the
/// files they name.
pub fn classify(text: &str, cwd: &Path, home: Option<&Path>) -> Pasted {
    for reading in readings(text) {
        let paths: Vec<PathBuf> = reading
            .iter()
            .map(|word| to_path(word, cwd, home))
            .collect();
        let all_images = paths.iter().all(|path| {
            crate::content::is_image_path(path)
                && std::fs::metadata(path).is_ok_and(|meta| meta.is_file())
        });
        if paths.is_empty() || !all_images {
            continue;
        }
        let mut images = Vec::new();
        for path in &paths {
            match probe(path) {
                Ok(image) => images.push(image),
                Err(why) => {
                    return Pasted::NotAnImage {
                        path: path.display().to_string(),
                        why,
                    };
                }
            }
        }
        return Pasted::Images(images);
    }
    Pasted::Text
}

/// One file named like an image, as a chip when it is one (the `@` finder's choice).
pub fn classify_one(path: &Path) -> Pasted {
    if !std::fs::metadata(path).is_ok_and(|meta| meta.is_file()) {
        return Pasted::Text;
    }
    match probe(path) {
        Ok(image) => Pasted::Images(vec![image]),
        Err(why) => Pasted::NotAnImage {
            path: path.display().to_string(),
            why,
        },
    }
}

/// The ways the paste may be a list of paths, most literal first: the whole paste as one
/// path (quotes around it dropped: a raw path may hold spaces), then split like a shell
/// splits words (quotes, backslash escapes, one path per line or per space).
fn readings(text: &str) -> Vec<Vec<String>> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.len() > MAX_PASTE {
        return Vec::new();
    }
    let mut out = Vec::new();
    if !trimmed.contains(['\n', '\r']) {
        out.push(vec![unquoted(trimmed).to_string()]);
    }
    if let Some(words) = shell_words(trimmed)
        && words.len() <= MAX_FILES
        && out.first() != Some(&words)
    {
        out.push(words);
    }
    out
}

/// `'a b'` or `"a b"` → `a b`; anything else as it is.
fn unquoted(text: &str) -> &str {
    for quote in ['\'', '"'] {
        if let Some(inner) = text
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
            && !inner.contains(quote)
        {
            return inner;
        }
    }
    text
}

/// Words as a POSIX shell splits them (single quotes literal, double quotes and backslash
/// escapes); `None` for an unclosed quote.
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\\' => {
                word.push(chars.next()?);
                in_word = true;
            }
            '\'' => {
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
                in_word = true;
            }
            '"' => {
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
                in_word = true;
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// A pasted word as a path: a `file://` URI decoded, `~/` from `home`, relative from `cwd`.
fn to_path(word: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    if word.starts_with("file://")
        && let Ok(path) = url::Url::parse(word)
            .map_err(drop)
            .and_then(|url| url.to_file_path())
    {
        return path;
    }
    if let (Some(rest), Some(home)) = (word.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    cwd.join(word)
}

/// The file as an attachment: its name, size and dimensions (read from its header only; the
/// agent reads and checks the whole file when the message is sent).
fn probe(path: &Path) -> Result<PendingImage, String> {
    let meta = std::fs::metadata(path).map_err(|err| err.to_string())?;
    let bytes = read_head(path)?;
    let reader = ImageReader::new(Cursor::new(&bytes))
        .with_guessed_format()
        .map_err(|err| err.to_string())?;
    if reader.format().is_none() {
        return Err("its bytes are not an image (PNG, JPEG, GIF or WebP)".into());
    }
    let (width, height) = match reader.into_dimensions() {
        Ok(size) => size,
        // A JPEG's size can sit after a large header: decode the whole file's header then.
        Err(_) => ImageReader::open(path)
            .and_then(ImageReader::with_guessed_format)
            .map_err(|err| err.to_string())?
            .into_dimensions()
            .map_err(|err| format!("it could not be decoded ({err})"))?,
    };
    let shown = path.to_str().ok_or("its path is not valid UTF-8")?;
    let name = path
        .file_name()
        .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    Ok(PendingImage {
        attachment: Attachment::ImagePath {
            path: shown.to_string(),
        },
        name,
        bytes: meta.len(),
        width,
        height,
    })
}

/// The first 64 KiB of the file: enough for the size in every header cairn reads.
fn read_head(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|err| err.to_string())?;
    let mut head = Vec::new();
    file.take(64 * 1024)
        .read_to_end(&mut head)
        .map_err(|err| err.to_string())?;
    Ok(head)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn png(path: &Path, width: u32, height: u32) {
        image::RgbImage::from_pixel(width, height, image::Rgb([1, 2, 3]))
            .save_with_format(path, image::ImageFormat::Png)
            .unwrap();
    }

    fn paths(pasted: &Pasted) -> Vec<String> {
        match pasted {
            Pasted::Images(images) => images
                .iter()
                .map(|image| match &image.attachment {
                    Attachment::ImagePath { path } => path.clone(),
                    other => panic!("{other:?}"),
                })
                .collect(),
            other => panic!("not images: {other:?}"),
        }
    }

    #[test]
    fn the_ways_terminals_and_file_managers_paste_a_path_all_attach_the_image() {
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("My Shot (1).png");
        png(&shot, 30, 20);
        let full = shot.to_str().unwrap();
        let escaped = full
            .replace(' ', "\\ ")
            .replace('(', "\\(")
            .replace(')', "\\)");
        let uri = url::Url::from_file_path(&shot).unwrap().to_string();
        assert!(uri.contains("%20"), "{uri}");
        for pasted in [
            full.to_string(),
            format!("'{full}'"),
            format!("\"{full}\""),
            escaped.clone(),
            format!("  {full}\n"),
            uri.clone(),
            format!("{uri}\r\n"),
            "My Shot (1).png".to_string(),
            "'My Shot (1).png'".to_string(),
            "~/My\\ Shot\\ (1).png".to_string(),
        ] {
            let got = classify(&pasted, dir.path(), Some(dir.path()));
            assert_eq!(paths(&got), [full], "pasted {pasted:?}");
            let Pasted::Images(images) = got else {
                unreachable!()
            };
            assert_eq!(images[0].name, "My Shot (1).png");
            assert_eq!((images[0].width, images[0].height), (30, 20));
        }
    }

    #[test]
    fn several_dragged_files_attach_each() {
        let dir = tempfile::tempdir().unwrap();
        png(&dir.path().join("a b.png"), 4, 4);
        png(&dir.path().join("c.PNG"), 5, 5);
        let a = dir.path().join("a b.png");
        let c = dir.path().join("c.PNG");
        let pasted = format!("'{}' {}", a.display(), c.display());
        let got = classify(&pasted, dir.path(), None);
        assert_eq!(
            paths(&got),
            [a.to_str().unwrap(), c.to_str().unwrap()],
            "{pasted}"
        );
        let lines = format!(
            "{}\r\n{}\r\n",
            url::Url::from_file_path(&a).unwrap(),
            url::Url::from_file_path(&c).unwrap()
        );
        assert_eq!(paths(&classify(&lines, dir.path(), None)).len(), 2);
    }

    #[test]
    fn other_pastes_stay_text() {
        let dir = tempfile::tempdir().unwrap();
        png(&dir.path().join("shot.png"), 4, 4);
        std::fs::write(dir.path().join("main.rs"), "fn main() {}").unwrap();
        for pasted in [
            "missing.png",
            "main.rs",
            "look at shot.png please",
            "shot.png missing.png",
            "shot.png main.rs",
            "'shot.png",
            "",
            "   ",
            "file://",
            dir.path().to_str().unwrap(),
        ] {
            assert_eq!(
                classify(pasted, dir.path(), None),
                Pasted::Text,
                "pasted {pasted:?}"
            );
        }
        let long = "shot.png ".repeat(MAX_PASTE / 9 + 1);
        assert_eq!(classify(&long, dir.path(), None), Pasted::Text);
        // A directory named like an image is no image file.
        std::fs::create_dir(dir.path().join("folder.png")).unwrap();
        assert_eq!(classify("folder.png", dir.path(), None), Pasted::Text);
    }

    #[test]
    fn a_file_named_like_an_image_that_is_none_says_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("fake.png"), "just some text").unwrap();
        match classify("fake.png", dir.path(), None) {
            Pasted::NotAnImage { path, why } => {
                assert!(path.ends_with("fake.png"), "{path}");
                assert!(why.contains("not an image"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn shell_words_follow_the_shell() {
        assert_eq!(
            shell_words(r#"a\ b 'c d' "e \" f" g"#).unwrap(),
            ["a b", "c d", "e \" f", "g"]
        );
        assert_eq!(shell_words("'open"), None);
        assert_eq!(shell_words("trailing\\"), None);
        assert_eq!(unquoted("'a b'"), "a b");
        assert_eq!(unquoted("'a' 'b'"), "'a' 'b'");
    }
}
