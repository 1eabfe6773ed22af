//! The pages `web_fetch` downloaded in this session, by the URL asked for: a call with an
//! `offset` (or the same URL again) is served from here and never downloaded again. The
//! decoded body is kept, each format's conversion is made once (by `web::convert`); the oldest pages go when the
//! cache would pass `MAX_CACHED_CHARS`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::sync::MutexExt;
use crate::tool_output::WebHop;

use super::page::{BodyKind, Converted, Format};

/// Decoded text kept across all pages of a session (about 64 MiB of UTF-8 and its conversions).
const MAX_CACHED_CHARS: usize = 64 * 1024 * 1024;

/// What the server sent, decoded, with the facts of its fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedPage {
    pub url: String,
    pub final_url: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub bytes: u64,
    pub capped: bool,
    pub redirects: Vec<WebHop>,
    /// HTML or other text (binary bodies are never kept).
    pub html: bool,
    pub source: Arc<String>,
}

impl FetchedPage {
    pub fn kind(&self) -> BodyKind {
        if self.html {
            BodyKind::Html
        } else {
            BodyKind::Text
        }
    }
}

#[derive(Debug, Default)]
struct CacheEntry {
    page: Option<Arc<FetchedPage>>,
    converted: HashMap<Format, Arc<Converted>>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, CacheEntry>,
    order: VecDeque<String>,
    chars: usize,
}

/// The session's fetched pages.
#[derive(Debug, Default)]
pub struct PageCache {
    inner: Mutex<Inner>,
}

impl PageCache {
    pub fn get(&self, url: &str) -> Option<Arc<FetchedPage>> {
        self.inner.locked().entries.get(url)?.page.clone()
    }

    pub fn insert(&self, page: FetchedPage) -> Arc<FetchedPage> {
        let page = Arc::new(page);
        let mut inner = self.inner.locked();
        let url = page.url.clone();
        inner.chars += page.source.len();
        if let Some(old) = inner.entries.insert(
            url.clone(),
            CacheEntry {
                page: Some(Arc::clone(&page)),
                converted: HashMap::new(),
            },
        ) {
            inner.chars = inner.chars.saturating_sub(entry_chars(&old));
        }
        inner.order.retain(|u| u != &url);
        inner.order.push_back(url.clone());
        evict(&mut inner, &url);
        page
    }

    /// The page in `format` if it was converted before.
    pub fn conversion(&self, page: &FetchedPage, format: Format) -> Option<Arc<Converted>> {
        self.inner
            .locked()
            .entries
            .get(&page.url)
            .and_then(|e| e.converted.get(&format))
            .map(Arc::clone)
    }

    /// Keeps a conversion of `page` (made by `web::convert`) for the next call.
    pub fn keep_conversion(
        &self,
        page: &FetchedPage,
        format: Format,
        done: Converted,
    ) -> Arc<Converted> {
        let done = Arc::new(done);
        let mut inner = self.inner.locked();
        if let Some(entry) = inner.entries.get_mut(&page.url) {
            let size = done.text.len();
            if entry.converted.insert(format, Arc::clone(&done)).is_none() {
                inner.chars += size;
            }
        }
        let url = page.url.clone();
        evict(&mut inner, &url);
        done
    }
}

fn entry_chars(entry: &CacheEntry) -> usize {
    entry.page.as_ref().map_or(0, |p| p.source.len())
        + entry
            .converted
            .values()
            .map(|t| t.text.len())
            .sum::<usize>()
}

/// Drops the oldest pages (never `keep`, the one in use) until the cache fits.
fn evict(inner: &mut Inner, keep: &str) {
    while inner.chars > MAX_CACHED_CHARS {
        let Some(position) = inner.order.iter().position(|u| u != keep) else {
            return;
        };
        let Some(url) = inner.order.remove(position) else {
            return;
        };
        if let Some(entry) = inner.entries.remove(&url) {
            inner.chars = inner.chars.saturating_sub(entry_chars(&entry));
        }
    }
}
