//! Start-up notices said once: a notice appears in full the first time a workspace starts
//! with it; on later starts the ones said before share one short line, so a kernel without
//! Landlock or a config warning the user has read does not fill every start. A notice that
//! changed is new and said in full. The log file keeps every notice of every start.

use std::collections::BTreeSet;
use std::path::Path;

/// The data directory's list of notices already said (a hash of workspace and text per line).
const SEEN_FILE: &str = "notices-seen";
/// Past this many remembered notices the oldest are forgotten (said in full once more).
const MAX_SEEN: usize = 2000;
/// How much of each repeated notice the one line keeps.
const SHORT: usize = 48;

/// The notices to show at an interactive start in `workspace`: the new ones whole, then one
/// line naming those said before. Remembers the new ones in `data_dir`; a directory that
/// cannot be read or written only means everything is said in full.
pub fn said_once(data_dir: &Path, workspace: &Path, notices: Vec<String>) -> Vec<String> {
    for notice in &notices {
        tracing::warn!("start-up notice: {notice}");
    }
    if notices.is_empty() {
        return notices;
    }
    let path = data_dir.join(SEEN_FILE);
    let mut seen: Vec<String> = std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let known: BTreeSet<String> = seen.iter().cloned().collect();
    let mut fresh = Vec::new();
    let mut repeated = Vec::new();
    for notice in notices {
        let key = key(workspace, &notice);
        if known.contains(&key) {
            repeated.push(notice);
        } else {
            seen.push(key);
            fresh.push(notice);
        }
    }
    if seen.len() > MAX_SEEN {
        seen.drain(..seen.len() - MAX_SEEN);
    }
    let written = std::fs::create_dir_all(data_dir)
        .and_then(|()| std::fs::write(path.with_extension("tmp"), seen.join("\n") + "\n"))
        .and_then(|()| std::fs::rename(path.with_extension("tmp"), &path));
    if let Err(err) = written {
        tracing::warn!("start-up notices: cannot remember what was said: {err}");
        fresh.append(&mut repeated);
        return fresh;
    }
    if !repeated.is_empty() {
        let shorts: Vec<String> = repeated.iter().map(|n| short(n)).collect();
        fresh.push(format!(
            "as on an earlier start (in full in the log file): {}",
            shorts.join("; ")
        ));
    }
    fresh
}

fn key(workspace: &Path, notice: &str) -> String {
    let mut bytes = workspace.as_os_str().as_encoded_bytes().to_vec();
    bytes.push(0);
    bytes.extend_from_slice(notice.as_bytes());
    crate::content::content_hash(&bytes)
}

fn short(notice: &str) -> String {
    let first = notice.lines().next().unwrap_or_default();
    if first.chars().count() <= SHORT && !notice.contains('\n') {
        return first.to_string();
    }
    // Cut at the last word that fits, so the line never ends inside a word.
    let cut: String = first.chars().take(SHORT + 1).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > 0 => &cut[..space],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_is_said_in_full_once_then_shortened_and_a_changed_one_is_new() {
        let data = tempfile::tempdir().unwrap();
        let ws = Path::new("/w");
        let no_sandbox = "no sandbox: Landlock is not supported by this kernel. Commands run with your full permissions".to_string();
        let first = said_once(
            data.path(),
            ws,
            vec![no_sandbox.clone(), "short one".into()],
        );
        assert_eq!(first, [no_sandbox.clone(), "short one".to_string()]);

        let second = said_once(
            data.path(),
            ws,
            vec![no_sandbox.clone(), "short one".into()],
        );
        assert_eq!(second.len(), 1, "{second:?}");
        assert!(
            second[0].starts_with("as on an earlier start"),
            "{second:?}"
        );
        assert!(second[0].contains("no sandbox: Landlock is not supported by this…"));
        assert!(second[0].contains("; short one"));

        let changed = "no sandbox: another reason".to_string();
        let third = said_once(data.path(), ws, vec![changed.clone()]);
        assert_eq!(
            third,
            std::slice::from_ref(&changed),
            "a changed notice is said whole"
        );

        let elsewhere = said_once(data.path(), Path::new("/other"), vec![changed.clone()]);
        assert_eq!(elsewhere, [changed], "another workspace hears it in full");
    }

    #[test]
    fn without_a_writable_data_directory_everything_is_said() {
        let data = tempfile::tempdir().unwrap();
        let file = data.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        let notices = vec!["one".to_string()];
        assert_eq!(said_once(&file, Path::new("/w"), notices.clone()), notices);
        assert_eq!(said_once(&file, Path::new("/w"), notices.clone()), notices);
    }
}
