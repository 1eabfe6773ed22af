//! Which text encoding a file is in, and converting between it and the UTF-8 the model reads
//! and writes. UTF-8 (the common case) passes through untouched; UTF-16 with a byte-order mark
//! and legacy 8-bit and CJK encodings (Latin-1 / windows-1252, Shift_JIS, …, guessed with
//! `chardetng`) are decoded for read_file and encoded back by write_file and edit_file, so a
//! file keeps its encoding. Anything else is binary. Fed by read_file, write_file, edit_file.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE};

/// Bytes of a file's head that decide its encoding (and whether it is text at all).
pub const SNIFF_BYTES: usize = 64 * 1024;
/// Bytes `chardetng` looks at when guessing from a whole file: plenty for a guess.
const GUESS_BYTES: usize = 1024 * 1024;
/// Most control bytes (per mille) a legacy-encoded text may hold; more is binary.
const MAX_CONTROLS_PER_MILLE: usize = 10;

/// The encoding of a text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    /// UTF-8, possibly with a few invalid bytes (shown as U+FFFD, kept as they are by edits).
    Utf8,
    /// UTF-16 with a byte-order mark (kept on write).
    Utf16 { big_endian: bool },
    /// An ASCII-compatible legacy encoding, guessed from the content.
    Legacy(&'static Encoding),
}

impl TextEncoding {
    /// The name users know it by: `UTF-8`, `UTF-16LE`, `windows-1252`, `Shift_JIS`.
    pub fn name(self) -> &'static str {
        match self {
            TextEncoding::Utf8 => "UTF-8",
            TextEncoding::Utf16 { big_endian: false } => "UTF-16LE",
            TextEncoding::Utf16 { big_endian: true } => "UTF-16BE",
            TextEncoding::Legacy(encoding) => encoding.name(),
        }
    }

    pub fn is_utf8(self) -> bool {
        self == TextEncoding::Utf8
    }

    fn decoder_encoding(self) -> &'static Encoding {
        match self {
            TextEncoding::Utf8 => encoding_rs::UTF_8,
            TextEncoding::Utf16 { big_endian: false } => UTF_16LE,
            TextEncoding::Utf16 { big_endian: true } => UTF_16BE,
            TextEncoding::Legacy(encoding) => encoding,
        }
    }
}

/// Why a text cannot be stored in a file's encoding, or a file's content not edited as text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodingError {
    #[error(
        "line {line} has {ch:?} (U+{code:04X}), which {encoding} cannot store; this file is \
         {encoding} and is written back in it. Use characters {encoding} has (or an escape the \
         file's language knows), or convert the file first (`iconv -f {encoding} -t UTF-8`)",
        code = u32::from(*ch)
    )]
    Unmappable {
        ch: char,
        line: usize,
        encoding: &'static str,
    },
    #[error(
        "its {encoding} content does not decode cleanly (malformed sequences), so it cannot be \
         changed as text without damage; change it with bash"
    )]
    NotRoundTrip { encoding: &'static str },
}

/// The encoding of a file whose first bytes are `sample`, or None when it is binary.
/// `complete`: the sample is the whole file (so a sequence cut at its end is malformed).
pub fn sniff(sample: &[u8], complete: bool) -> Option<TextEncoding> {
    if let Some(encoding) = bom_encoding(sample) {
        return Some(encoding);
    }
    if memchr::memchr(0, sample).is_some() {
        return None;
    }
    let (valid_multibyte, invalid) = utf8_census(sample, complete);
    // Mostly UTF-8 with a stray bad byte stays UTF-8: guessing a legacy encoding there would
    // turn its real UTF-8 characters into mojibake.
    if invalid == 0 || valid_multibyte >= invalid {
        return Some(TextEncoding::Utf8);
    }
    let controls = sample
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b)) || b == 0x7f)
        .count();
    if controls * 1000 > sample.len() * MAX_CONTROLS_PER_MILLE {
        return None;
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(&sample[..sample.len().min(GUESS_BYTES)], complete);
    let guess = detector.guess(None, chardetng::Utf8Detection::Deny);
    if guess == encoding_rs::UTF_8 || !guess.is_ascii_compatible() {
        return None;
    }
    // The guess must decode what we have without malformed sequences.
    let mut decoder = guess.new_decoder_without_bom_handling();
    let mut out = String::with_capacity(
        decoder
            .max_utf8_buffer_length_without_replacement(sample.len())
            .unwrap_or(sample.len() * 3),
    );
    let (result, _) = decoder.decode_to_string_without_replacement(sample, &mut out, complete);
    match result {
        encoding_rs::DecoderResult::Malformed(..) => None,
        _ => Some(TextEncoding::Legacy(guess)),
    }
}

/// The encoding of a whole file's content, or None when it is binary.
pub fn sniff_file(bytes: &[u8]) -> Option<TextEncoding> {
    // The head decides, as for read_file, unless the head is plain UTF-8 and a later part is
    // not: then the whole (up to GUESS_BYTES) is guessed from.
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    let from_head = sniff(head, head.len() == bytes.len())?;
    if from_head != TextEncoding::Utf8 || std::str::from_utf8(bytes).is_ok() {
        return Some(from_head);
    }
    let sample = &bytes[..bytes.len().min(GUESS_BYTES)];
    Some(sniff(sample, sample.len() == bytes.len()).unwrap_or(TextEncoding::Utf8))
}

fn bom_encoding(bytes: &[u8]) -> Option<TextEncoding> {
    match bytes {
        [0xff, 0xfe, ..] => Some(TextEncoding::Utf16 { big_endian: false }),
        [0xfe, 0xff, ..] => Some(TextEncoding::Utf16 { big_endian: true }),
        _ => None,
    }
}

/// Valid multi-byte characters and invalid bytes in `bytes` (a character cut at the end of an
/// incomplete sample counts as neither).
fn utf8_census(bytes: &[u8], complete: bool) -> (usize, usize) {
    let mut valid_multibyte = 0;
    let mut invalid = 0;
    let mut rest = bytes;
    loop {
        let (valid, error) = match std::str::from_utf8(rest) {
            Ok(text) => (text, None),
            Err(err) => {
                // The prefix up to `valid_up_to` is valid UTF-8 by definition.
                let valid = std::str::from_utf8(&rest[..err.valid_up_to()]).unwrap_or_default();
                (valid, Some(err))
            }
        };
        valid_multibyte += valid.chars().filter(|c| !c.is_ascii()).count();
        let Some(err) = error else { break };
        match err.error_len() {
            Some(len) => {
                invalid += len;
                rest = &rest[err.valid_up_to() + len..];
            }
            None => {
                if complete {
                    invalid += rest.len() - err.valid_up_to();
                }
                break;
            }
        }
    }
    (valid_multibyte, invalid)
}

/// Decodes a file chunk by chunk into UTF-8 bytes (read_file feeds its line window with them).
pub struct ChunkDecoder {
    decoder: encoding_rs::Decoder,
}

impl ChunkDecoder {
    pub fn new(encoding: TextEncoding) -> Self {
        Self {
            decoder: encoding.decoder_encoding().new_decoder_with_bom_removal(),
        }
    }

    /// The UTF-8 of `chunk`; a sequence cut at its end waits for the next one. `last`: the
    /// file ends here. Malformed sequences become U+FFFD.
    pub fn decode(&mut self, chunk: &[u8], last: bool) -> String {
        let capacity = self
            .decoder
            .max_utf8_buffer_length(chunk.len())
            .unwrap_or(chunk.len() * 3 + 16);
        let mut out = String::with_capacity(capacity);
        let _ = self.decoder.decode_to_string(chunk, &mut out, last);
        out
    }
}

/// The whole content as UTF-8 for showing (malformed sequences become U+FFFD): borrowed for
/// UTF-8 files.
pub fn decode_lossy(bytes: &[u8], encoding: TextEncoding) -> Cow<'_, [u8]> {
    if encoding.is_utf8() {
        return Cow::Borrowed(bytes);
    }
    Cow::Owned(ChunkDecoder::new(encoding).decode(bytes, true).into_bytes())
}

/// The whole content as UTF-8, for editing: borrowed for UTF-8 files. Refuses content that
/// would not be written back byte for byte where the edit does not touch it.
pub fn decode(bytes: &[u8], encoding: TextEncoding) -> Result<Cow<'_, [u8]>, EncodingError> {
    if encoding.is_utf8() {
        return Ok(Cow::Borrowed(bytes));
    }
    let mut decoder = ChunkDecoder::new(encoding);
    let text = decoder.decode(bytes, true);
    match encode(&text, encoding) {
        Ok(again) if again == bytes => Ok(Cow::Owned(text.into_bytes())),
        _ => Err(EncodingError::NotRoundTrip {
            encoding: encoding.name(),
        }),
    }
}

/// `text` in `encoding`, with the byte-order mark for UTF-16; a character the encoding lacks is
/// an error naming it and its line.
pub fn encode(text: &str, encoding: TextEncoding) -> Result<Vec<u8>, EncodingError> {
    match encoding {
        TextEncoding::Utf8 => Ok(text.as_bytes().to_vec()),
        TextEncoding::Utf16 { big_endian } => {
            let mut out = Vec::with_capacity(2 + text.len() * 2);
            out.extend_from_slice(if big_endian {
                &[0xfe, 0xff]
            } else {
                &[0xff, 0xfe]
            });
            for unit in text.encode_utf16() {
                let pair = if big_endian {
                    unit.to_be_bytes()
                } else {
                    unit.to_le_bytes()
                };
                out.extend_from_slice(&pair);
            }
            Ok(out)
        }
        TextEncoding::Legacy(legacy) => {
            let mut encoder = legacy.new_encoder();
            let mut out = Vec::with_capacity(
                encoder
                    .max_buffer_length_from_utf8_without_replacement(text.len())
                    .unwrap_or(text.len() * 2 + 16),
            );
            let (result, read) =
                encoder.encode_from_utf8_to_vec_without_replacement(text, &mut out, true);
            match result {
                encoding_rs::EncoderResult::Unmappable(ch) => {
                    let before = &text[..read];
                    Err(EncodingError::Unmappable {
                        ch,
                        line: before.matches('\n').count() + 1,
                        encoding: legacy.name(),
                    })
                }
                _ => Ok(out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn legacy(name: &str) -> TextEncoding {
        TextEncoding::Legacy(Encoding::for_label(name.as_bytes()).unwrap())
    }

    #[test]
    fn sniffing_tells_utf8_legacy_utf16_and_binary_apart() {
        let latin1 = b"Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade, \xa9 2024\n".repeat(3);
        let cases: Vec<(&[u8], Option<TextEncoding>)> = vec![
            (b"plain text\n", Some(TextEncoding::Utf8)),
            (b"", Some(TextEncoding::Utf8)),
            ("h\u{e9}llo \u{1f600}".as_bytes(), Some(TextEncoding::Utf8)),
            (&latin1, Some(legacy("windows-1252"))),
            (
                b"\xff\xfeh\x00i\x00",
                Some(TextEncoding::Utf16 { big_endian: false }),
            ),
            (
                b"\xfe\xff\x00h\x00i",
                Some(TextEncoding::Utf16 { big_endian: true }),
            ),
            (b"a\0b", None),
            (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", None),
            // Control bytes without NULs: not text in any encoding.
            (
                &[0x01, 0x02, 0x03, 0x90, 0x91, 0x05, 0x06, 0x07, b'a', 0xc0],
                None,
            ),
        ];
        for (bytes, expected) in cases {
            assert_eq!(sniff(bytes, true), expected, "{bytes:?}");
        }
        // Mostly UTF-8 with one stray byte stays UTF-8.
        let mut stray = "na\u{ef}ve caf\u{e9} \u{4e16}\u{754c} ".as_bytes().to_vec();
        stray.push(0xff);
        assert_eq!(sniff(&stray, true), Some(TextEncoding::Utf8));
        // A UTF-8 character cut by the sample's end is still UTF-8.
        assert_eq!(
            sniff(&"ab\u{1f600}".as_bytes()[..4], false),
            Some(TextEncoding::Utf8)
        );
    }

    #[test]
    fn cjk_legacy_encodings_are_recognised() {
        let text = "日本語のテキストファイルです。これはテストです。\n".repeat(4);
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(&text);
        assert_eq!(sniff(&bytes, true), Some(legacy("Shift_JIS")));
    }

    #[test]
    fn a_latin1_tail_after_a_long_ascii_head_is_found_in_the_whole_file() {
        let mut bytes = b"ascii line\n".repeat(10_000);
        bytes.extend_from_slice(b"r\xe9sum\xe9 na\xefve caf\xe9\n");
        assert_eq!(
            sniff(&bytes[..SNIFF_BYTES], false),
            Some(TextEncoding::Utf8)
        );
        assert_eq!(sniff_file(&bytes), Some(legacy("windows-1252")));
    }

    #[test]
    fn decode_and_encode_round_trip() {
        let cases = [
            (legacy("windows-1252"), "caf\u{e9} \u{20ac}5\r\n"),
            (
                TextEncoding::Utf16 { big_endian: false },
                "h\u{e9}llo \u{1f600}\n",
            ),
            (TextEncoding::Utf16 { big_endian: true }, "h\u{e9}llo\n"),
            (legacy("Shift_JIS"), "日本語\n"),
            (TextEncoding::Utf8, "plain\n"),
        ];
        for (encoding, text) in cases {
            let bytes = encode(text, encoding).unwrap();
            assert_eq!(decode(&bytes, encoding).unwrap().as_ref(), text.as_bytes());
            let mut stream = ChunkDecoder::new(encoding);
            let mut pieces = String::new();
            for byte in &bytes {
                pieces.push_str(&stream.decode(std::slice::from_ref(byte), false));
            }
            pieces.push_str(&stream.decode(&[], true));
            if !encoding.is_utf8() {
                assert_eq!(pieces, text, "{}", encoding.name());
            }
        }
        assert_eq!(
            encode("h", TextEncoding::Utf16 { big_endian: false }).unwrap(),
            b"\xff\xfeh\x00"
        );
    }

    #[test]
    fn characters_an_encoding_lacks_are_named_with_their_line() {
        let err = encode("ok\nalso ok\nthen \u{4e16}\n", legacy("windows-1252")).unwrap_err();
        assert_eq!(
            err,
            EncodingError::Unmappable {
                ch: '\u{4e16}',
                line: 3,
                encoding: "windows-1252"
            }
        );
        assert!(err.to_string().contains("U+4E16"), "{err}");
    }

    #[test]
    fn content_that_does_not_survive_decoding_is_refused() {
        // An unpaired surrogate in UTF-16 decodes to U+FFFD, which encodes differently.
        let bytes = b"\xff\xfea\x00\x00\xd8b\x00";
        assert!(matches!(
            decode(bytes, TextEncoding::Utf16 { big_endian: false }),
            Err(EncodingError::NotRoundTrip { .. })
        ));
    }
}
