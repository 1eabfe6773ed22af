//! Images a call read (`read_image`): kept in the session's image store, never in the log,
//! and shown to the model in one note after the step's results (a chat tool result holds
//! text only).

use super::Agent;
use crate::bus::ToolResult;
use crate::session_log::Record;

impl Agent {
    /// An image a call read goes to the store and waits to be shown after the step's results
    /// (chat tool results hold text only); its bytes never reach the log. A model switched to
    /// that is known not to take images gets a correctable error instead.
    pub(super) fn keep_image(&mut self, mut result: ToolResult) -> ToolResult {
        let Some(crate::tool_output::ToolOutput::Image(view)) = &mut result.output else {
            return result;
        };
        if self.takes_images() == Some(false) {
            return ToolResult::error(format!(
                "the model now in use ({}) does not take images, so read_image cannot show it {}. \
                 Work from a text description instead (ask the user), or go on without it",
                self.engine.model.model(),
                view.path
            ));
        }
        match self.store_image(view) {
            Ok(image) => {
                view.hash.clone_from(&image.hash);
                view.data = Vec::new();
                self.session.seen_images.push(image);
                result
            }
            Err(err) => {
                ToolResult::error(format!("{}: the image could not be kept: {err}", view.path))
            }
        }
    }

    /// Shows the model the images the step's calls read: one note after the results.
    pub(super) fn show_seen_images(&mut self) {
        if self.session.seen_images.is_empty() {
            return;
        }
        let mut parts = Vec::new();
        for image in std::mem::take(&mut self.session.seen_images) {
            parts.push(crate::content::Part::text(format!(
                "[cairn] The image read_image read from {}:",
                image.label()
            )));
            parts.push(crate::content::Part::Image(image));
        }
        let text = "[cairn] What read_image showed in the last step follows.".to_string();
        self.record(&Record::Note {
            text: text.clone(),
            told: self.session.told.clone(),
            parts: parts.clone(),
        });
        let store = self.image_store();
        let message =
            super::history::user_message(&text, &parts, &|image| store.get(&image.hash).ok());
        self.session.conversation.push(message);
    }
}
