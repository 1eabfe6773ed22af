//! The accept loop the small HTTP test servers share: every connection served on a task of its
//! own until the server's token is cancelled (its owner dropped).

use std::future::Future;

use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Spawns the loop: `serve` answers each connection; its error only ends that connection.
pub fn spawn_accept_loop<F, Fut>(listener: TcpListener, stop: CancellationToken, serve: F)
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = std::io::Result<()>> + Send + 'static,
{
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = stop.cancelled() => return,
            };
            let Ok((socket, _)) = accepted else { return };
            tokio::spawn(serve(socket));
        }
    });
}
