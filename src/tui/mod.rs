//! The full-screen terminal UI, driven only by the bus: `AgentEvent`s in, `UserCommand`s out.
//!
//! ```text
//!  terminal input ──► App::handle_input ─┐            ┌─► UserCommand ──► engine
//!  AgentEvent ──────► App::apply ────────┼─► state ───┤
//!  frame due (≤60/s) ► App::render ◄─────┘            └─► AppIntent (copy, mouse, $EDITOR)
//! ```
//!
//! It never touches files or processes (the one exception is the user's own `$EDITOR`).

use std::time::Instant;

use color_eyre::eyre::WrapErr;
use crossterm::event::{Event, EventStream, MouseEventKind};
use futures_util::StreamExt;
use tokio::signal::unix::{Signal, SignalKind};
use tokio::sync::mpsc;

use self::app::{App, AppIntent};
use self::frame::FrameScheduler;
use self::terminal::Term;
use crate::bus::{AgentEvent, FrontEnds, UserCommand};

pub use self::options::TuiOptions;

pub mod app;
mod attach;
pub mod colours;
pub mod composer;
mod figures;
pub mod frame;
pub mod highlight;
mod input;
mod job_events;
pub mod jobs;
pub mod keymap;
mod layout;
mod marked;
pub mod modals;
mod options;
pub mod panes;
pub mod queue;
mod quit;
pub mod setup;
pub mod stand_alone;
mod steering;
pub mod terminal;
pub mod theme;
pub mod wrap;

/// Events applied in one go before the loop looks at input and frames again: a fast stream
/// is folded in bulk (one frame for many deltas) without starving the keyboard.
const EVENT_BATCH: usize = 4096;

/// Runs the full-screen UI until the user quits. Events arrive on `front.events`; commands go
/// out on `front.commands`. The terminal is restored on return, on error and on panic. Returns
/// the session shown at the end when it has messages (quitting says how to resume it).
pub async fn run(
    front: FrontEnds,
    options: TuiOptions,
) -> color_eyre::Result<Option<crate::bus::SessionId>> {
    colours::detect();
    let mut term = terminal::setup()?;
    let guard = terminal::RestoreGuard;
    let mut app = App::new(&options, Instant::now());
    let result = main_loop(&mut term, front, &options, &mut app).await;
    drop(guard);
    result.map(|()| app.resumable_session().cloned())
}

async fn main_loop(
    term: &mut Term,
    front: FrontEnds,
    options: &TuiOptions,
    app: &mut App,
) -> color_eyre::Result<()> {
    let FrontEnds {
        commands,
        mut events,
    } = front;
    if let Some(prompt) = &options.initial_prompt {
        app.submit_initial(prompt);
    }
    let mut frames = FrameScheduler::new();
    frames.request(Instant::now());
    let mut input = EventStream::new();
    let mut events_open = true;
    // Clipboard reads (Ctrl+V) run on a blocking thread; their results come back here.
    let (clipboard_done, mut clipboard_results) = mpsc::unbounded_channel();
    // Killed or hung up: stop the engine (and what it runs) and give the terminal back.
    let mut terminate = signal(SignalKind::terminate());
    let mut hangup = signal(SignalKind::hangup());
    loop {
        for command in app.take_commands() {
            // A closed channel means the engine is gone; the UI stays up for browsing.
            let _ = commands.send(command).await;
        }
        for intent in app.take_intents() {
            match intent {
                AppIntent::Copy(text) => {
                    terminal::copy_osc52(&text).wrap_err("copying to the clipboard")?
                }
                AppIntent::SetMouseCapture(on) => terminal::set_mouse_capture(on)?,
                AppIntent::ReadClipboard { name } => {
                    let done = clipboard_done.clone();
                    tokio::task::spawn_blocking(move || {
                        let mut clipboard = crate::paste::clipboard::SystemClipboard::default();
                        let _ = done.send(crate::paste::clipboard::read(&mut clipboard, &name));
                    });
                }
                AppIntent::OpenEditor => {
                    drop(input);
                    let edited = terminal::edit_in_editor(
                        term,
                        &app.composer.full_text(),
                        app.mouse_captured,
                    )
                    .await;
                    input = EventStream::new();
                    match edited {
                        Ok(text) => app.editor_returned(&text),
                        Err(e) => app.flash(format!("{e}")),
                    }
                    frames.request(Instant::now());
                }
            }
        }
        if app.should_quit() {
            return Ok(());
        }
        if let Some(at) = app.next_tick() {
            frames.request_at(at);
        }
        tokio::select! {
            maybe = input.next() => {
                let Some(event) = maybe else {
                    // The terminal is gone: nobody is left to answer, stop the engine too.
                    let _ = commands.send(UserCommand::Shutdown).await;
                    return Ok(());
                };
                let event = event.wrap_err("reading the terminal")?;
                // Mouse motion arrives by the hundred and changes nothing: no frame for it.
                if !matches!(&event, Event::Mouse(m) if matches!(m.kind, MouseEventKind::Moved | MouseEventKind::Drag(_))) {
                    app.set_now(Instant::now());
                    app.handle_input(&event);
                    frames.request(Instant::now());
                }
            }
            event = events.recv(), if events_open => {
                app.set_now(Instant::now());
                match event {
                    Some(event) => apply_batch(app, event, &mut events),
                    None => {
                        events_open = false;
                        app.engine_stopped();
                    }
                }
                frames.request(Instant::now());
            }
            Some(read) = clipboard_results.recv() => {
                app.set_now(Instant::now());
                app.clipboard_read(read);
                frames.request(Instant::now());
            }
            () = next_signal(&mut terminate) => {
                let _ = commands.send(UserCommand::Shutdown).await;
                return Ok(());
            }
            () = next_signal(&mut hangup) => {
                let _ = commands.send(UserCommand::Shutdown).await;
                return Ok(());
            }
            () = frames.next_due() => {
                let now = Instant::now();
                app.set_now(now);
                app.expire();
                draw(term, app)?;
                frames.drawn(now);
            }
        }
    }
}

fn signal(kind: SignalKind) -> Option<Signal> {
    tokio::signal::unix::signal(kind).ok()
}

/// Waits for the signal; forever when it could not be watched.
async fn next_signal(signal: &mut Option<Signal>) {
    match signal {
        Some(signal) => {
            if signal.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}

fn apply_batch(app: &mut App, first: AgentEvent, events: &mut mpsc::UnboundedReceiver<AgentEvent>) {
    app.apply(&first);
    for _ in 0..EVENT_BATCH {
        match events.try_recv() {
            Ok(event) => app.apply(&event),
            Err(_) => break,
        }
    }
}

/// One frame inside a synchronized update, so the terminal shows it whole (no tearing).
fn draw(term: &mut Term, app: &App) -> color_eyre::Result<()> {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    crossterm::queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
    term.draw(|frame| app.render(frame)).wrap_err("drawing")?;
    crossterm::execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}

#[cfg(test)]
mod tests;
