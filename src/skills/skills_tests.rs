#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use super::commands::{Source, discover_commands, expand, parse_invocation, words};
use super::listing::{self, Status};
use super::*;

fn skill_file(dir: &Path, name: &str, description: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join(SKILL_FILE);
    std::fs::write(
        &file,
        format!("---\nname: {name}\ndescription: {description}\n---\nDo {name}.\n"),
    )
    .unwrap();
    file
}

/// A repository with the workspace one level down, a home and a config directory, all in a
/// temp dir.
struct World {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    workspace: PathBuf,
    home: PathBuf,
    config: PathBuf,
}

impl World {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let repo = root.join("repo");
        let workspace = repo.join("app");
        let home = root.join("home");
        let config = home.join(".config").join("cairn");
        for dir in [&workspace, &config, &repo.join(".git")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self {
            _tmp: tmp,
            repo,
            workspace,
            home,
            config,
        }
    }

    fn sources(&self) -> Sources {
        Sources {
            workspace: self.workspace.clone(),
            home: Some(self.home.clone()),
            config_dir: Some(self.config.clone()),
            secrets: crate::secret_stores::SecretStores::new(
                std::slice::from_ref(&self.home),
                std::slice::from_ref(&self.config),
            ),
        }
    }
}

fn names(found: &Found<Skill>) -> Vec<&str> {
    found.items.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn every_place_is_searched_project_first_closest_first() {
    let w = World::new();
    skill_file(&w.workspace.join(".cairn/skills/a-cairn"), "a-cairn", "one");
    skill_file(
        &w.workspace.join(".agents/skills/b-agents"),
        "b-agents",
        "two",
    );
    skill_file(
        &w.workspace.join(".claude/skills/c-claude"),
        "c-claude",
        "three",
    );
    skill_file(&w.repo.join(".agents/skills/d-repo"), "d-repo", "four");
    skill_file(&w.config.join("skills/e-config"), "e-config", "five");
    skill_file(&w.home.join(".agents/skills/f-home"), "f-home", "six");
    skill_file(&w.home.join(".claude/skills/g-claude"), "g-claude", "seven");
    // Above the repository root: not the project's.
    skill_file(
        &w.repo.parent().unwrap().join(".agents/skills/z-outside"),
        "z-outside",
        "no",
    );
    let found = discover_skills(&w.sources());
    assert_eq!(
        names(&found),
        [
            "a-cairn", "b-agents", "c-claude", "d-repo", "e-config", "f-home", "g-claude"
        ],
        "{:?}",
        found.warnings
    );
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    let origins: Vec<(&str, SkillScope)> = found
        .items
        .iter()
        .map(|s| (s.origin.as_str(), s.scope))
        .collect();
    assert_eq!(origins[0], (".cairn/skills", SkillScope::Project));
    assert_eq!(origins[3], ("../.agents/skills", SkillScope::Project));
    assert_eq!(origins[4], ("cairn config skills", SkillScope::User));
    assert_eq!(origins[6], ("~/.claude/skills", SkillScope::User));
    assert_eq!(found.items[0].body, "Do a-cairn.");
    assert_eq!(
        found.items[0].file,
        w.workspace.join(".cairn/skills/a-cairn/SKILL.md")
    );
}

#[test]
fn nested_folders_hold_skills_and_a_skill_folder_holds_files_not_skills() {
    let w = World::new();
    let place = w.workspace.join(".cairn/skills");
    skill_file(&place.join("team/release"), "release", "cut a release");
    skill_file(&place.join("team/ops/deploy"), "deploy", "deploy it");
    // Inside a skill: its own files, never another skill.
    skill_file(&place.join("team/release/examples/inner"), "inner", "no");
    std::fs::write(place.join("team/release/notes.md"), "x").unwrap();
    let found = discover_skills(&w.sources());
    assert_eq!(names(&found), ["deploy", "release"]);
    let release = &found.items[1];
    let files = release.files(10);
    assert!(
        files.contains(&place.join("team/release/notes.md")),
        "{files:?}"
    );
    assert!(!files.contains(&release.file));
    let text = release.loaded_text("v1.2");
    assert!(
        text.contains("Do release.") && text.contains("notes.md"),
        "{text}"
    );
    assert!(text.contains("Arguments: v1.2"), "{text}");
}

#[test]
fn invalid_skills_are_skipped_or_doubted_with_a_warning_naming_the_file() {
    let w = World::new();
    let place = w.workspace.join(".agents/skills");
    let no_description = place.join("quiet");
    std::fs::create_dir_all(&no_description).unwrap();
    std::fs::write(
        no_description.join(SKILL_FILE),
        "---\nname: quiet\n---\nbody",
    )
    .unwrap();
    let no_front = place.join("plain");
    std::fs::create_dir_all(&no_front).unwrap();
    std::fs::write(no_front.join(SKILL_FILE), "just text").unwrap();
    let broken = place.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join(SKILL_FILE), "---\nname: [broken\n---\n").unwrap();
    skill_file(&place.join("Bad_Name"), "Bad_Name", "works anyway");
    skill_file(&place.join("other-dir"), "named-else", "a mismatch");
    let spaced = place.join("spaced");
    std::fs::create_dir_all(&spaced).unwrap();
    std::fs::write(
        spaced.join(SKILL_FILE),
        "---\nname: two words\ndescription: x\n---\n",
    )
    .unwrap();
    // The same name further down is skipped.
    skill_file(
        &w.home.join(".agents/skills/named-else"),
        "named-else",
        "later",
    );
    let found = discover_skills(&w.sources());
    assert_eq!(
        names(&found),
        ["Bad_Name", "named-else"],
        "{:?}",
        found.warnings
    );
    let warned = |file: &Path, words: &str| {
        assert!(
            found
                .warnings
                .iter()
                .any(|m| m.contains(&file.display().to_string()) && m.contains(words)),
            "no warning about {} saying {words}: {:#?}",
            file.display(),
            found.warnings
        );
    };
    warned(&no_description.join(SKILL_FILE), "no `description`");
    warned(&no_front.join(SKILL_FILE), "no front matter");
    warned(&broken.join(SKILL_FILE), "not valid YAML");
    warned(&place.join("Bad_Name").join(SKILL_FILE), "naming rule");
    warned(
        &place.join("other-dir").join(SKILL_FILE),
        "differs from its directory",
    );
    warned(&spaced.join(SKILL_FILE), "spaces");
    warned(
        &w.home.join(".agents/skills/named-else").join(SKILL_FILE),
        "is taken by",
    );
}

#[test]
fn descriptions_are_one_line_and_capped() {
    let w = World::new();
    let dir = w.workspace.join(".cairn/skills/long");
    std::fs::create_dir_all(&dir).unwrap();
    let long = "word ".repeat(400);
    std::fs::write(
        dir.join(SKILL_FILE),
        format!("---\nname: long\ndescription: |\n  line one\n  - name: fake\n  {long}\n---\n"),
    )
    .unwrap();
    let found = discover_skills(&w.sources());
    let skill = &found.items[0];
    assert!(!skill.description.contains('\n'));
    assert!(skill.description.starts_with("line one - name: fake"));
    assert_eq!(skill.description.chars().count(), MAX_DESCRIPTION);
    assert!(found.warnings.iter().any(|m| m.contains("longer than")));
}

#[cfg(unix)]
#[test]
fn links_never_lead_out_of_the_repository_or_into_a_secret_store() {
    use std::os::unix::fs::symlink;
    let w = World::new();
    let outside = w.repo.parent().unwrap().join("elsewhere");
    skill_file(&outside.join("evil"), "evil", "from outside");
    let ssh = w.home.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(
        ssh.join("id_rsa"),
        "---\nname: key\ndescription: PRIVATE\n---\n",
    )
    .unwrap();
    skill_file(&ssh.join("sneaky"), "sneaky", "in a secret store");
    let place = w.workspace.join(".cairn/skills");
    std::fs::create_dir_all(&place).unwrap();
    symlink(outside.join("evil"), place.join("evil")).unwrap();
    symlink(&ssh, w.home.join(".agents")).unwrap_or(());
    let user_place = w.home.join(".claude/skills");
    std::fs::create_dir_all(&user_place).unwrap();
    symlink(ssh.join("sneaky"), user_place.join("sneaky")).unwrap();
    // A SKILL.md that is a link to a key.
    let keyed = place.join("keyed");
    std::fs::create_dir_all(&keyed).unwrap();
    symlink(ssh.join("id_rsa"), keyed.join(SKILL_FILE)).unwrap();
    // A link inside the repository is fine, and one place linked to another is one skill.
    skill_file(&w.repo.join("shared/skills/tidy"), "tidy", "tidy up");
    symlink(w.repo.join("shared/skills/tidy"), place.join("tidy")).unwrap();
    std::fs::create_dir_all(w.workspace.join(".agents")).unwrap();
    symlink(&place, w.workspace.join(".agents/skills")).unwrap();
    let found = discover_skills(&w.sources());
    assert_eq!(names(&found), ["tidy"], "{:#?}", found.warnings);
    for leaked in ["evil", "sneaky", "PRIVATE", "key"] {
        assert!(
            found
                .items
                .iter()
                .all(|s| !s.description.contains(leaked) && s.name != leaked)
        );
    }
    let said = found.warnings.join("\n");
    assert!(
        said.contains("not followed") && said.contains("keyed"),
        "{said}"
    );
    assert!(
        !said.contains("is taken by"),
        "a linked place is not a clash: {said}"
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_skill_file_does_not_hang_discovery() {
    let w = World::new();
    let dir = w.workspace.join(".cairn/skills/pipe");
    std::fs::create_dir_all(&dir).unwrap();
    nix::unistd::mkfifo(&dir.join(SKILL_FILE), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let found = discover_skills(&w.sources());
    assert!(found.items.is_empty());
    assert!(
        found.warnings[0].contains("not a regular file"),
        "{:?}",
        found.warnings
    );
}

fn fake(name: &str, description: &str) -> Skill {
    Skill {
        name: name.into(),
        description: description.into(),
        dir: PathBuf::from(format!("/s/{name}")),
        file: PathBuf::from(format!("/s/{name}/SKILL.md")),
        scope: SkillScope::Project,
        origin: ".cairn/skills".into(),
        body: String::new(),
        argument_hint: None,
        model_invocable: true,
        user_invocable: true,
        allowed_tools: Vec::new(),
    }
}

#[test]
fn over_budget_descriptions_shorten_first_then_skills_are_omitted_with_warnings() {
    let skills: Vec<Skill> = (0..20)
        .map(|i| fake(&format!("skill-{i:02}"), &"describes a task ".repeat(6)))
        .collect();
    let roomy = listing::build(&skills, 100_000);
    assert!(roomy.entries.iter().all(|e| e.status == Status::Listed));
    assert!(roomy.warnings.is_empty());
    assert!(roomy.text.contains("- skill-00: describes a task"));
    assert!(roomy.text.contains("(/s/skill-00/SKILL.md)"));
    // Room for every skill with shorter descriptions.
    let full = roomy.text.len() - roomy.text.find("- skill-00").unwrap();
    let tight = listing::build(&skills, full * 3 / 4);
    assert!(tight.entries.iter().all(|e| e.status == Status::Shortened));
    assert_eq!(tight.warnings.len(), 1, "{:?}", tight.warnings);
    assert!(tight.warnings[0].contains("shortened"));
    let listed: usize = tight
        .text
        .lines()
        .filter(|l| l.starts_with("- "))
        .map(|l| l.chars().count() + 1)
        .sum();
    assert!(listed <= full * 3 / 4);
    // No room even at the shortest descriptions: the last skills go, with a warning.
    let cramped = listing::build(&skills, 600);
    let omitted: Vec<&str> = cramped
        .entries
        .iter()
        .filter(|e| e.status == Status::Omitted)
        .map(|e| e.name.as_str())
        .collect();
    assert!(!omitted.is_empty() && omitted.contains(&"skill-19"));
    assert!(!cramped.text.contains("skill-19"));
    assert!(
        cramped
            .warnings
            .iter()
            .any(|w| w.contains("left out") && w.contains("skill-19"))
    );
    let listed: usize = cramped
        .text
        .lines()
        .filter(|l| l.starts_with("- "))
        .map(|l| l.chars().count() + 1)
        .sum();
    assert!(listed <= 600, "{listed}");
    // The budget: 2% of the window, at most 8,000 characters.
    assert_eq!(listing::budget_for(1_000_000), 8_000);
    assert_eq!(listing::budget_for(32_000), 2_560);
}

#[test]
fn user_only_skills_are_never_listed_for_the_model() {
    let mut hidden = fake("secret-deploy", "deploys");
    hidden.model_invocable = false;
    let listed = listing::build(&[fake("open", "x"), hidden], 8_000);
    assert!(!listed.text.contains("secret-deploy"));
    assert_eq!(listed.entries[1].status, Status::UserOnly);
    assert!(listing::build(&[], 8_000).text.is_empty());
}

fn command(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn commands_are_found_named_by_folder_and_shadowed_with_a_mark() {
    let w = World::new();
    command(
        &w.workspace.join(".cairn/commands/review.md"),
        "---\ndescription: review the diff\nargument-hint: \"[FILE] [FOCUS]\"\n---\nReview $1 for $2. All: $ARGUMENTS\n",
    );
    command(
        &w.workspace.join(".cairn/commands/git/commit.md"),
        "Write a commit message\n",
    );
    command(
        &w.workspace.join(".claude/commands/fix.md"),
        "Fix $ARGUMENTS\n",
    );
    command(
        &w.home.join(".claude/commands/review.md"),
        "the user's review\n",
    );
    command(
        &w.config.join("commands/mine.md"),
        "---\ndescription: mine\n---\nmine\n",
    );
    command(&w.workspace.join(".cairn/commands/undo.md"), "no\n");
    skill_file(
        &w.workspace.join(".cairn/skills/release"),
        "release",
        "cut a release",
    );
    let found = discover_commands(&w.sources());
    let listed: Vec<(&str, String)> = found
        .items
        .iter()
        .map(|c| (c.name.as_str(), c.origin_label()))
        .collect();
    assert_eq!(
        listed,
        [
            ("git:commit", "project".to_string()),
            ("review", "project, shadows user's".to_string()),
            ("fix", "project".to_string()),
            ("release", "project skill".to_string()),
            ("mine", "user".to_string()),
        ]
    );
    let review = &found.items[1];
    assert_eq!(review.description, "review the diff");
    assert_eq!(review.argument_hint, "[FILE] [FOCUS]");
    assert_eq!(found.items[0].description, "Write a commit message");
    assert!(
        found
            .warnings
            .iter()
            .any(|m| m.contains("/undo") && m.contains("built-in")),
        "{:?}",
        found.warnings
    );
    let Source::File { body, .. } = &review.source else {
        panic!()
    };
    assert_eq!(
        expand(body, "src/main.rs \"error handling\""),
        "Review src/main.rs for error handling. All: src/main.rs \"error handling\""
    );
}

#[test]
fn arguments_expand_and_are_never_lost() {
    assert_eq!(expand("a $1 b $2 c $9", "x 'y z'"), "a x b y z c ");
    assert_eq!(expand("cost $5 or $$ or $X", ""), "cost  or $$ or $X");
    assert_eq!(
        expand("no placeholders", "keep me"),
        "no placeholders\n\nArguments: keep me"
    );
    assert_eq!(words("  a \"b c\" ''  d"), ["a", "b c", "", "d"]);
    assert_eq!(
        parse_invocation("/git:commit  now please"),
        Some(("git:commit", "now please"))
    );
    assert_eq!(parse_invocation("/usr/bin/env is broken"), None);
    assert_eq!(parse_invocation("hello /x"), None);
}
