//! A fetched page made into text off the async workers: the parse, extraction and markdown run
//! on a thread of their own (a large stack, at most `SLOTS` at a time in the process) while the
//! call waits on it, the fetch's deadline and Esc. Esc returns at once; at the deadline (or if
//! the converter fails) the page goes out as plain text, which is linear in its size. A thread
//! left behind finishes within the extractor's bounded worst case and is then dropped.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::EgressError;
use super::cache::{FetchedPage, PageCache};
use super::page::{self, Converted, Format};

/// Conversions running at once in the process (a slot is held until the thread ends, also
/// when its call gave up on it).
const SLOTS: usize = 2;
static RUNNING: Semaphore = Semaphore::const_new(SLOTS);

/// Conversions running now (threads holding a slot, abandoned ones included).
pub fn running() -> usize {
    SLOTS - RUNNING.available_permits()
}

/// The converter's stack: the markdown writer recurses per level of nesting (~1 KiB each),
/// and the depth cap keeps it far below this.
const STACK_BYTES: usize = 64 * 1024 * 1024;

/// The page in `format` from the session's cache, converting it once if needed. Errors only
/// with `Cancelled`.
pub async fn converted(
    pages: &PageCache,
    page: &Arc<FetchedPage>,
    format: Format,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<Arc<Converted>, EgressError> {
    if let Some(done) = pages.conversion(page, format) {
        return Ok(done);
    }
    let done = convert(page, format, deadline, cancel).await?;
    Ok(pages.keep_conversion(page, format, done))
}

/// The page in `format`, racing the deadline and `cancel`.
pub async fn convert(
    page: &Arc<FetchedPage>,
    format: Format,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<Converted, EgressError> {
    if format == Format::Raw || !page.html {
        return Ok(Converted::as_is(page.source.as_str().to_string()));
    }
    let (source, url) = (Arc::clone(&page.source), page.final_url.clone());
    let work = off_thread(move || page::html_to(&source, &url, format));
    let outcome = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(EgressError::Cancelled),
        outcome = tokio::time::timeout_at(deadline, work) => outcome,
    };
    let why = match outcome {
        Ok(Some(done)) => return Ok(done),
        Ok(None) => "one the converter could not read".to_string(),
        Err(_) => "too slow to convert within the fetch's time limit ([web] timeout_secs)".into(),
    };
    let source = Arc::clone(&page.source);
    let plain = tokio::task::spawn_blocking(move || Converted::plain(&source, &why));
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(EgressError::Cancelled),
        done = plain => Ok(done.unwrap_or_default()),
    }
}

/// Runs `work` on a new thread once a slot is free; `None` if it could not start or panicked.
/// Dropping the future abandons the wait, never the thread.
pub async fn off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let permit = RUNNING.acquire().await.ok()?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("cairn-html".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let _slot = permit;
            let _ = tx.send(work());
        })
        .ok()?;
    rx.await.ok()
}
