//! The terminal itself: raw mode and the alternate screen on the way in, everything undone on
//! the way out — on a normal exit, on an error (a drop guard) and on a panic (a hook). Also the
//! few things only the terminal owner may do: OSC 52 copy, mouse capture, `$EDITOR`.

use std::io::{self, BufWriter, Stdout, Write};
use std::sync::{Mutex, Once};
use std::thread::ThreadId;

use base64::Engine as _;
use color_eyre::eyre::{WrapErr, eyre};
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute, terminal};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub type Term = Terminal<CrosstermBackend<BufWriter<Stdout>>>;

static PANIC_HOOK: Once = Once::new();
/// The thread that owns the screen while the UI is up.
static UI_THREAD: Mutex<Option<ThreadId>> = Mutex::new(None);

/// Enters raw mode and the alternate screen, with bracketed paste and mouse capture.
pub fn setup() -> color_eyre::Result<Term> {
    install_panic_hook();
    enter().wrap_err("setting up the terminal")?;
    let backend = CrosstermBackend::new(BufWriter::with_capacity(64 * 1024, io::stdout()));
    let mut term = Terminal::new(backend).wrap_err("opening the terminal")?;
    full_redraw(&mut term).wrap_err("clearing the screen")?;
    Ok(term)
}

/// Clears the screen and makes the next frame draw every cell. Unlike `Terminal::clear`, it
/// never asks the terminal for the cursor position (a blocking query some terminals and
/// emulators do not answer).
fn full_redraw(term: &mut Term) -> io::Result<()> {
    let size = term.size()?;
    term.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))
}

fn enter() -> io::Result<()> {
    if let Ok(mut owner) = UI_THREAD.lock() {
        *owner = Some(std::thread::current().id());
    }
    terminal::enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture
    )?;
    // Lets terminals that support it report Shift+Enter; the others ignore the sequence.
    execute!(
        out,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    )?;
    Ok(())
}

/// Leaves the alternate screen and raw mode. Safe to call more than once.
pub fn restore() -> io::Result<()> {
    if let Ok(mut owner) = UI_THREAD.lock() {
        *owner = None;
    }
    let mut out = io::stdout();
    let _ = execute!(out, PopKeyboardEnhancementFlags);
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    terminal::disable_raw_mode()
}

/// Restores the terminal when dropped, so an early return with an error leaves it usable.
pub struct RestoreGuard;

impl Drop for RestoreGuard {
    fn drop(&mut self) {
        let _ = restore();
    }
}

fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A panic on the UI's thread ends the UI: its message must land on the normal
            // screen. Panics elsewhere (a tool task, caught and reported by the engine) must
            // not tear the screen down under a UI that keeps running; should one end the
            // process, the UI's drop guard restores the terminal on the way out.
            let on_ui_thread = UI_THREAD
                .lock()
                .map(|owner| *owner == Some(std::thread::current().id()))
                .unwrap_or(true);
            if on_ui_thread {
                let _ = restore();
            }
            previous(info);
        }));
    });
}

/// Puts `text` on the clipboard of the terminal's machine (works over SSH).
pub fn copy_osc52(text: &str) -> io::Result<()> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut out = io::stdout();
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}

pub fn set_mouse_capture(on: bool) -> io::Result<()> {
    if on {
        execute!(io::stdout(), EnableMouseCapture)
    } else {
        execute!(io::stdout(), DisableMouseCapture)
    }
}

/// Suspends the screen, lets the user edit `text` in `$VISUAL`/`$EDITOR` (default `vi`), then
/// takes the screen back. Returns the edited text. The caller must have dropped its input
/// stream, or it would steal the editor's keystrokes.
pub async fn edit_in_editor(
    term: &mut Term,
    text: &str,
    mouse: bool,
) -> color_eyre::Result<String> {
    let file = tempfile::Builder::new()
        .prefix("cairn-message-")
        .suffix(".md")
        .tempfile()?;
    std::fs::write(file.path(), text).wrap_err("writing the message for the editor")?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_string());
    let mut words = editor.split_whitespace().map(str::to_string);
    let program = words.next().ok_or_else(|| eyre!("$EDITOR is empty"))?;
    let args: Vec<String> = words.collect();
    let path = file.path().to_path_buf();
    restore()?;
    let status = tokio::task::spawn_blocking(move || {
        let mut editor = std::process::Command::new(&program);
        editor.args(&args).arg(&path);
        // Registered, so the sweep for orphaned commands leaves the editor alone.
        let mut child =
            crate::process::reaper::spawn_known(|| editor.spawn(), |child| Some(child.id()))?;
        let status = child.wait();
        crate::process::reaper::forget(child.id());
        status
    })
    .await
    .wrap_err("waiting for the editor")?;
    enter()?;
    if !mouse {
        set_mouse_capture(false)?;
    }
    full_redraw(term)?;
    let status = status.wrap_err_with(|| format!("starting the editor `{editor}`"))?;
    if !status.success() {
        return Err(eyre!("the editor `{editor}` exited with {status}"));
    }
    std::fs::read_to_string(file.path()).wrap_err("reading the edited message")
}
