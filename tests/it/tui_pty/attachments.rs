//! Attachments in the real binary: `@` with a fuzzy query over a 50,000-file workspace while
//! its index is built, a secret store mentioned in the TUI (asked, and nothing of it sent when
//! denied), a pasted image path that becomes a chip and an image part, and Ctrl+V where there
//! is no clipboard.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;

use super::harness::Tui;
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

/// 500 directories of 100 empty files, and the one the query is for among decoys that match
/// half of it.
fn fifty_thousand_files(sb: &Sandbox) {
    let ws = sb.workspace();
    for d in 0..500 {
        let dir = ws.join(format!("pkg{d:03}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..100 {
            let name = match (d, f) {
                (417, 0) => "session_manager.rs".to_string(),
                (_, 0) if d < 50 => "session.rs".to_string(),
                (_, 0) if d < 100 => "manager.rs".to_string(),
                _ => format!("mod_{f:02}.rs"),
            };
            std::fs::File::create(dir.join(name)).unwrap();
        }
    }
}

/// The first file the `@` popup lists (the row under its title).
fn first_listed(screen: &str) -> Option<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let title = lines.iter().position(|l| l.contains("@ files"))?;
    lines.get(title + 1).map(|l| {
        l.trim_matches(|c: char| c == '│' || c.is_whitespace())
            .to_string()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_at_with_a_fuzzy_query_over_50000_files_keeps_every_key_and_ranks_the_file_first() {
    let sb = Sandbox::new();
    fifty_thousand_files(&sb);
    let llm = MockLlm::start(vec![]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.wait_for_text("What should we work on?").await;
    // The first `@` starts the walk; the query's keys follow at once, one write each, while
    // the 50,000 files are being indexed.
    let typed = "look at @sesmgr";
    for c in typed.chars() {
        tui.send(&c.to_string());
    }
    let screen = tui
        .wait_for("the typed text and the file ranked first", |s| {
            s.contains(typed) && first_listed(s).as_deref() == Some("pkg417/session_manager.rs")
        })
        .await;
    assert!(screen.contains("@ files"), "{screen}");
    tui.send("\t");
    tui.wait_for_text("look at @pkg417/session_manager.rs")
        .await;
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_secret_store_mention_asks_even_in_never_and_a_denial_sends_nothing_of_it() {
    let sb = Sandbox::new();
    let home = sb.data_dir().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-KEY-MATERIAL-7f3a\n-----END OPENSSH PRIVATE KEY-----\n";
    std::fs::write(home.join(".ssh/id_rsa"), key).unwrap();
    let llm = MockLlm::start(vec![Script::text("Nothing attached, understood.")]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 100, 30);
    tui.submit("check @~/.ssh/id_rsa please").await;
    let prompt = tui.wait_for_text("deny with a message").await;
    assert!(
        prompt.contains("id_rsa"),
        "the box names the key:\n{prompt}"
    );
    assert!(
        llm.requests().is_empty(),
        "nothing is sent before the answer"
    );
    tui.press("n").await;
    let screen = tui.wait_for_text("Nothing attached, understood.").await;
    assert!(screen.contains("was not attached"), "{screen}");
    let requests = llm.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].to_string();
    assert!(
        !sent.contains("FAKE-KEY-MATERIAL"),
        "the key was sent: {sent}"
    );
    assert!(
        sent.contains("check @~/.ssh/id_rsa please"),
        "the words stay text"
    );
    let logged = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(!logged.contains("FAKE-KEY-MATERIAL"), "nor logged");
    tui.quit().await;
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(width, height, image::Rgb([10, 200, 10]));
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_pasted_image_path_is_a_chip_then_an_image_part_and_a_transcript_chip() {
    let sb = Sandbox::new();
    let shot = sb.workspace().join("Screen Shot.png");
    std::fs::write(&shot, png(30, 20)).unwrap();
    let llm = MockLlm::start(vec![Script::text("A green rectangle.")]).await;
    let url = llm.url();
    let args = [
        "--base-url",
        &url,
        "--mode",
        "auto-edit",
        "--model",
        "gpt-4.1",
    ];
    let mut tui = Tui::start_args(&sb, &args, 100, 30);
    tui.wait_for_text("What should we work on?").await;
    // As a terminal pastes a dragged file: bracketed, spaces escaped.
    let escaped = shot.to_str().unwrap().replace(' ', "\\ ");
    tui.send(&format!("\x1b[200~{escaped}\x1b[201~"));
    let screen = tui.wait_for_text("[image] Screen Shot.png (").await;
    assert!(screen.contains("30×20)"), "{screen}");
    assert!(
        !screen.contains("Screen\\ Shot"),
        "the path is not typed:\n{screen}"
    );
    tui.send("what is it?");
    tui.wait_for_text("what is it?").await;
    tui.send("\r");
    let screen = tui.wait_for_text("A green rectangle.").await;
    // The transcript keeps the chip under the message.
    assert!(screen.contains("what is it?"), "{screen}");
    assert!(screen.contains("[image] Screen Shot.png ("), "{screen}");
    let sent = llm.request(0).to_string();
    assert!(
        sent.contains("data:image/png;base64,"),
        "one image part: {sent:.300}"
    );
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_ctrl_v_without_a_display_says_there_is_no_clipboard_and_keeps_the_draft() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![]).await;
    // The harness starts cairn without DISPLAY and WAYLAND_DISPLAY: a terminal over SSH.
    let mut tui = Tui::start_env(
        &sb,
        &["--base-url", &llm.url(), "--mode", "auto-edit"],
        &[("SSH_CONNECTION", "10.0.0.1 50000 10.0.0.2 22")],
        100,
        30,
    );
    tui.wait_for_text("What should we work on?").await;
    tui.send("my draft");
    tui.wait_for_text("my draft").await;
    tui.send("\x16");
    let screen = tui.wait_for_text("no clipboard to read here").await;
    assert!(screen.contains("SSH"), "{screen}");
    assert!(screen.contains("my draft"), "{screen}");
    assert!(!screen.contains("[image]"), "{screen}");
    tui.quit().await;
}
