//! What the session read, kept so that a URL carrying it is noticed (SPEC §4, issue 32): in
//! `auto` a fetch runs unasked, and a model told by a page or a file to send a secret
//! somewhere would put it in the URL (query, path, a DNS label), perhaps encoded. A fetch to a
//! host not yet allowed asks when its URL, after undoing percent, base64 and hex encoding,
//! holds a run of `RUN` bytes that appeared in a tool result of the session.
//!
//! Kept: the text of every tool result the model got but the web tools' (a page's and a
//! search's text holds the very links the model follows next), the last `MAX_KEPT` bytes.
//! The check hashes every `RUN`-byte window of the URL's decodings (a few thousand at most)
//! and scans the kept text once with a rolling hash: linear in what was kept, and nothing
//! but the text itself is stored. Bytes are compared without ASCII case (a host name reaches
//! the wire lowercased).

use crate::sync::MutexExt as _;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// The shortest run that counts (16 bytes: a key, a token, a line of a file).
pub const RUN: usize = 16;
/// Bytes of read text kept (the oldest go first).
pub const MAX_KEPT: usize = 16 * 1024 * 1024;
/// URL bytes looked at (a longer URL is judged by its start and end).
const MAX_URL: usize = 16 * 1024;
/// Decodings of one URL tried at most.
const MAX_CANDIDATES: usize = 512;

/// A run the check found: how the URL held it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// `as written`, `percent-encoded`, `base64`, `hex`, and `split by dots or slashes`.
    pub how: String,
    /// The run as it appeared in what was read (at most `RUN` bytes, lossy UTF-8).
    pub sample: String,
}

/// The session's read text.
#[derive(Debug, Default)]
pub struct ReadRuns {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    pieces: VecDeque<Vec<u8>>,
    bytes: usize,
}

impl ReadRuns {
    /// Keeps `text` (a tool result the model got).
    pub fn note(&self, text: &str) {
        if text.len() < RUN {
            return;
        }
        let mut kept = self.kept.locked();
        let bytes = text.as_bytes();
        let bytes = &bytes[bytes.len().saturating_sub(MAX_KEPT)..];
        kept.bytes += bytes.len();
        kept.pieces.push_back(bytes.to_vec());
        while kept.bytes > MAX_KEPT {
            match kept.pieces.pop_front() {
                Some(old) => kept.bytes -= old.len(),
                None => break,
            }
        }
    }

    /// Whether anything was kept.
    pub fn is_empty(&self) -> bool {
        self.kept.locked().bytes == 0
    }

    /// The first run of `url` (in any decoding) that appeared in what was read.
    pub fn carried(&self, url: &str) -> Option<Carried> {
        if self.is_empty() {
            return None;
        }
        let mut windows: HashMap<u64, Vec<([u8; RUN], usize)>> = HashMap::new();
        let candidates = candidates(url);
        for (index, (bytes, _)) in candidates.iter().enumerate() {
            // Compared without ASCII case: a host name reaches the wire lowercased.
            let bytes = bytes.to_ascii_lowercase();
            for window in bytes.windows(RUN) {
                let mut key = [0u8; RUN];
                key.copy_from_slice(window);
                let list = windows.entry(hash_of(&key)).or_default();
                if !list.iter().any(|(k, _)| *k == key) {
                    list.push((key, index));
                }
            }
        }
        if windows.is_empty() {
            return None;
        }
        let kept = self.kept.locked();
        for piece in &kept.pieces {
            if let Some((key, index)) = scan(piece, &windows) {
                return Some(Carried {
                    how: candidates[index].1.clone(),
                    sample: String::from_utf8_lossy(&key).into_owned(),
                });
            }
        }
        None
    }
}

/// Multiplier of the polynomial rolling hash (odd, so powers never vanish mod 2^64).
const BASE: u64 = 0x100_0000_01b3;

fn hash_of(window: &[u8; RUN]) -> u64 {
    window.iter().fold(0u64, |h, b| {
        h.wrapping_mul(BASE).wrapping_add(u64::from(*b))
    })
}

/// The first window of `text` among `windows`, by a rolling hash and an exact compare.
fn scan(
    text: &[u8],
    windows: &HashMap<u64, Vec<([u8; RUN], usize)>>,
) -> Option<([u8; RUN], usize)> {
    if text.len() < RUN {
        return None;
    }
    let low = |at: usize| u64::from(text[at].to_ascii_lowercase());
    // A bit per value of 16 bits of the hash: most windows are passed over without a map lookup.
    let mut seen = vec![0u64; 1 << 10];
    for h in windows.keys() {
        seen[(*h as usize >> 6) & 0x3ff] |= 1u64 << (*h & 63);
    }
    let top = (1..RUN).fold(1u64, |p, _| p.wrapping_mul(BASE));
    let mut h = (0..RUN).fold(0u64, |h, at| h.wrapping_mul(BASE).wrapping_add(low(at)));
    let mut at = 0;
    loop {
        let maybe = seen[(h as usize >> 6) & 0x3ff] & (1u64 << (h & 63)) != 0;
        let found = if maybe { windows.get(&h) } else { None };
        if let Some(list) = found {
            let window = &text[at..at + RUN];
            if let Some((key, index)) = list
                .iter()
                .find(|(k, _)| k.as_slice().eq_ignore_ascii_case(window))
            {
                return Some((*key, *index));
            }
        }
        if at + RUN >= text.len() {
            return None;
        }
        let out = low(at);
        let inn = low(at + RUN);
        h = h
            .wrapping_sub(out.wrapping_mul(top))
            .wrapping_mul(BASE)
            .wrapping_add(inn);
        at += 1;
    }
}

/// The byte strings a URL sends, each with how it was encoded: the URL as written; its host,
/// path and query percent-decoded (`+` as a space too); the same with the separators taken
/// out (a run split over DNS labels or path segments); and every base64 or hex run in any
/// of them decoded, twice over at most.
pub fn candidates(url: &str) -> Vec<(Vec<u8>, String)> {
    let url = if url.len() > MAX_URL {
        // Both ends: a run hidden in the middle of a huge URL still has to be sent whole.
        let head = &url.as_bytes()[..MAX_URL / 2];
        let tail = &url.as_bytes()[url.len() - MAX_URL / 2..];
        String::from_utf8_lossy(&[head, tail].concat()).into_owned()
    } else {
        url.to_string()
    };
    let mut out: Vec<(Vec<u8>, String)> = Vec::new();
    let push = |bytes: Vec<u8>, how: String, out: &mut Vec<(Vec<u8>, String)>| {
        if bytes.len() >= RUN && out.len() < MAX_CANDIDATES && !out.iter().any(|(b, _)| *b == bytes)
        {
            out.push((bytes, how));
        }
    };
    push(url.as_bytes().to_vec(), "as written".into(), &mut out);
    let mut parts: Vec<String> = Vec::new();
    match url::Url::parse(&url) {
        Ok(parsed) => {
            if let Some(host) = parsed.host_str() {
                parts.push(host.to_string());
            }
            parts.push(parsed.path().to_string());
            if let Some(query) = parsed.query() {
                parts.push(query.to_string());
                // The values alone, one after the other (a run split over fields).
                let values: String = parsed.query_pairs().map(|(_, v)| v.into_owned()).collect();
                parts.push(values);
            }
        }
        Err(_) => parts.push(url.clone()),
    }
    for part in &parts {
        let mut decoded = part.as_bytes().to_vec();
        // Percent-encoding undone up to three times (double and triple encoding).
        for _ in 0..3 {
            let next = percent_decode(&decoded, false);
            if next == decoded {
                break;
            }
            decoded = next;
        }
        let plus = percent_decode(part.as_bytes(), true);
        for (bytes, how) in [(decoded, "percent-encoded"), (plus, "form-encoded")] {
            let joined: Vec<u8> = bytes
                .iter()
                .copied()
                .filter(|b| !SEPARATORS.contains(b))
                .collect();
            push(bytes.clone(), how.into(), &mut out);
            push(joined, "split by dots or slashes".into(), &mut out);
        }
    }
    // Encoded runs inside any of those, and inside what they decode to.
    let mut at = 0;
    for depth in 0..2 {
        let end = out.len();
        for index in at..end {
            let (bytes, how) = out[index].clone();
            for (decoded, kind) in decodings(&bytes) {
                let how = if depth == 0 && how == "as written" {
                    kind.to_string()
                } else {
                    format!("{kind} in {how}")
                };
                push(decoded, how, &mut out);
            }
        }
        at = end;
    }
    out
}

/// What splits a URL into labels, segments and fields.
const SEPARATORS: &[u8] = b"./?&=;,:+_-~ ";

fn percent_decode(bytes: &[u8], plus: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (b'+', _) if plus => {
                out.push(b' ');
                at += 1;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    out
}

/// Base64 (standard and URL-safe, padded or not, at each of the four offsets a run may start
/// at) and hex (at both offsets) decodings of the maximal runs of their alphabets in `bytes`.
fn decodings(bytes: &[u8]) -> Vec<(Vec<u8>, &'static str)> {
    let mut out = Vec::new();
    let is_b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_');
    for run in runs(bytes, is_b64) {
        // 16 bytes take 22 characters.
        if run.len() < 22 {
            continue;
        }
        for skip in 0..4 {
            let body = &run[skip..];
            let body = &body[..body.len() / 4 * 4];
            let normal: Vec<u8> = body
                .iter()
                .map(|b| match b {
                    b'-' => b'+',
                    b'_' => b'/',
                    other => *other,
                })
                .collect();
            use base64::Engine as _;
            if let Ok(decoded) = base64::engine::general_purpose::STANDARD_NO_PAD.decode(&normal) {
                out.push((decoded, "base64"));
            }
        }
    }
    for run in runs(bytes, |b| b.is_ascii_hexdigit()) {
        if run.len() < 2 * RUN {
            continue;
        }
        for skip in 0..2 {
            let body = &run[skip..];
            let decoded: Vec<u8> = body
                .chunks_exact(2)
                .filter_map(|pair| {
                    std::str::from_utf8(pair)
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                })
                .collect();
            out.push((decoded, "hex"));
        }
    }
    out
}

/// The maximal runs of bytes `keep` accepts.
fn runs(bytes: &[u8], keep: impl Fn(u8) -> bool) -> Vec<&[u8]> {
    bytes
        .split(|b| !keep(*b))
        .filter(|run| !run.is_empty())
        .collect()
}

#[cfg(test)]
#[path = "read_runs_tests.rs"]
mod tests;
