//! The confined walk against the `ignore` crate's walker on the same trees (same entries,
//! same ignore semantics), and as an attacker tries it: links out, FIFOs, unreadable
//! directories, and a directory swapped for a link to outside while walking.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (file, content) in files {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    (dir, root)
}

/// Every entry below `place` as `rel` (with `/` for directories), and the problems.
fn walk(
    place: &Beneath,
    skip: &[PathBuf],
    depth: Option<usize>,
) -> (BTreeSet<String>, Vec<Problem>) {
    let found = Mutex::new(BTreeSet::new());
    let start = place.root.join(&place.rel);
    let mut walk = Walk::new(place, skip);
    if let Some(depth) = depth {
        walk = walk.max_depth(depth);
    }
    let problems = walk
        .run(|| {
            |entry: &WalkEntry| {
                if entry.depth() > 0 {
                    let rel = entry.path().strip_prefix(&start).unwrap();
                    let slash = if entry.kind() == WalkKind::Dir {
                        "/"
                    } else {
                        ""
                    };
                    found.locked().insert(format!("{}{slash}", rel.display()));
                }
                WalkState::Continue
            }
        })
        .unwrap();
    (found.into_inner().unwrap(), problems)
}

/// What the `ignore` crate's walker, with the settings the tools used before, yields.
fn ignore_walk(root: &Path) -> BTreeSet<String> {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build()
        .map(|e| e.unwrap())
        .filter(|e| e.depth() > 0)
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap();
            let slash = if e.file_type().unwrap().is_dir() {
                "/"
            } else {
                ""
            };
            format!("{}{slash}", rel.display())
        })
        .collect()
}

fn at(root: &Path) -> Beneath {
    Beneath::new(root, root).unwrap()
}

#[test]
fn the_same_entries_as_the_ignore_crate_with_its_rules() {
    let (_dir, root) = tree(&[
        (
            ".gitignore",
            "target/\n*.log\n/only-top.txt\nbuild\n!keep.log\n",
        ),
        (".ignore", "from-dot-ignore/\n"),
        ("only-top.txt", ""),
        ("src/only-top.txt", ""),
        ("src/main.rs", ""),
        ("src/debug.log", ""),
        ("src/keep.log", ""),
        ("src/.gitignore", "generated.rs\n!important.log\n"),
        ("src/generated.rs", ""),
        ("src/important.log", ""),
        ("src/deep/er/x.rs", ""),
        ("src/deep/.ignore", "*.rs\n!keep.rs\n"),
        ("src/deep/keep.rs", ""),
        ("target/out", ""),
        ("build", ""),
        ("sub/build/y", ""),
        ("from-dot-ignore/z", ""),
        (".github/ci.yml", ""),
        (".git/HEAD", ""),
        (".git/info/exclude", "excluded.txt\n"),
        ("excluded.txt", ""),
        ("sub/excluded.txt", ""),
        ("nested/.git", "not a repository\n"),
        ("nested/a.txt", ""),
        ("\u{feff}odd name.txt", ""),
    ]);
    std::os::unix::fs::symlink("src", root.join("link-to-src")).unwrap();
    let (ours, problems) = walk(&at(&root), &[], None);
    assert_eq!(ours, ignore_walk(&root));
    assert!(problems.is_empty(), "{problems:?}");
    // Spot checks, so a shared mistake cannot pass unnoticed.
    for seen in [
        "src/keep.log",
        "src/important.log",
        "src/deep/keep.rs",
        "link-to-src",
    ] {
        assert!(ours.contains(seen), "{seen} missing from {ours:?}");
    }
    for gone in [
        "target/",
        "src/debug.log",
        "only-top.txt",
        "src/generated.rs",
        "excluded.txt",
    ] {
        assert!(!ours.contains(gone), "{gone} in {ours:?}");
    }
    assert!(ours.contains("src/only-top.txt"));
    // From a subdirectory, the parents' rules still apply.
    let sub = Beneath::new(&root, &root.join("src")).unwrap();
    let (ours, _) = walk(&sub, &[], None);
    assert_eq!(ours, ignore_walk(&root.join("src")));
    assert!(
        !ours.contains("debug.log") && ours.contains("keep.log"),
        "{ours:?}"
    );
}

#[test]
fn depth_skip_and_a_file_as_the_place() {
    let (_dir, root) = tree(&[("a/b/c/d.txt", "x"), ("keys/id", "k"), ("top.txt", "t")]);
    let (two, _) = walk(&at(&root), &[], Some(2));
    assert_eq!(
        two.into_iter().collect::<Vec<_>>(),
        ["a/", "a/b/", "keys/", "keys/id", "top.txt"]
    );
    let (skipped, _) = walk(&at(&root), &[root.join("keys")], None);
    assert!(
        !skipped.iter().any(|p| p.starts_with("keys")),
        "{skipped:?}"
    );
    let file = Beneath::new(&root, &root.join("top.txt")).unwrap();
    let seen = Mutex::new(Vec::new());
    Walk::new(&file, &[])
        .threads(1)
        .run(|| {
            |entry: &WalkEntry| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut entry.open().unwrap(), &mut text).unwrap();
                seen.locked().push((entry.depth(), entry.kind(), text));
                WalkState::Continue
            }
        })
        .unwrap();
    assert_eq!(
        seen.into_inner().unwrap(),
        [(0, WalkKind::File, "t".to_owned())]
    );
    let missing = Beneath::new(&root, &root.join("nope/x")).unwrap();
    let err = Walk::new(&missing, &[]).run(|| |_: &WalkEntry| WalkState::Continue);
    assert_eq!(err.unwrap_err().kind(), io::ErrorKind::NotFound);
}

#[test]
fn links_out_are_listed_never_entered_and_fifos_never_opened() {
    let (_dir, root) = tree(&[("src/a.rs", "")]);
    let (_other, outside) = tree(&[("CANARY-NAME", "CANARY-CONTENT")]);
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("CANARY-NAME"), root.join("file-out")).unwrap();
    nix::unistd::mkfifo(&root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (found, problems) = walk(&at(&root), &[], None);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["file-out", "out", "pipe", "src/", "src/a.rs"]
    );
    assert!(problems.is_empty());
    let kinds = Mutex::new(Vec::new());
    Walk::new(&at(&root), &[])
        .run(|| {
            |entry: &WalkEntry| {
                let opened = entry.open().map(|_| ()).map_err(|e| format!("{e:?}"));
                kinds.locked().push((entry.kind(), opened.is_ok()));
                WalkState::Continue
            }
        })
        .unwrap();
    let kinds = kinds.into_inner().unwrap();
    assert!(kinds.contains(&(WalkKind::Symlink, false)));
    assert!(kinds.contains(&(WalkKind::Other, false)));
    assert!(kinds.contains(&(WalkKind::File, true)));
}

#[test]
fn unreadable_directories_are_reported_and_the_rest_is_walked() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, root) = tree(&[("locked/secret.txt", "s"), ("open/a.txt", "a")]);
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    let place = at(&root);
    let walked = crate::testing::privileges::without_dac_override(|| walk(&place, &[], None));
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let Some((found, problems)) = walked else {
        return; // Capabilities cannot be dropped here: nothing is ever denied.
    };
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["locked/", "open/", "open/a.txt"]
    );
    assert_eq!(
        problems,
        [Problem {
            path: root.join("locked"),
            is_dir: true,
            why: "permission denied".into()
        }]
    );
}

#[test]
fn a_directory_swapped_for_a_link_out_while_walking_never_leads_outside() {
    let (_dir, root) = tree(&[("d/inside.txt", "inside")]);
    let (_other, outside) = tree(&[("CANARY-NAME", "CANARY-CONTENT"), ("deeper/CANARY-2", "")]);
    std::os::unix::fs::symlink(&outside, root.join("swap")).unwrap();
    let stop = AtomicBool::new(false);
    let swaps = std::sync::atomic::AtomicUsize::new(0);
    let place = at(&root);
    let dir = std::fs::File::open(&root).unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                nix::fcntl::renameat2(
                    &dir,
                    "d",
                    &dir,
                    "swap",
                    nix::fcntl::RenameFlags::RENAME_EXCHANGE,
                )
                .unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let (mut walks, mut entered) = (0, 0);
        while (walks < 300 || swaps.load(Ordering::Relaxed) < 100)
            && std::time::Instant::now() < deadline
        {
            walks += 1;
            let (found, _) = walk(&place, &[], None);
            assert!(!found.iter().any(|p| p.contains("CANARY")), "{found:?}");
            entered += usize::from(found.iter().any(|p| p.ends_with("inside.txt")));
        }
        stop.store(true, Ordering::Relaxed);
        assert!(walks >= 50, "only {walks} walks");
        let swaps = swaps.load(Ordering::Relaxed);
        assert!(swaps >= 100, "the swapper barely ran ({swaps} swaps)");
        assert!(entered > 0, "the real directory was never walked");
    });
}
