//! The families that ran a payload while judged read-only (issue 16, item 1 and 4), each
//! tested by the class of the trick rather than the one spelling that was found: other
//! wrappers, other contexts, other builtins, other ways of pointing git elsewhere. Every
//! hostile row must ask in the default mode (at least mutating); the read-only rows beside
//! them show the everyday spellings of the same commands still run unasked.
#![allow(clippy::unwrap_used)]

use super::tests::Fixture;
use super::*;

use Class::{Dangerous as D, Mutating as M, ReadOnly as R};

/// `xargs` and `parallel` put their input into the command they run.
const FAN_OUT: &[(&str, Class)] = &[
    ("xargs -a cmd.txt -I{} bash -c {}", D),
    ("cat f | xargs -I{} sh -c {}", D),
    ("xargs -I % sh -c %", D),
    ("xargs -i sh -c {}", D),
    ("xargs --replace=@ dash -c @", D),
    ("xargs -0 -I{} zsh -c 'echo {}'", D),
    ("xargs -I{} sh -c 'cat {}'", D),
    ("xargs sh -c", D),
    ("xargs bash", D),
    ("xargs -n1 sh", D),
    ("xargs python3 -c", M),
    ("xargs perl -e", M),
    ("xargs node -e", M),
    ("xargs python3", D),
    ("xargs env", D),
    ("xargs -0 env -i", D),
    ("xargs timeout 5", D),
    ("xargs nice", D),
    ("xargs nohup", D),
    ("xargs command", D),
    ("xargs exec", D),
    ("xargs xargs", D),
    ("xargs -I{} {}", D),
    ("xargs -I{} ./{}", D),
    ("xargs find .", M),
    ("xargs git log", M),
    ("xargs rg foo", M),
    ("xargs sed", M),
    ("xargs awk", M),
    ("xargs -tP4 eval", D),
    ("parallel sh -c {}", D),
    ("parallel bash -c", D),
    ("parallel ::: 'rm -rf /'", M),
    ("ls | parallel {}", D),
    ("parallel -j 0 sleep ::: 1 2", M),
    ("seq 3000 | xargs -P 0 -n 1 sleep 4", M),
    ("seq 3000 | xargs -P0 -n1 sleep 4", M),
    ("seq 3000 | xargs -0P0 sleep", M),
    ("seq 3000 | xargs --max-procs=0 sleep", M),
    ("seq 3000 | xargs --max-procs 500 sleep", M),
    ("seq 3000 | xargs --max-p=100 sleep", M),
    ("seq 3000 | xargs -P 64 sleep", M),
    ("seq 3000 | xargs -P \"$n\" sleep", M),
    // Plain fan-out stays read-only.
    ("find . -name '*.rs' | xargs grep -n unwrap", R),
    ("xargs cat < list", R),
    ("xargs -0 wc -l", R),
    ("xargs -P 4 -n 1 head -1", R),
    ("xargs sh -c 'echo \"$@\"' _", R),
    ("xargs -I{} cat {}", R),
    ("xargs", R),
];

/// Arithmetic on run-time data, in every context bash evaluates it.
const ARITHMETIC: &[(&str, Class)] = &[
    ("echo $((y))", M),
    ("echo $[y]", M),
    ("((y))", M),
    ("(( x = y + 1 ))", M),
    ("let y", M),
    ("let 'x=y'", M),
    ("[[ x -eq y ]]", M),
    ("[[ $v -lt 3 ]]", M),
    ("for ((i=0; i<y; i++)); do :; done", M),
    ("echo ${!x}", M),
    ("echo \"${!x}\"", M),
    ("echo ${!x:-fallback}", M),
    ("echo ${s:y:1}", M),
    ("echo ${s:0:y}", M),
    ("echo ${s:y}", M),
    ("echo ${s: y}", M),
    ("echo \"${s:(y)}\"", M),
    ("echo ${@:y}", M),
    ("echo ${@:y:2}", M),
    ("echo ${*:y}", M),
    ("echo ${a[@]:y}", M),
    ("echo ${a[@]:1:y}", M),
    ("echo ${a[y]}", M),
    ("echo \"${a[y]}\"", M),
    ("echo ${#a[y]}", M),
    ("echo ${!a[y]}", M),
    ("echo ${a[$i]}", M),
    ("echo ${a[i+1]:-none}", M),
    ("x=${a[y]}", M),
    ("a[y]=1", M),
    ("a[$i]+=x", M),
    ("a=([y]=1)", M),
    ("a+=([$i]=1 [2]=b)", M),
    ("declare -a a=([y]=1)", M),
    ("typeset -i x=y", M),
    ("declare -i x=$y", M),
    ("local -i x=y", M),
    ("declare -ai x=y", M),
    ("declare -i n; n=$v", M),
    ("declare -i n; read n", M),
    ("declare -i n; printf -v n %s \"$v\"", M),
    ("y='b[$(id)]'; echo ${a[y]}", D),
    ("y='b[$(id)]'; echo ${s:y:1}", D),
    ("y='b[$(id)]'; echo ${!y}", D),
    ("y='b[$(id)]'; echo $((y))", D),
    ("y='b[$(id)]'; typeset -i n=y", D),
    ("y='b[`id`]'; [[ y -gt 0 ]]", D),
    // Every other place bash evaluates a subscript or an arithmetic expression (issue 32):
    // the C-style for header's three parts, `$[…]`, assignments inside `((…))` and the names
    // builtins take (`[[ -v ]]`, `test -v`, `unset`, `declare`, `read`, `printf -v`, …).
    ("y='b[$(id)]'; for ((i=y; i<1; i++)); do :; done", D),
    ("y='b[$(id)]'; for ((i=0; y; i++)); do :; done", D),
    ("y='b[$(id)]'; for ((i=0; i<1; i=y)); do :; done", D),
    ("for ((i=y; i<1; i++)); do :; done", M),
    ("y='b[$(id)]'; echo $[y]", D),
    ("y='b[$(id)]'; echo $[1+y]", D),
    ("y='b[$(id)]'; ((i=y))", D),
    ("y='b[$(id)]'; echo $((i = y))", D),
    ("y='b[$(id)]'; ((i+=y))", D),
    ("y='b[$(id)]'; ((a[i]=y))", D),
    ("y='b[$(id)]'; [[ -v a[y] ]]", D),
    ("y='b[$(id)]'; [[ -v 'a[y]' ]]", D),
    ("y='b[$(id)]'; test -v 'a[y]'", D),
    ("y='b[$(id)]'; [ -v \"a[y]\" ]", D),
    ("y='b[$(id)]'; unset a[y]", D),
    ("y='b[$(id)]'; unset -v 'a[y+1]'", D),
    ("y='b[$(id)]'; declare 'a[y]=1'", D),
    ("y='b[$(id)]'; declare 'a[y]+=1'", D),
    ("y='b[$(id)]'; export 'a[y]'", D),
    ("y='b[$(id)]'; local 'a[y]'", D),
    ("y='b[$(id)]'; readonly 'a[y]'", D),
    ("y='b[$(id)]'; read 'a[y]' < f", D),
    ("y='b[$(id)]'; printf -v 'a[y]' x", D),
    ("y='b[$(id)]'; mapfile -t 'a[y]' < f", D),
    ("unset 'a[$(id)]'", D),
    ("unset \"a[`id`]\"", D),
    ("[[ -v 'a[$(id)]' ]]", D),
    ("test -v 'a[$(id)]'", D),
    ("declare 'a[$(id)]=1'", D),
    ("[[ -v a[y] ]]", M),
    ("test -v 'a[y]'", M),
    ("unset 'a[y]'", M),
    ("declare -A m; y='b[$(id)]'; unset 'm[y]'", R),
    // Numbers and plain literals stay read-only.
    ("echo $((1 + 2))", R),
    ("i=3; echo $((i * 2))", R),
    ("echo ${a[0]} ${a[-1]} ${a[@]} ${#a[@]} ${!a[@]}", R),
    ("echo ${s:0:7} ${s: -1} ${@:2}", R),
    ("echo ${x:-default} ${x:=y} ${x:+set}", R),
    ("declare -A m; echo ${m[key]}", R),
    ("for ((i=0; i<3; i++)); do echo $i; done", R),
    ("for ((;;)); do break; done", R),
    ("i=0; ((i=i+1))", R),
    ("echo $[RANDOM % 3]", R),
    ("[[ -v a[0] ]]", R),
    ("test -v 'a[1]'", R),
    ("x=1; [[ -v a[x] ]]", R),
    ("for i in 1 2 3; do echo ${a[i]}; done", R),
    ("echo ${!prefix*} ${!prefix@}", R),
];

/// Loader and start-up variables assigned by builtins and indirection.
const LOADER: &[(&str, Class)] = &[
    ("read BASH_ENV <<< ./x.sh; export BASH_ENV; bash -c true", M),
    ("read -r ENV < f", M),
    ("IFS= read -r -d '' LD_PRELOAD < f", M),
    ("read -a PROMPT_COMMAND <<< x", M),
    ("read -ra PS4 <<< x", M),
    ("read x PS4 <<< 'a b'", M),
    ("printf -v BASH_ENV %s ./x.sh", M),
    ("printf -vLD_PRELOAD %s ./x.so", M),
    ("mapfile LD_PRELOAD < f", M),
    ("mapfile -t PROMPT_COMMAND < f", M),
    ("readarray -t BASH_ENV < f", M),
    ("mapfile -C 'rm -rf ~' -c 1 lines < f", D),
    ("getopts a: GIT_DIR", M),
    ("declare -n r=BASH_ENV; r=./x.sh", M),
    ("local -n r=LD_PRELOAD", M),
    ("typeset -n r=PS4", M),
    ("declare -n r; r=BASH_ENV; r=./x.sh", M),
    ("declare -n r=$name", M),
    ("declare -n r=x; declare -n x=BASH_ENV; r=./x.sh", M),
    ("export $n=./x.sh", M),
    ("declare \"$n=./x.sh\"", M),
    ("declare -x BASH_ENV", M),
    ("export LD_PRELOAD", M),
    ("printf -v \"$n\" %s x", M),
    ("read \"$n\" < f", M),
    ("read 'a[$(id)]' < f", M),
    ("GIT_COMMON_DIR=evil git log", M),
    ("GIT_OBJECT_DIRECTORY=x git log", M),
    ("env GIT_CEILING_DIRECTORIES=/ git log", M),
    // Ordinary variables stay read-only.
    ("read -r line < f", R),
    ("while read -r a b; do echo \"$a\"; done < f", R),
    ("mapfile -t lines < f", R),
    ("printf -v out '%s' x", R),
    ("printf '%s\\n' -v", R),
    ("declare -n r=counter", R),
    ("export FOO", R),
    ("GIT_PAGER=cat git log", M),
];

/// Sizes that load the machine.
const LOAD: &[(&str, Class)] = &[
    ("echo {1..3000000}", M),
    ("printf '%s\\n' {1..3000000}", M),
    ("echo {1..2000}{1..2000}", M),
    ("echo x{1..1000}y{1..1000}", M),
    ("for i in {1..10000000}; do :; done", M),
    ("echo {0..99999999..2}", M),
    ("sort -S 10G f", M),
    ("sort -nS 90% f", M),
    ("sort --buffer-size=1G f", M),
    ("sort --buf 1G f", M),
    ("echo {1..100} {a..z}", R),
    ("seq 3000000", R),
    ("sort -n f", R),
    ("sort -k2 -t, f", R),
];

/// `ps` prints environments only with BSD `e`.
const PS: &[(&str, Class)] = &[
    ("ps e", D),
    ("ps axe", D),
    ("ps auxeww", D),
    ("ps -auxe", D),
    ("ps -axe", D),
    ("ps ewwp 1", D),
    ("ps -p 1 e", D),
    ("ps $opts", D),
    ("watch ps e", D),
    ("ps -e", R),
    ("ps -ef", R),
    ("ps aux", R),
    ("ps -eo pid,args", R),
    ("ps -u root", R),
];

fn misjudged(ws: &Fixture, table: &[(&str, Class)]) -> Vec<String> {
    table
        .iter()
        .filter_map(|&(command, least)| {
            let got = ws.classify(command);
            let ok = if least == R {
                got.class == R
            } else {
                got.class >= least
            };
            (!ok).then(|| {
                format!(
                    "{command:?}: want {least}, got {} ({})",
                    got.class, got.reason
                )
            })
        })
        .collect()
}

fn assert_table(table: &[(&str, Class)]) {
    let ws = Fixture::new();
    let wrong = misjudged(&ws, table);
    assert!(
        wrong.is_empty(),
        "{} misjudged:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn xargs_and_parallel_judge_their_input_as_run_time_words() {
    assert_table(FAN_OUT);
}

#[test]
fn every_arithmetic_context_on_run_time_data_asks() {
    assert_table(ARITHMETIC);
}

#[test]
fn loader_variables_assigned_by_builtins_count_like_literal_ones() {
    assert_table(LOADER);
}

#[test]
fn huge_expansions_and_buffers_ask() {
    assert_table(LOAD);
}

#[test]
fn ps_asks_for_environments_only() {
    assert_table(PS);
}

/// A workspace with its own repository, a bare repository the model wrote (`evil.git`, with
/// a `core.fsmonitor`), a nested one (`vendor/lib/.git`) and plain directories.
fn with_repositories() -> Fixture {
    let ws = Fixture::new();
    let root = ws.path();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for bare in ["evil.git", "sub/other"] {
        let dir = root.join(bare);
        std::fs::create_dir_all(dir.join("objects")).unwrap();
        std::fs::create_dir_all(dir.join("refs")).unwrap();
        std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(dir.join("config"), "[core]\n\tfsmonitor = ./payload\n").unwrap();
    }
    std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
    std::fs::create_dir_all(root.join("vendor/lib/src")).unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    ws
}

#[test]
fn git_pointed_at_another_repository_asks() {
    let ws = with_repositories();
    let hostile: &[(&str, Class)] = &[
        ("git --git-dir=evil.git status", M),
        ("git --git-dir evil.git log", M),
        ("git --git-dir=./evil.git/ diff", M),
        ("git -C evil.git status", M),
        ("git -C sub/other log", M),
        ("git -C sub -C other log", M),
        ("git -C src/../evil.git status", M),
        ("git --bare status", M),
        ("git --bare -C src log", M),
        ("git --work-tree=src status", M),
        ("git --work-tree /tmp status", M),
        ("cd evil.git && git status", M),
        ("cd evil.git; git log --oneline", M),
        ("pushd evil.git && git status", M),
        ("cd sub && cd other && git status", M),
        ("(cd evil.git && git status)", M),
        ("cd vendor/lib && git status", M),
        ("cd vendor/lib/src && git diff", M),
        ("git -C vendor/lib log", M),
        ("GIT_DIR=evil.git git status", M),
        ("GIT_WORK_TREE=src git status", M),
        ("export GIT_DIR=evil.git; git log", M),
        ("env GIT_DIR=evil.git git status", M),
        ("find . -name '*.git' -execdir git status \\;", M),
        ("xargs -I{} git -C {} status", M),
        ("git -C \"$d\" status", M),
        ("cd \"$d\" && git status", M),
        ("git -C not-there-yet status", M),
        ("cd ~ && git status", M),
        ("git -C /tmp status", M),
    ];
    let readonly: &[(&str, Class)] = &[
        ("git status", R),
        ("git -C . status", R),
        ("git -C src log", R),
        ("git -C src/deep diff", R),
        ("cd src && git log -1", R),
        ("cd src/deep && git status && cd ../.. && git diff", R),
        ("git --git-dir=.git log", R),
        ("git --no-pager log --oneline", R),
        ("git --work-tree=. status", R),
    ];
    let mut wrong = misjudged(&ws, hostile);
    wrong.extend(misjudged(&ws, readonly));
    assert!(
        wrong.is_empty(),
        "{} misjudged:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn a_workspace_made_into_a_bare_repository_is_not_trusted() {
    let ws = Fixture::new();
    let root = ws.path();
    // No `.git`: git would take the workspace itself as a bare repository.
    std::fs::create_dir_all(root.join("objects")).unwrap();
    std::fs::create_dir_all(root.join("refs")).unwrap();
    std::fs::write(root.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join("config"), "[core]\n\tpager = ./payload\n").unwrap();
    let got = ws.classify("git log");
    assert!(got.class >= M, "{got:?}");
}
