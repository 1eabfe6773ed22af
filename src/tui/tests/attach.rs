//! Images attached in the input: Ctrl+V of the clipboard's image (the clipboard is a test
//! source here: the main loop's reading is the same `paste::clipboard::read`), a pasted image
//! path, the chips they show, removing one, and what is sent.

#![allow(clippy::unwrap_used)]

use crate::bus::{ConversationEvent, ReportEvent};
use std::io::Cursor;
use std::time::Instant;

use crossterm::event::{Event, KeyCode};

use super::{app, ctrl, draw, key, screen_text, type_text};
use crate::bus::{AgentEvent, Attachment, ImageChip, UserCommand};
use crate::paste::clipboard::{
    self, ClipboardContent, ClipboardError, ClipboardImage, ClipboardSource, SystemClipboard,
};
use crate::tui::app::{App, AppIntent};

/// A clipboard holding what the test put on it.
struct TestClipboard(ClipboardContent);

impl ClipboardSource for TestClipboard {
    fn read(&mut self) -> Result<ClipboardContent, ClipboardError> {
        Ok(self.0.clone())
    }
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(width, height, image::Rgb([200, 30, 30]));
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// Ctrl+V as the main loop does it: the app asks, the clipboard is read, the app is told.
fn ctrl_v(app: &mut App, clipboard: &mut dyn ClipboardSource) {
    app.handle_input(&ctrl('v'));
    let name = app
        .take_intents()
        .into_iter()
        .find_map(|intent| match intent {
            AppIntent::ReadClipboard { name } => Some(name),
            _ => None,
        })
        .expect("Ctrl+V asks for the clipboard");
    app.clipboard_read(clipboard::read(clipboard, &name));
}

fn submitted(app: &mut App) -> (String, Vec<Attachment>) {
    match app.take_commands().as_slice() {
        [UserCommand::Submit { text, attach }] => (text.clone(), attach.clone()),
        other => panic!("one submit expected: {other:?}"),
    }
}

#[test]
fn ctrl_v_of_a_clipboard_image_shows_a_chip_and_sends_the_png_with_the_message() {
    let mut app = app(Instant::now());
    let bytes = png(640, 480);
    let mut clipboard = TestClipboard(ClipboardContent::Image(ClipboardImage::Encoded(
        bytes.clone(),
    )));
    ctrl_v(&mut app, &mut clipboard);
    type_text(&mut app, "why is this red?");
    insta::assert_snapshot!(draw(&app, 70, 12));
    app.handle_input(&key(KeyCode::Enter));
    let (text, attach) = submitted(&mut app);
    assert_eq!(text, "why is this red?");
    assert_eq!(
        attach,
        [Attachment::ImageBytes {
            name: "clipboard.png".into(),
            bytes
        }]
    );
    assert!(app.composer.images().is_empty(), "sent, so no chip left");
    assert!(!screen_text(&app, 70, 12).contains("[image]"));
}

#[test]
fn a_second_clipboard_image_gets_its_own_name_and_an_image_alone_can_be_sent() {
    let mut app = app(Instant::now());
    let mut clipboard = TestClipboard(ClipboardContent::Image(ClipboardImage::Rgba {
        width: 2,
        height: 2,
        pixels: vec![255; 16],
    }));
    ctrl_v(&mut app, &mut clipboard);
    ctrl_v(&mut app, &mut clipboard);
    let names: Vec<&str> = app
        .composer
        .images()
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, ["clipboard.png", "clipboard-2.png"]);
    app.handle_input(&key(KeyCode::Enter));
    let (text, attach) = submitted(&mut app);
    assert_eq!(text, "");
    assert_eq!(attach.len(), 2);
}

#[test]
fn without_a_clipboard_ctrl_v_says_why_and_what_to_do_and_attaches_nothing() {
    let mut app = app(Instant::now());
    type_text(&mut app, "draft");
    let mut headless = SystemClipboard::with_env(|_| None);
    ctrl_v(&mut app, &mut headless);
    let screen = screen_text(&app, 120, 30);
    if cfg!(all(unix, not(target_os = "macos"))) {
        assert!(screen.contains("no clipboard to read here"), "{screen}");
        assert!(screen.contains("DISPLAY"), "{screen}");
    }
    assert!(app.composer.images().is_empty());
    assert_eq!(app.composer.text(), "draft", "the draft is untouched");
    assert!(!app.reading_clipboard, "the next Ctrl+V may try again");
}

#[test]
fn ctrl_v_of_text_pastes_what_the_clipboard_holds_now_and_an_empty_one_says_so() {
    let mut app = app(Instant::now());
    ctrl_v(
        &mut app,
        &mut TestClipboard(ClipboardContent::Text("first copy".into())),
    );
    type_text(&mut app, " / ");
    ctrl_v(
        &mut app,
        &mut TestClipboard(ClipboardContent::Text("second copy".into())),
    );
    assert_eq!(app.composer.text(), "first copy / second copy");
    ctrl_v(&mut app, &mut TestClipboard(ClipboardContent::Empty));
    assert!(screen_text(&app, 120, 30).contains("the clipboard is empty"));
    assert!(app.composer.images().is_empty());
}

#[test]
fn a_pasted_image_path_becomes_a_chip_and_is_sent_as_a_file_attachment() {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("Screen Shot.png");
    std::fs::write(&shot, png(30, 20)).unwrap();
    let mut app = app(Instant::now());
    let escaped = shot.to_str().unwrap().replace(' ', "\\ ");
    app.handle_input(&Event::Paste(escaped));
    assert_eq!(app.composer.text(), "", "the path is not typed");
    let [image] = app.composer.images() else {
        panic!("one chip");
    };
    assert_eq!(
        image.label(),
        format!("Screen Shot.png ({} B, 30×20)", image.bytes)
    );
    assert!(screen_text(&app, 100, 20).contains("[image] Screen Shot.png ("));
    type_text(&mut app, "see");
    app.handle_input(&key(KeyCode::Enter));
    let (_, attach) = submitted(&mut app);
    assert_eq!(
        attach,
        [Attachment::ImagePath {
            path: shot.to_str().unwrap().to_string()
        }]
    );
}

#[test]
fn other_pastes_stay_text_and_a_fake_image_is_pasted_as_text_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.png");
    std::fs::write(&fake, "not an image").unwrap();
    let mut app = app(Instant::now());
    let missing = dir.path().join("missing.png");
    app.handle_input(&Event::Paste(missing.to_str().unwrap().into()));
    assert_eq!(app.composer.text(), missing.to_str().unwrap());
    app.composer.clear();
    app.handle_input(&Event::Paste(fake.to_str().unwrap().into()));
    assert_eq!(app.composer.text(), fake.to_str().unwrap());
    assert!(app.composer.images().is_empty());
    let screen = screen_text(&app, 160, 30);
    assert!(
        screen.contains("was pasted as text, not attached"),
        "{screen}"
    );
}

#[test]
fn backspace_at_the_start_removes_the_last_chip_and_elsewhere_deletes_text() {
    let mut app = app(Instant::now());
    let mut clipboard = TestClipboard(ClipboardContent::Image(ClipboardImage::Encoded(png(4, 4))));
    ctrl_v(&mut app, &mut clipboard);
    ctrl_v(&mut app, &mut clipboard);
    type_text(&mut app, "ab");
    app.handle_input(&key(KeyCode::Backspace));
    assert_eq!(app.composer.text(), "a");
    assert_eq!(app.composer.images().len(), 2, "text went first");
    app.handle_input(&key(KeyCode::Home));
    app.handle_input(&key(KeyCode::Backspace));
    assert_eq!(app.composer.text(), "a", "the text stays");
    assert_eq!(app.composer.images().len(), 1);
    assert_eq!(app.composer.images()[0].name, "clipboard.png");
    app.handle_input(&key(KeyCode::Backspace));
    assert!(app.composer.images().is_empty());
    app.handle_input(&key(KeyCode::Backspace));
    assert_eq!(app.composer.text(), "a");
}

#[test]
fn an_image_waits_with_its_queued_message_and_a_command_leaves_it_for_the_next() {
    let mut app = app(Instant::now());
    type_text(&mut app, "first");
    app.handle_input(&key(KeyCode::Enter));
    submitted(&mut app);
    let mut clipboard = TestClipboard(ClipboardContent::Image(ClipboardImage::Encoded(png(4, 4))));
    ctrl_v(&mut app, &mut clipboard);
    type_text(&mut app, "/cost");
    app.handle_input(&key(KeyCode::Enter));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::ShowCost]
    ));
    assert_eq!(app.composer.images().len(), 1, "kept for the message");
    type_text(&mut app, "second");
    app.handle_input(&key(KeyCode::Enter));
    // While busy, Enter steers: the message and its image go to the agent for the next step.
    match app.take_commands().as_slice() {
        [UserCommand::Steer { text, attach, .. }] => {
            assert_eq!((text.as_str(), attach.len()), ("second", 1));
        }
        other => panic!("one steering message expected: {other:?}"),
    }
    assert!(screen_text(&app, 100, 24).contains("next step: second [+1 image]"));
}

#[test]
fn a_sent_image_shows_as_a_chip_under_its_message_in_the_transcript() {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "what does this dialog mean?".into(),
        images: vec![ImageChip {
            name: "clipboard.png".into(),
            bytes: 1_234_567,
            width: 2048,
            height: 1536,
        }],
        files: vec![],
        typed: None,
    }));
    insta::assert_snapshot!(draw(&app, 70, 12));
    assert!(screen_text(&app, 70, 12).contains("[image] clipboard.png (1.2 MB, 2048×1536)"));
}

#[test]
fn attached_files_show_as_chips_under_their_message() {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "compare @src/long.rs#L10-20 with @docs and @\"dir with space/f.txt\"".into(),
        images: vec![],
        files: vec![
            "src/long.rs (lines 10-20)".into(),
            "docs/ (directory)".into(),
            "dir with space/f.txt".into(),
        ],
        typed: None,
    }));
    for (width, height) in [(80, 14), (160, 14)] {
        let screen = screen_text(&app, width, height);
        for chip in [
            "[file] src/long.rs (lines 10-20)",
            "[file] docs/ (directory)",
            "[file] dir with space/f.txt",
        ] {
            assert!(screen.contains(chip), "{width} columns: {screen}");
        }
        insta::assert_snapshot!(format!("file_chips_{width}"), draw(&app, width, height));
    }
}

#[test]
fn a_message_refused_before_it_was_sent_comes_back_into_the_input_with_its_images() {
    let mut app = app(Instant::now());
    let mut clipboard = TestClipboard(ClipboardContent::Image(ClipboardImage::Encoded(png(4, 4))));
    ctrl_v(&mut app, &mut clipboard);
    type_text(&mut app, "what is this?");
    app.handle_input(&key(KeyCode::Enter));
    submitted(&mut app);
    type_text(&mut app, "meanwhile");
    // The agent refuses the image (a text-only model) before the message enters the
    // conversation: no `UserMessage`, the request fails.
    app.apply(&AgentEvent::Report(ReportEvent::Warning {
        message: "clipboard.png is an image, and deepseek-chat does not take images".into(),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: crate::bus::StepId(0),
        reason: crate::bus::EndReason::Failed("clipboard.png is an image".into()),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    assert_eq!(app.composer.text(), "what is this?\n\nmeanwhile");
    assert_eq!(app.composer.images().len(), 1, "the image is back too");
    assert!(screen_text(&app, 120, 30).contains("back in the input"));
    // A message that was sent is not brought back by a later failure.
    app.composer.clear();
    app.composer.take_images();
    type_text(&mut app, "second");
    app.handle_input(&key(KeyCode::Enter));
    submitted(&mut app);
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "second".into(),
        images: vec![],
        files: vec![],
        typed: None,
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: crate::bus::StepId(1),
        reason: crate::bus::EndReason::Failed("401".into()),
    }));
    assert_eq!(app.composer.text(), "");
}

#[test]
fn an_image_chosen_in_the_at_finder_becomes_a_chip_and_other_files_stay_text() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("diagram.png"), png(12, 8)).unwrap();
    std::fs::write(dir.path().join("fake.png"), "text").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "").unwrap();
    let index = crate::finder::FileIndex::start(dir.path());
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    while !index.is_ready() {
        assert!(Instant::now() < deadline, "the index was never built");
        std::thread::yield_now();
    }
    let mut app = app(Instant::now());
    app.mention_finder = crate::tui::modals::mention_finder::MentionFinder::over(index.clone());
    let pick = |app: &mut App, query: &str| {
        type_text(app, query);
        while !app.mention_finder.is_open() || app.mention_finder.waiting_for_index() {
            assert!(Instant::now() < deadline, "the finder never listed a file");
            std::thread::yield_now();
            app.expire();
        }
        app.handle_input(&key(KeyCode::Enter));
    };
    pick(&mut app, "see @diagr");
    assert_eq!(
        app.composer.text(),
        "see ",
        "the @word gave way to the chip"
    );
    let [image] = app.composer.images() else {
        panic!("one chip");
    };
    assert_eq!(
        (image.name.as_str(), image.width, image.height),
        ("diagram.png", 12, 8)
    );
    pick(&mut app, "@notes");
    assert_eq!(app.composer.text(), "see @notes.txt ");
    assert_eq!(app.composer.images().len(), 1);
}
