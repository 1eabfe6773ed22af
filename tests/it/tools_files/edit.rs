//! edit_file: matches, replacements, line breaks, all-or-nothing edits, read-before-write and
//! the approval preview.

use serde_json::json;

use super::{CODE, Ws, edit, read};
use cairn::tool_output::ToolOutput;
use cairn::tools::Tool;
use cairn::tools::edit_file::EditFile;
use cairn::tools::write_file::WriteFile;
async fn read_code() -> Ws {
    let ws = Ws::new().file("src/main.rs", CODE);
    read(&ws, json!({"path": "src/main.rs"})).await.unwrap();
    ws
}

#[tokio::test]
async fn edit_of_an_unread_file_is_refused() {
    let ws = Ws::new().file("src/main.rs", CODE);
    let err = edit(
        &ws,
        json!({"path": "src/main.rs", "old_string": "a = 1", "new_string": "a = 3"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        "src/main.rs: not read in this session; call read_file on it first"
    );
    assert_eq!(ws.read("src/main.rs"), CODE);
}

#[tokio::test]
async fn edit_after_the_file_changed_on_disk_is_refused() {
    let ws = read_code().await;
    ws.put("src/main.rs", CODE.replace("a = 1", "a = 10"));
    let err = edit(
        &ws,
        json!({"path": "src/main.rs", "old_string": "b = 2", "new_string": "b = 3"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("changed on disk since it was last read"),
        "{err}"
    );
    assert_eq!(ws.read("src/main.rs"), CODE.replace("a = 1", "a = 10"));
}

#[tokio::test]
async fn one_match_is_edited_with_a_short_summary_and_a_full_diff() {
    let ws = read_code().await;
    let change = edit(
        &ws,
        json!({"path": "src/main.rs", "old_string": "let b = 2;", "new_string": "let b = 20;"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("src/main.rs"), CODE.replace("b = 2;", "b = 20;"));
    assert_eq!(
        change.diff,
        "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,5 +1,5 @@\n fn main() {\n     let a = 1;\n-    let b = 2;\n\
         +    let b = 20;\n     println!(\"{}\", a + b);\n }\n"
    );
    let text = ToolOutput::FileChanged(change).model_text();
    assert_eq!(
        text,
        "Updated src/main.rs: line 3 (+1 -1). Read the file again only if you need its new content."
    );
    assert!(
        !text.contains("let b"),
        "the model does not get the diff back"
    );
}

#[tokio::test]
async fn zero_matches_show_the_closest_lines() {
    let ws = read_code().await;
    let err = edit(
        &ws,
        json!({"path": "src/main.rs", "old_string": "let b = 3;", "new_string": "let b = 4;"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("old_string was not found in src/main.rs"),
        "{err}"
    );
    assert!(err.contains("     3\t    let b = 2;"), "{err}");
}

#[tokio::test]
async fn several_matches_need_context_or_replace_all() {
    let ws = read_code().await;
    let err = edit(
        &ws,
        json!({"path": "src/main.rs", "old_string": "let", "new_string": "let mut"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("occurs 2 times in src/main.rs (lines 2, 3)") && err.contains("replace_all"),
        "{err}"
    );
    let change = edit(&ws, json!({"path": "src/main.rs", "old_string": "let", "new_string": "let mut", "replace_all": true}))
        .await
        .unwrap();
    assert_eq!(change.replacements, 2);
    assert_eq!(ws.read("src/main.rs"), CODE.replace("let ", "let mut "));
    assert!(
        ToolOutput::FileChanged(change)
            .model_text()
            .contains("lines 2-3 (+2 -2, 2 replacements)")
    );
}

#[tokio::test]
async fn empty_or_identical_strings_are_errors() {
    let ws = read_code().await;
    let err = edit(
        &ws,
        json!({"path": "src/main.rs", "old_string": "", "new_string": "x"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("old_string is empty") && err.contains("write_file"),
        "{err}"
    );
    let err = edit(
        &ws,
        json!({"path": "src/main.rs", "old_string": "a", "new_string": "a"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("identical"), "{err}");
}

#[tokio::test]
async fn crlf_files_stay_crlf() {
    let ws = Ws::new().file("win.txt", "first\r\nsecond\r\nthird\r\n");
    read(&ws, json!({"path": "win.txt"})).await.unwrap();
    let out = read(&ws, json!({"path": "win.txt", "limit": 1}))
        .await
        .unwrap();
    assert!(
        out.starts_with("     1\tfirst\n"),
        "read shows no carriage returns: {out:?}"
    );
    edit(
        &ws,
        json!({"path": "win.txt", "old_string": "first\nsecond", "new_string": "1st\n2nd\n2.5th"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("win.txt"), "1st\r\n2nd\r\n2.5th\r\nthird\r\n");
}

#[tokio::test]
async fn a_file_without_a_final_newline_keeps_it_that_way() {
    let ws = Ws::new().file("f.txt", "a\nb");
    read(&ws, json!({"path": "f.txt"})).await.unwrap();
    edit(
        &ws,
        json!({"path": "f.txt", "old_string": "b", "new_string": "c"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("f.txt"), "a\nc");
}

#[tokio::test]
async fn unicode_text_is_edited_safely() {
    let ws = Ws::new().file("i18n.txt", "名前 = \"太郎\"\nemoji = \"👍🏽\"\n");
    read(&ws, json!({"path": "i18n.txt"})).await.unwrap();
    edit(
        &ws,
        json!({"path": "i18n.txt", "old_string": "太郎", "new_string": "花子"}),
    )
    .await
    .unwrap();
    edit(
        &ws,
        json!({"path": "i18n.txt", "old_string": "👍🏽", "new_string": "🚀"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("i18n.txt"), "名前 = \"花子\"\nemoji = \"🚀\"\n");
}

#[tokio::test]
async fn several_edits_apply_together_or_not_at_all() {
    let ws = read_code().await;
    let failing = json!({"path": "src/main.rs", "edits": [
        {"old_string": "a = 1", "new_string": "a = 5"},
        {"old_string": "no such text", "new_string": "x"}
    ]});
    let err = edit(&ws, failing).await.unwrap_err();
    assert!(
        err.starts_with("edit 2 of 2: old_string was not found")
            && err.ends_with("No edit was applied."),
        "{err}"
    );
    assert_eq!(ws.read("src/main.rs"), CODE);
    let change = edit(
        &ws,
        json!({"path": "src/main.rs", "edits": [
            {"old_string": "a = 1", "new_string": "a = 5"},
            {"old_string": "b = 2", "new_string": "b = 6"}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(
        ws.read("src/main.rs"),
        CODE.replace("a = 1", "a = 5").replace("b = 2", "b = 6")
    );
    assert_eq!(
        (change.added, change.removed, change.replacements),
        (2, 2, 2)
    );
}

#[tokio::test]
async fn edit_of_a_missing_file_suggests_names() {
    let ws = read_code().await;
    let err = edit(
        &ws,
        json!({"path": "src/mains.rs", "old_string": "a", "new_string": "b"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("no such file") && err.contains("main.rs"),
        "{err}"
    );
}

#[tokio::test]
async fn previews_show_the_diff_without_changing_anything() {
    let ws = Ws::new().file("src/main.rs", CODE);
    let edit_args =
        json!({"path": "src/main.rs", "old_string": "let b = 2;", "new_string": "let b = 20;"});
    let preview = EditFile.preview(&edit_args, &ws.cx).unwrap();
    assert!(
        preview.diff.contains("-    let b = 2;\n+    let b = 20;\n"),
        "{}",
        preview.diff
    );
    assert_eq!((preview.first_line, preview.last_line), (3, 3));
    let write_args = json!({"path": "new.txt", "content": "hello"});
    let preview = WriteFile.preview(&write_args, &ws.cx).unwrap();
    assert!(
        preview.created && preview.diff.ends_with("+hello\n"),
        "{}",
        preview.diff
    );
    let failing = json!({"path": "src/main.rs", "old_string": "absent", "new_string": "x"});
    assert!(EditFile.preview(&failing, &ws.cx).is_none());
    assert_eq!(ws.read("src/main.rs"), CODE);
    assert!(!ws.root.join("new.txt").exists());
}
