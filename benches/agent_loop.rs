//! The agent loop over the S1 mix (40 tool steps: 10 reads, 10 edits, 10 commands, 5 listings,
//! 5 greps, one per reply) against the scripted mock, in this process, with checkpoints on and
//! off (`[checkpoints] enabled`): the median time per step of each and their ratio, and then
//! the programs each configuration starts (counted by a seccomp filter, see
//! `cairn::testing::ExecCounter`), by name. Two kinds of session are timed: the first in a
//! workspace (a fresh workspace and data dir each time: the checkpoint store is created and the
//! whole tree walked and written), and a later one in the same workspace (the store is there;
//! the files the session before changed are put back first, as `git checkout` would).
//! Run with `cargo bench --bench agent_loop`; figures are printed, nothing is asserted.
//! Commands run unsandboxed here (the sandbox's cost is the same on and off, and a process
//! under the counting filter cannot install the sandbox's own supervised filter). The bench is
//! the commands' subreaper, as cairn is.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use cairn::bus::ConversationEvent;
use cairn::process;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use cairn::agent::{Agent, AgentSettings, CheckpointSettings, ContextSettings, Engine, StartFrom};
use cairn::bus::{self, AgentEvent, Mode, UserCommand};
use cairn::checkpoint::phases;

use cairn::llm::ProviderSettings;
use cairn::llm::client::HttpModel;
use cairn::permissions::policy::{PolicyGate, PolicySettings};
use cairn::permissions::rules::RuleSet;
use cairn::testing::{ExecCounter, MockLlm, Script};
use cairn::tools::registry::standard_tools;
use cairn::tools::{Registry, ToolEnv};

/// Timed sessions per configuration (alternating on and off): the machine's noise moves one
/// session by a third, a median of 15 by a few percent.
const REPS: usize = 15;
const STEPS: usize = 40;
/// The workspace: 20 directories of 25 files.
const DIRS: usize = 20;
const FILES: usize = 25;

fn main() {
    // As cairn does at start-up: orphans of commands come to this process, and the end of a
    // command looks for what it left among this process's descendants only.
    cairn::process::reaper::become_subreaper().unwrap();
    println!(
        "agent loop, S1 mix ({STEPS} steps), workspace of {} files; median of {} sessions",
        DIRS * FILES,
        reps()
    );
    phases_of_one_session();
    if let Ok(only) = std::env::var("CAIRN_BENCH_ONLY") {
        // For a profiler: many sessions of one configuration (`CAIRN_BENCH_LATER`: later
        // sessions in one workspace).
        let runtime = runtime();
        let place = std::env::var_os("CAIRN_BENCH_LATER").map(|_| Place::new());
        let times: Vec<_> = (0..reps())
            .map(|_| runtime.block_on(session_in(only == "on", place.as_ref())))
            .collect();
        let (wall, cpu): (Vec<_>, Vec<_>) = times.into_iter().unzip();
        println!(
            "  checkpoints {only}: {:.2?} wall, {:.2?} CPU per step",
            median(wall) / STEPS as u32,
            median(cpu) / STEPS as u32
        );
        USED.lock().unwrap().clear();
        return;
    }
    let runtime = runtime();
    // One of each first, unmeasured: page cache, connection pools, the bash binary.
    runtime.block_on(session(true));
    runtime.block_on(session(false));
    println!("  the first session in a workspace (the store created, the whole tree written):");
    report(compare(&runtime, None));
    let place = Place::new();
    println!("  a later session in the same workspace (its store there):");
    report(compare(&runtime, Some(&place)));
    if std::env::var_os("CAIRN_BENCH_NO_COUNT").is_none() {
        count_programs();
    }
    USED.lock().unwrap().clear();
}

/// The medians (wall, CPU) with checkpoints on and off, and the median of the ratios of the
/// pairs (wall, CPU): a session on and the session off right after it share the machine's
/// moment, so their ratio is steadier than the ratio of two medians.
type Medians = ((Duration, Duration), (Duration, Duration), (f64, f64));

/// `reps()` sessions with checkpoints on and as many off, alternating.
fn compare(runtime: &tokio::runtime::Runtime, place: Option<&Place>) -> Medians {
    let mut on = Vec::new();
    let mut off = Vec::new();
    for _ in 0..reps() {
        on.push(runtime.block_on(session_in(true, place)));
        off.push(runtime.block_on(session_in(false, place)));
    }
    let ratio = |pick: fn(&(Duration, Duration)) -> Duration| {
        let mut ratios: Vec<f64> = on
            .iter()
            .zip(&off)
            .map(|(a, b)| pick(a).as_secs_f64() / pick(b).as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios[ratios.len() / 2]
    };
    let paired = (ratio(|t| t.0), ratio(|t| t.1));
    let (on_wall, on_cpu): (Vec<_>, Vec<_>) = on.into_iter().unzip();
    let (off_wall, off_cpu): (Vec<_>, Vec<_>) = off.into_iter().unzip();
    (
        (median(on_wall), median(on_cpu)),
        (median(off_wall), median(off_cpu)),
        paired,
    )
}

fn report(((on, on_cpu), (off, off_cpu), (paired_wall, paired_cpu)): Medians) {
    let per_step = |d: Duration| d / STEPS as u32;
    println!(
        "  checkpoints off: {:>7.2?} per step ({:.0?} a session); CPU {:>7.2?} per step",
        per_step(off),
        off,
        per_step(off_cpu)
    );
    println!(
        "  checkpoints on:  {:>7.2?} per step ({:.0?} a session); CPU {:>7.2?} per step",
        per_step(on),
        on,
        per_step(on_cpu)
    );
    println!(
        "  on/off: {:.2}x wall, {:.2}x CPU (target within 1.2x; absolute < 6 ms a step)",
        on.as_secs_f64() / off.as_secs_f64(),
        on_cpu.as_secs_f64() / off_cpu.as_secs_f64()
    );
    println!(
        "  on/off of each pair (a session on, the next off), median: {paired_wall:.2}x wall, {paired_cpu:.2}x CPU"
    );
    println!(
        "  cost of checkpoints: {:.2?} per step wall, {:.2?} CPU",
        per_step(on.saturating_sub(off)),
        per_step(on_cpu.saturating_sub(off_cpu))
    );
}

fn count_programs() {
    // From here on every program this process starts is counted: a new runtime, whose
    // threads are all made under the filter.
    let counter = ExecCounter::install_on_this_thread().unwrap();
    let runtime = runtime();
    for enabled in [true, false] {
        let before = counter.count();
        runtime.block_on(session(enabled));
        let programs = &counter.programs()[before..];
        let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
        for program in programs {
            let name = Path::new(program)
                .file_name()
                .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned());
            *by_name.entry(name).or_default() += 1;
        }
        println!(
            "  programs started, checkpoints {}: {} in {STEPS} steps ({:.2} a step): {by_name:?}",
            if enabled { "on" } else { "off" },
            programs.len(),
            programs.len() as f64 / STEPS as f64
        );
    }
}

/// Where the time of one session with checkpoints goes, by phase (wall and thread CPU time).
fn phases_of_one_session() {
    let runtime = runtime();
    runtime.block_on(session(true));
    phases::reset();
    let (wall, cpu) = runtime.block_on(session(true));
    println!(
        "  one session with checkpoints, by phase ({:.1?} wall, {:.1?} CPU in all, {STEPS} steps):",
        wall, cpu
    );
    for t in phases::totals() {
        println!(
            "    {:<44} {:>4}x {:>9.2?} wall {:>9.2?} CPU",
            t.phase.name(),
            t.count,
            t.wall,
            t.cpu
        );
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Sessions per configuration: `CAIRN_BENCH_REPS` (for profiling: many sessions of one kind
/// with `CAIRN_BENCH_ONLY=on|off`), else `REPS`.
fn reps() -> usize {
    std::env::var("CAIRN_BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(REPS)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The S1 mix: per block, a read, an edit of the file read, a command, and a listing or a
/// grep. Half the commands change files, half only look.
fn script() -> Vec<Script> {
    let mut steps = Vec::new();
    for i in 0..STEPS / 4 {
        let path = format!("src/d{i:02}/f{i:02}.rs");
        steps.push(Script::tool_call(
            &format!("r{i}"),
            "read_file",
            json!({"path": path}),
        ));
        steps.push(Script::tool_call(
            &format!("e{i}"),
            "edit_file",
            json!({"path": path, "old_string": format!("fn item_{i}_{i}_3()"), "new_string": format!("fn edited_{i}()")}),
        ));
        let command = match i % 5 {
            0 => format!("wc -l {path}"),
            1 => format!("echo step {i} >> notes.txt"),
            2 => "ls src".to_string(),
            3 => format!("touch made_{i}.txt"),
            _ => format!("sed -i 's/edited/done/' {path}"),
        };
        steps.push(Script::tool_call(
            &format!("b{i}"),
            "bash",
            json!({"command": command}),
        ));
        if i % 2 == 0 {
            steps.push(Script::tool_call(
                &format!("l{i}"),
                "list_dir",
                json!({"path": format!("src/d{i:02}")}),
            ));
        } else {
            steps.push(Script::tool_call(
                &format!("g{i}"),
                "grep",
                json!({"pattern": format!("item_{i}_1"), "path": "src"}),
            ));
        }
    }
    steps.push(Script::text("done"));
    steps
}

/// Writes the workspace's 500 files, or puts back those that differ (and removes what a
/// session made) in a workspace written before.
fn workspace(root: &Path) {
    for d in 0..DIRS {
        let dir = root.join(format!("src/d{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES {
            let mut text = String::new();
            for line in 0..30 {
                text.push_str(&format!("fn item_{d}_{f}_{line}() -> u64 {{ {line} }}\n"));
            }
            let path = dir.join(format!("f{f:02}.rs"));
            if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
                std::fs::write(path, text).unwrap();
            }
        }
    }
    for entry in std::fs::read_dir(root).unwrap().flatten() {
        if entry.file_type().unwrap().is_file() {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
}

/// A workspace and a data dir kept from one session to the next.
struct Place {
    workspace: tempfile::TempDir,
    data: tempfile::TempDir,
}

/// Where the workspaces and data dirs are made: cargo's scratch directory for benches
/// (`CAIRN_BENCH_DIR` to choose another). Not the system's temp directory: on the 2-core
/// machine this bench was written on, every file created directly beneath `/tmp`'s busy
/// directory cost 70-400 µs (ext4 scanning recently freed inodes), 8-10 µs anywhere else on
/// the same disk, which would time that directory more than cairn.
fn scratch() -> std::path::PathBuf {
    std::env::var_os("CAIRN_BENCH_DIR").map_or_else(
        || std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        std::path::PathBuf::from,
    )
}

impl Place {
    fn new() -> Self {
        let dir = scratch();
        std::fs::create_dir_all(&dir).unwrap();
        let place = Self {
            workspace: tempfile::tempdir_in(&dir).unwrap(),
            data: tempfile::tempdir_in(&dir).unwrap(),
        };
        workspace(place.workspace.path());
        place
    }
}

/// One session of the mix in a fresh workspace; the wall and CPU time from the prompt to the
/// end of the request.
async fn session(checkpoints: bool) -> (Duration, Duration) {
    session_in(checkpoints, None).await
}

/// Fresh workspaces and data dirs, kept to the end of the run: removing thousands of files
/// between two sessions makes ext4 slower to create the next ones (it skips inodes freed in
/// the last minutes one by one, on this machine's journal-less ext4), which would time the
/// bench's own clean-up. The clean-up at the end of a run still slows a run started right after.
static USED: std::sync::Mutex<Vec<Place>> = std::sync::Mutex::new(Vec::new());

/// One session of the mix in `place` (put back as it was), or in a fresh workspace.
async fn session_in(checkpoints: bool, place: Option<&Place>) -> (Duration, Duration) {
    let fresh = place.is_none().then(Place::new);
    let timed = run_session(
        checkpoints,
        place.unwrap_or_else(|| fresh.as_ref().unwrap()),
    )
    .await;
    USED.lock().unwrap().extend(fresh);
    timed
}

async fn run_session(checkpoints: bool, place: &Place) -> (Duration, Duration) {
    workspace(place.workspace.path());
    let (ws, data) = (&place.workspace, &place.data);
    let llm = MockLlm::start(script()).await;
    // The mock keeps no bodies (parsing and keeping 40 ever larger ones is the mock's cost,
    // not the client's).
    llm.forget_bodies();
    let workspace = std::fs::canonicalize(ws.path()).unwrap();
    let tools = Arc::new(ToolEnv::new(
        workspace.clone(),
        &cairn::dirs::Dirs::from_env(),
        process::Settings::default(),
    ));
    let engine = Engine {
        model: Arc::new(HttpModel::new(provider(&llm.url())).unwrap()),
        registry: Arc::new(Registry::with_tools(standard_tools())),
        tool_env: tools,
        gate: Arc::new(PolicyGate::new(PolicySettings {
            rules: RuleSet::default(),
            workspace: workspace.clone(),
            sandbox: None,
            places: cairn::permissions::classify::Places::from_env(),
        })),
        mcp: None,
        subagents: None,
    };
    let settings = AgentSettings {
        skills: cairn::agent::SkillSettings::workspace_only(&workspace),
        workspace,
        provider: "custom".into(),
        mode: Mode::Never,
        max_steps: 100,
        context_window: 1_000_000,
        context: ContextSettings::default(),
        interactive: false,
        dirs: cairn::dirs::Dirs::for_sessions(&data.path().join("sessions")),
        vision: None,
        checkpoints: CheckpointSettings {
            enabled: checkpoints,
            ..CheckpointSettings::default()
        },
        untrusted_rules: None,
        hooks: cairn::hooks::Hooks::none(),
        child: None,
    };
    let (ends, mut front) = bus::channel();
    let agent = Agent::start(settings, engine, StartFrom::New, ends.events).unwrap();
    let task = tokio::spawn(agent.run(ends.commands));
    let (start, cpu) = (Instant::now(), phases::process_cpu());
    front
        .commands
        .send(UserCommand::Submit {
            text: "work".into(),
            attach: Vec::new(),
        })
        .await
        .unwrap();
    let mut errors = 0;
    loop {
        match front.events.recv().await.unwrap() {
            AgentEvent::Conversation(ConversationEvent::RequestEnded { .. }) => break,
            AgentEvent::Tool(bus::ToolEvent::Finished { result, name, .. }) if result.is_error => {
                errors += 1;
                println!("  ! {name}: {}", result.text);
            }
            _ => {}
        }
    }
    let wall = start.elapsed();
    assert_eq!(errors, 0, "every step of the mix must succeed");
    let _ = front.commands.send(UserCommand::Shutdown).await;
    task.await.unwrap();
    // CPU to the agent's end: work it left running in the background counts too.
    (wall, phases::process_cpu() - cpu)
}

fn provider(url: &str) -> ProviderSettings {
    ProviderSettings {
        provider: "custom".into(),
        base_url: url.to_string(),
        api_key: None,
        model: "mock-model".into(),
        max_retries: 0,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(50),
        idle_timeout: Duration::from_secs(30),
        max_tokens: None,
        temperature: None,
        limits: Default::default(),
        wire: Default::default(),
    }
}
