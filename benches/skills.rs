//! Skill figures, run by hand: `cargo bench --bench skills`.
//! Discovery over a repository with 200 skills in nested folders (10 groups × 4 teams × 5
//! skills, each with a script beside its SKILL.md), as a median of repeated runs; the same
//! for the command set (command files plus the skills). Then the size of the first request's
//! fixed part (system prompt and tools array) with 50 skills listed, against none.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use cairn::agent::prompt::{WorkspaceFacts, system_prompt};
use cairn::bus::Mode;
use cairn::session_log::ToldState;
use cairn::skills::{Sources, commands, discover_skills, listing};

const RUNS: usize = 15;

fn write_skill(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: \"How the team does {name}: the steps, the checks and who to tell when it is done.\"\nargument-hint: \"[TARGET]\"\n---\n# {name}\n\n1. Read the notes.\n2. Run scripts/run.sh $ARGUMENTS.\n3. Report.\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("scripts/run.sh"), "#!/bin/sh\necho run\n").unwrap();
}

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let mut count = 0;
    for group in 0..10 {
        for team in 0..4 {
            for i in 0..5 {
                let name = format!("g{group}-t{team}-skill-{i}");
                let place = if count % 2 == 0 { ".cairn" } else { ".agents" };
                let dir = root
                    .join(place)
                    .join("skills")
                    .join(format!("group-{group}"))
                    .join(format!("team-{team}"))
                    .join(&name);
                write_skill(&dir, &name);
                count += 1;
            }
        }
    }
    for i in 0..20 {
        let path = root.join(format!(".cairn/commands/ns{}/cmd-{i}.md", i % 4));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "---\ndescription: a command\n---\nDo $ARGUMENTS\n").unwrap();
    }
    let sources = Sources::workspace_only(&root);
    let warnings = discover_skills(&sources).warnings;
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut found = 0;
    let time = median(RUNS, || found = discover_skills(&sources).items.len());
    println!("discover_skills over {count} skills in nested dirs: {found} found, median {time:?}");
    let mut commands_found = 0;
    let time = median(RUNS, || {
        commands_found = commands::discover_commands(&sources).items.len()
    });
    println!(
        "discover_commands (20 command files + the skills): {commands_found}, median {time:?}"
    );

    let skills = discover_skills(&sources).items;
    let fifty = &skills[..50];
    let registry = cairn::tools::Registry::with_tools(cairn::tools::registry::standard_tools());
    let tools_bytes = serde_json::to_string(registry.specs()).unwrap().len();
    let told = ToldState {
        mode: Mode::AutoEdit,
        git_branch: Some("main".into()),
    };
    let facts = WorkspaceFacts::gather(&root);
    let bare = system_prompt(&facts, &told).len();
    for window in [32_000u64, 128_000] {
        let list = listing::build(fifty, listing::budget_for(window));
        let with = system_prompt(&facts.clone().with_skills(&list.text), &told).len();
        let shortened = list
            .entries
            .iter()
            .filter(|e| e.status == listing::Status::Shortened)
            .count();
        let omitted = list
            .entries
            .iter()
            .filter(|e| e.status == listing::Status::Omitted)
            .count();
        println!(
            "first request, 50 skills, {window}-token window (budget {} chars): list {} chars ({shortened} shortened, {omitted} omitted); system prompt {with} bytes (without skills {bare}); tools array {tools_bytes} bytes; fixed part {} bytes",
            list.budget,
            list.text.chars().count(),
            with + tools_bytes
        );
    }
    let time = median(RUNS, || {
        let _ = listing::build(&skills, listing::budget_for(128_000));
    });
    println!(
        "listing::build over all {} skills: median {time:?}",
        skills.len()
    );
}
