//! stdout as the protocol's alone: the frames go to a close-on-exec copy of descriptor 1, and
//! descriptor 1 itself then points at stderr, so a stray print (or a child that inherited it)
//! cannot corrupt the stream. Once the editor has hung up (a broken pipe), what is still on
//! its way is dropped instead of failing the connection, which ends when stdin closes.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use color_eyre::eyre::{Result, eyre};
use tokio::io::AsyncWrite;

/// The editor's end of the protocol.
pub struct Frames {
    file: tokio::fs::File,
    hung_up: Arc<AtomicBool>,
}

impl Frames {
    /// Takes stdout for the protocol.
    pub fn take() -> Result<Frames> {
        let fd = protocol_stdout()?;
        Ok(Frames {
            file: tokio::fs::File::from_std(std::fs::File::from(fd)),
            hung_up: Arc::default(),
        })
    }

    /// Set once a write found the editor gone.
    pub fn hung_up(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.hung_up)
    }

    /// A broken pipe is the editor hanging up: the rest is dropped.
    fn gone<T>(&self, result: Poll<io::Result<T>>, dropped: T) -> Poll<io::Result<T>> {
        match result {
            Poll::Ready(Err(err)) if err.kind() == io::ErrorKind::BrokenPipe => {
                self.hung_up.store(true, Ordering::Relaxed);
                Poll::Ready(Ok(dropped))
            }
            other => other,
        }
    }
}

impl AsyncWrite for Frames {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.hung_up.load(Ordering::Relaxed) {
            return Poll::Ready(Ok(buf.len()));
        }
        let written = Pin::new(&mut self.file).poll_write(cx, buf);
        self.gone(written, buf.len())
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.hung_up.load(Ordering::Relaxed) {
            return Poll::Ready(Ok(()));
        }
        let flushed = Pin::new(&mut self.file).poll_flush(cx);
        self.gone(flushed, ())
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.hung_up.load(Ordering::Relaxed) {
            return Poll::Ready(Ok(()));
        }
        let closed = Pin::new(&mut self.file).poll_shutdown(cx);
        self.gone(closed, ())
    }
}

/// Takes stdout for the protocol: a close-on-exec copy of descriptor 1 carries the frames,
/// and descriptor 1 itself is pointed at stderr.
fn protocol_stdout() -> Result<OwnedFd> {
    // SAFETY: plain descriptor calls on descriptors this process owns; the copy is owned by
    // the returned OwnedFd alone.
    unsafe {
        let copy = libc::fcntl(libc::STDOUT_FILENO, libc::F_DUPFD_CLOEXEC, 3);
        if copy < 0 {
            return Err(eyre!(
                "cannot take stdout for the protocol: {}",
                std::io::Error::last_os_error()
            ));
        }
        if libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
            tracing::warn!(
                "acp: stdout still reaches the editor: {}",
                std::io::Error::last_os_error()
            );
        }
        Ok(OwnedFd::from_raw_fd(copy))
    }
}
