//! Images attached in the input before a message is sent: Ctrl+V reads the clipboard (the
//! main loop does the reading, off the UI thread, and hands the result to `clipboard_read`),
//! and a paste that is the path of an image file attaches the file instead of typing its
//! path. Both end up as chips in the composer (see `composer`), sent with the message.

use std::path::PathBuf;

use crate::bus::Attachment;
use crate::paste::PendingImage;
use crate::paste::clipboard::{ClipboardError, Clipped};
use crate::paste::path::Pasted;
use crate::tui::app::{App, AppIntent};
use crate::tui::panes::transcript::entry::NoticeLevel;

impl App {
    /// Ctrl+V: asks the main loop to read the clipboard, once at a time.
    pub(crate) fn read_clipboard(&mut self) {
        if self.reading_clipboard {
            self.flash("still reading the clipboard…");
            return;
        }
        self.reading_clipboard = true;
        let earlier = self
            .composer
            .images()
            .iter()
            .filter(|image| matches!(image.attachment, Attachment::ImageBytes { .. }))
            .count();
        let name = match earlier {
            0 => "clipboard.png".to_string(),
            n => format!("clipboard-{}.png", n + 1),
        };
        self.intents.push(AppIntent::ReadClipboard { name });
        self.flash("reading the clipboard…");
    }

    /// What the clipboard held at Ctrl+V: an image becomes a chip, text is pasted (as a
    /// bracketed paste would be), and an empty or missing clipboard is explained.
    pub fn clipboard_read(&mut self, read: Result<Clipped, ClipboardError>) {
        self.reading_clipboard = false;
        if self.read_only {
            return;
        }
        match read {
            Ok(Clipped::Image(image)) => self.attach_image(image),
            Ok(Clipped::Text(text)) => self.paste_into_input(&text),
            Ok(Clipped::Empty) => self.notice(
                "the clipboard is empty: nothing was attached (copy an image first, or paste \
                 an image file's path)",
                NoticeLevel::Warning,
            ),
            Err(err) => self.notice(&err.to_string(), NoticeLevel::Warning),
        }
    }

    /// Pasted text goes into the input, unless it is nothing but paths of image files: then
    /// the files are attached.
    pub(crate) fn paste_into_input(&mut self, text: &str) {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let home = std::env::var_os("HOME").map(PathBuf::from);
        match crate::paste::path::classify(text, &cwd, home.as_deref()) {
            Pasted::Images(images) => {
                for image in images {
                    self.attach_image(image);
                }
                return;
            }
            Pasted::NotAnImage { path, why } => self.notice(
                &format!("{path} was pasted as text, not attached: {why}"),
                NoticeLevel::Warning,
            ),
            Pasted::Text => {}
        }
        self.composer.paste(text);
    }

    /// An image chosen in the `@` finder is attached as a chip in place of the `@word`
    /// (like a pasted image path); true when it was. Any other file is inserted as text.
    pub(crate) fn attach_picked_image(
        &mut self,
        pick: &crate::tui::modals::mention_finder::MentionPick,
    ) -> bool {
        if !crate::content::is_image_path(&pick.file) {
            return false;
        }
        let Pasted::Images(images) = crate::paste::path::classify_one(&pick.file) else {
            return false;
        };
        self.composer.replace_range(pick.range.clone(), "");
        for image in images {
            self.attach_image(image);
        }
        true
    }

    /// A request that ended before its message entered the conversation (refused while
    /// attaching): the message and its images go back into the input, before any draft.
    pub(crate) fn restore_unsent(&mut self) {
        let Some(unsent) = self.unconfirmed.take() else {
            return;
        };
        if self.read_only {
            return;
        }
        let draft = self.composer.text().to_string();
        let drafted = self.composer.take_images();
        let text = match (unsent.text.is_empty(), draft.is_empty()) {
            (_, true) => unsent.text,
            (true, false) => draft,
            (false, false) => format!("{}\n\n{draft}", unsent.text),
        };
        for image in unsent.images.into_iter().chain(drafted) {
            self.composer.attach(image);
        }
        self.composer.set_text(&text);
        self.notice(
            "the message was not sent: it is back in the input with its images (see the \
             warning above), to change and send again",
            NoticeLevel::Info,
        );
    }

    fn attach_image(&mut self, image: PendingImage) {
        self.flash(format!(
            "attached {} · Backspace at the start removes it",
            image.label()
        ));
        self.composer.attach(image);
    }
}
