//! Answering dialogs through real supervisors: `hm approve`, `hm deny`,
//! `[[automation]]` rules and the ACT request, against a stand-in for
//! Codex CLI that draws its command approval and writes down the keys it
//! gets.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Raw, Sandbox, stderr, stdout};
use heimdall::protocol::{self, ClientType, ErrorCode, ServerType};

/// A stand-in for Codex CLI 0.169 at its command approval: the dialog in
/// Codex's words and layout (`tests/corpus/README.md`) about command `$2`,
/// then the bytes of the first keys pressed, as hex, into file `$1`; with
/// `$3`, the bytes of any keys pressed in the 2 s after those into
/// `$1.more`. Named `codex`, so that hm takes it for Codex.
const FAKE_CODEX: &str = r#"#!/bin/bash
# Codex's own `-c key=value` overrides (hm adds its notify hook) come first.
while [ "$1" = -c ]; do shift 2; done
got=$1 cmd=$2
stty raw -echo
printf '  >_ OpenAI Codex (v0.169.0)\r\n\r\n'
printf '\342\200\242 Running %s\r\n\r\n' "$cmd"
printf '  Would you like to run the following command?\r\n\r\n'
printf '  Environment: local\r\n\r\n'
printf '  $ %s\r\n\r\n' "$cmd"
printf '\342\200\272 1. Yes, proceed (y)\r\n'
printf '  2. Yes, and don'"'"'t ask again for commands that start with `%s` (p)\r\n' "$cmd"
printf '  3. No, and tell Codex what to do differently (esc)\r\n\r\n'
printf '  Press enter to confirm or esc to cancel'
hex() { od -An -tx1 | tr -d ' \n'; }
keys=$(dd bs=64 count=1 2>/dev/null | hex)
printf '%s\n' "$keys" > "$got.tmp" && mv "$got.tmp" "$got"
printf '\r\ngot %s\r\n' "$keys"
if [ -n "$3" ]; then
  IFS= read -rs -d '' -t 2 -n 64 more
  printf '%s' "$more" | hex > "$got.more.tmp" && mv "$got.more.tmp" "$got.more"
fi
exec sleep 60
"#;

/// `script` as program `name` in the sandbox's directory `dir` (a
/// directory per stand-in: hm knows an agent by its program's name).
fn stand_in(sb: &Sandbox, dir: &str, name: &str, script: &str) -> String {
    let bin = sb.path().join(dir);
    std::fs::create_dir_all(&bin).expect("bin dir");
    let path = bin.join(name);
    std::fs::write(&path, script).expect("write the stand-in");
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("make it executable");
    path.to_str().expect("utf-8 path").to_owned()
}

/// The stand-in at `<sandbox>/bin/codex`.
fn fake_codex(sb: &Sandbox) -> String {
    stand_in(sb, "bin", "codex", FAKE_CODEX)
}

/// Session `cx`: the stand-in asking about `cmd`, once it does; and the
/// file it writes the keys it gets into.
fn codex_asking(sb: &Sandbox, cmd: &str) -> (common::Session, PathBuf) {
    let codex = fake_codex(sb);
    let got = got_file(sb, "cx");
    let s = sb.start("cx", &[], &[&codex, got.to_str().expect("utf-8"), cmd]);
    wait_for_permission(sb, "cx");
    (s, got)
}

/// Where the stand-in writes what it got.
fn got_file(sb: &Sandbox, id: &str) -> PathBuf {
    sb.path().join(format!("{id}.got"))
}

/// The keys the stand-in got, as hex, once it has got some.
fn keys_got(file: &Path) -> String {
    common::wait_until("the program to get keys", || file.exists());
    std::fs::read_to_string(file)
        .expect("read")
        .trim()
        .to_owned()
}

fn config(sb: &Sandbox, text: &str) -> String {
    let path = sb.path().join("heimdall.toml");
    std::fs::write(&path, text).expect("write config");
    path.to_str().expect("utf-8 path").to_owned()
}

fn explain_json(sb: &Sandbox, id: &str) -> serde_json::Value {
    let out = sb.cmd(&["explain", id, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Waits until the session says `waiting · permission`.
fn wait_for_permission(sb: &Sandbox, id: &str) {
    common::wait_until("waiting · permission", || {
        let v = sb.status_json(id);
        v["primary"] == "waiting" && v["detail"] == "permission"
    });
}

#[test]
fn approve_sends_the_agents_approve_keys_and_explain_shows_the_answer() {
    let sb = Sandbox::new();
    let (_s, got) = codex_asking(&sb, "cargo test --all");
    let why = explain_json(&sb, "cx");
    assert_eq!(why["dialog"]["rule"], "codex.permission", "{why}");
    assert_eq!(why["dialog"]["subject"], "cargo test --all", "{why}");
    assert_eq!(
        why["dialog"]["answers"],
        serde_json::json!(["approve", "deny", "always"])
    );
    let out = sb.cmd(&["approve", "cx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "approved codex.permission in 'cx': cargo test --all (keys: y)"
    );
    // Exactly Codex's approve key, once.
    assert_eq!(keys_got(&got), "79");
    let text = stdout(&sb.cmd(&["explain", "cx"]));
    assert!(text.contains("answers given, latest last:"), "{text}");
    assert!(
        text.contains("approve codex.permission by hand \"cargo test --all\" · keys y"),
        "{text}"
    );
    assert!(text.contains("│   $ cargo test --all"), "{text}");
    assert!(text.contains("│ › 1. Yes, proceed (y)"), "{text}");
    let log = std::fs::read_to_string(sb.sock_dir.join("cx.log")).expect("log");
    assert!(
        log.contains("answered a dialog") && log.contains("rule=codex.permission"),
        "{log}"
    );
}

/// `hm send` of a script's next task while the agent waits at its
/// dialog would answer it by the text's first letter (`n` of `next`
/// denied Codex's command): refused, saying what answers it, and nothing
/// is typed; `--force` types it all the same.
#[test]
fn send_does_not_type_into_an_agents_dialog_unless_forced() {
    let sb = Sandbox::new();
    let (_s, got) = codex_asking(&sb, "cargo test --all");
    let out = sb.cmd(&["send", "cx", "next", "step", "--enter"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "hm: session 'cx' is waiting at its permission dialog (cargo test --all), which what \
         you type would answer: 'hm approve cx' or 'hm deny cx' answers it; --force types \
         anyway\n"
    );
    let out = sb.cmd(&["send", "cx", "next", "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The first keys the stand-in got: the forced text, none of the
    // refused one.
    assert_eq!(keys_got(&got), "6e657874");
}

/// The stand-in as Codex 0.169 asks: it says it waits (a status record,
/// `state=blocked:app=codex`, which Codex sends unasked) about 0.4 s
/// before it draws the dialog; here once the gate named by `$GATE` opens.
fn fake_codex_saying_first(sb: &Sandbox) -> String {
    let says = "stty raw -echo\ncat \"$GATE\" >/dev/null\n\
                printf '\\033]7501;state=blocked:app=codex:kind=permission\\007'\n\
                sleep 0.4\n";
    let script = FAKE_CODEX.replacen("stty raw -echo\n", says, 1);
    stand_in(sb, "says", "codex", &script)
}

/// `hm wait --state waiting` returns with the dialog a script reads next,
/// and `hm approve` answers it, though the program said it waits before
/// drawing what it asks (Codex's status record comes 0.4 s ahead).
#[test]
fn a_dialog_said_before_it_is_drawn_is_waited_for() {
    let sb = Sandbox::new();
    let gate = common::gate(&sb, "gate");
    let codex = fake_codex_saying_first(&sb);
    let got = got_file(&sb, "cx");
    let at_gate = format!("GATE={}", gate.display());
    let got_arg = got.to_str().expect("utf-8");
    let _s = sb.start(
        "cx",
        &["--classifier", "agent"],
        &["env", &at_gate, &codex, got_arg, "cargo test"],
    );
    // A script waiting for the question, following before it is asked.
    let sock = sb.sock("cx");
    // (The start's own look has gone first: one connection is the wait.)
    common::wait_until("no one to follow", || common::clients(&sock) == 0);
    let mut waiter = sb.background(&[
        "wait",
        "cx",
        "--state",
        "waiting",
        "--json",
        "--timeout",
        "30",
    ]);
    common::wait_until("hm wait to follow", || {
        if let Ok(Some(st)) = waiter.try_wait() {
            panic!("hm wait ended first: {st} {:?}", sb.status_json("cx"));
        }
        common::clients(&sock) == 1
    });
    common::open_gate(&gate);
    // A person (or the script) answering the moment the state says so.
    common::wait_until("waiting", || sb.status_json("cx")["primary"] == "waiting");
    let out = sb.cmd(&["approve", "cx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(keys_got(&got), "79");
    let waited = waiter.wait_with_output().expect("hm wait");
    assert!(waited.status.success(), "{}", stderr(&waited));
    let v: serde_json::Value = serde_json::from_slice(&waited.stdout).expect("json");
    assert_eq!(v["detail"], "permission", "{v}");
    assert_eq!(v["dialog"]["subject"], "cargo test", "{v}");
}

#[test]
fn deny_sends_the_agents_deny_keys_with_json_on_request() {
    let sb = Sandbox::new();
    let (_s, got) = codex_asking(&sb, "rm -rf build");
    let out = sb.cmd(&["deny", "cx", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["action"]["answer"], "deny", "{v}");
    assert_eq!(v["action"]["by"], "hand", "{v}");
    assert_eq!(v["action"]["keys"], serde_json::json!(["Escape"]), "{v}");
    assert_eq!(v["action"]["subject"], "rm -rf build", "{v}");
    assert_eq!(keys_got(&got), "1b");
}

#[test]
fn approve_always_takes_the_dialogs_option_not_to_be_asked_again() {
    let sb = Sandbox::new();
    let (_s, got) = codex_asking(&sb, "cargo fmt");
    let out = sb.cmd(&["approve", "--always", "cx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "always approved codex.permission in 'cx': cargo fmt (keys: p)"
    );
    // `2. Yes, and don't ask again ... (p)`: its key, once.
    assert_eq!(keys_got(&got), "70");
    let text = stdout(&sb.cmd(&["explain", "cx"]));
    assert!(
        text.contains("always codex.permission by hand \"cargo fmt\" · keys p"),
        "{text}"
    );
}

#[test]
fn approve_always_is_refused_where_the_dialog_has_no_such_option() {
    let sb = Sandbox::new();
    // Its second ask at once (nothing to wait for): `1. Yes, proceed` and
    // `3. No`, and no option not to be asked again.
    let (_s, got) = codex_asking_twice(&sb, "make deploy", Path::new("/dev/null"), "make deploy");
    wait_for_permission(&sb, "cx");
    assert_eq!(
        explain_json(&sb, "cx")["dialog"]["answers"],
        serde_json::json!(["approve", "deny"])
    );
    let out = sb.cmd(&["approve", "--always", "cx"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "the dialog has no option not to be asked again (approving answers it this once)"
        ) && !err.contains("matches")
            && err.lines().count() == 1,
        "{err}"
    );
    // Nothing was sent: the first keys the program gets are the next
    // answer's.
    let out = sb.cmd(&["approve", "cx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(keys_got(&got), "79");
}

/// A stand-in for Codex that asks about command `$2`, then, once fifo
/// `$3` is opened, about command `$4` in its place; the first keys it gets
/// after that go into file `$1`, as hex.
const FAKE_CODEX_TWO_ASKS: &str = r#"#!/bin/bash
while [ "$1" = -c ]; do shift 2; done
got=$1
stty raw -echo
ask() {
  printf '\033[2J\033[H  >_ OpenAI Codex (v0.169.0)\r\n\r\n'
  printf '  Would you like to run the following command?\r\n\r\n'
  printf '  $ %s\r\n\r\n' "$1"
  printf '\342\200\272 1. Yes, proceed (y)\r\n'
  printf '  3. No, and tell Codex what to do differently (esc)\r\n\r\n'
  printf '  Press enter to confirm or esc to cancel'
}
ask "$2"
cat "$3" >/dev/null
ask "$4"
keys=$(dd bs=64 count=1 2>/dev/null | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$keys" > "$got.tmp" && mv "$got.tmp" "$got"
exec sleep 60
"#;

/// A stand-in for Claude Code 2.1.330 at its question (AskUserQuestion),
/// in its words and layout (`tests/corpus/claude330_question.cast`); the
/// bytes of the first keys pressed go, as hex, into file `$1`. Named
/// `claude`, so that hm takes it for Claude Code (and gives it its hooks
/// as `--settings FILE`, which it skips).
const FAKE_CLAUDE_QUESTION: &str = r#"#!/bin/bash
while [ "$1" = --settings ]; do shift 2; done
got=$1
stty raw -echo
rule=$(printf '\342\224\200%.0s' $(seq 80))
printf ' Claude Code v2.1.330\r\n\r\n'
printf '\342\235\257 change the greeting, ask me which one\r\n'
printf '%s\r\n' "$rule"
printf ' \342\230\220 Greeting\r\n\r\n'
printf 'Which greeting should hello.py print?\r\n\r\n'
printf '\342\235\257 1. Hello, world\r\n     The classic greeting\r\n'
printf '  2. Hi there\r\n     A casual greeting\r\n'
printf '  3. Type something.\r\n'
printf '%s\r\n' "$rule"
printf '  4. Chat about this\r\n\r\n'
printf 'Enter to select \302\267 \342\206\221/\342\206\223 to navigate \302\267 Esc to cancel'
keys=$(dd bs=64 count=1 2>/dev/null | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$keys" > "$got.tmp" && mv "$got.tmp" "$got"
printf '\033[H\033[2Jgot %s\r\n' "$keys"
exec sleep 60
"#;

/// The stand-in at `<sandbox>/claude-bin/claude`.
pub(crate) fn fake_claude_question(sb: &Sandbox) -> String {
    stand_in(sb, "claude-bin", "claude", FAKE_CLAUDE_QUESTION)
}

/// Session `cc`: the Claude Code stand-in at its question, once it is
/// `waiting · question`; and the file it writes the keys it gets into.
fn claude_asking(sb: &Sandbox) -> (common::Session, PathBuf) {
    let claude = fake_claude_question(sb);
    let got = got_file(sb, "cc");
    let s = sb.start("cc", &[], &[&claude, got.to_str().expect("utf-8")]);
    common::wait_until("waiting · question", || {
        let v = sb.status_json("cc");
        v["primary"] == "waiting" && v["detail"] == "question"
    });
    (s, got)
}

#[test]
fn choose_picks_the_questions_option_by_its_number() {
    let sb = Sandbox::new();
    let (_s, got) = claude_asking(&sb);
    let why = explain_json(&sb, "cc");
    assert_eq!(why["dialog"]["rule"], "claude.question", "{why}");
    assert_eq!(why["dialog"]["answers"], serde_json::json!(["choose"]));
    assert_eq!(why["dialog"]["options"][1]["number"], 2, "{why}");
    assert_eq!(why["dialog"]["options"][1]["label"], "Hi there", "{why}");
    // `hm status` lists them, with the command that picks one.
    let text = stdout(&sb.cmd(&["status", "cc"]));
    assert!(text.contains("options:  1. Hello, world\n"), "{text}");
    assert!(text.contains("          4. Chat about this\n"), "{text}");
    assert!(text.contains("(hm choose cc N --dialog "), "{text}");
    assert!(!text.contains("hm approve"), "{text}");
    let out = sb.cmd(&["choose", "cc", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "chose option 2 of claude.question in 'cc': Which greeting should hello.py print? \
         (keys: 2)"
    );
    // Exactly the option's digit, once.
    assert_eq!(keys_got(&got), "32");
    let text = stdout(&sb.cmd(&["explain", "cc"]));
    assert!(
        text.contains(
            "choose 2 claude.question by hand \"Which greeting should hello.py print?\" · keys 2"
        ),
        "{text}"
    );
    assert!(text.contains("│   2. Hi there"), "{text}");
}

#[test]
fn choose_is_refused_in_one_line_for_an_option_the_dialog_lacks_or_a_dialog_without_options() {
    let sb = Sandbox::new();
    let (_s, got) = claude_asking(&sb);
    let out = sb.cmd(&["choose", "cc", "7"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("the dialog has no option 7: its options are 1 to 4")
            && err.lines().count() == 1,
        "{err}"
    );
    // Not a digit a dialog numbers by: the command line's mistake.
    let out = sb.cmd(&["choose", "cc", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Nothing was sent: the first key the program gets is the next one.
    let out = sb.cmd(&["choose", "cc", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(keys_got(&got), "31");
    // Codex's approval numbers its options, but its rules pick none by
    // digit: refused, nothing sent.
    let (_c, got) = codex_asking(&sb, "cargo fmt");
    let out = sb.cmd(&["choose", "cx", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("codex's rules know no keys that choose from 'codex.permission'")
            && err.contains("(it takes hm approve cx, hm deny cx, hm approve --always cx)")
            && err.lines().count() == 1,
        "{err}"
    );
    let out = sb.cmd(&["deny", "cx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(keys_got(&got), "1b");
}

/// Session `cx`: the two-ask stand-in asking about `first`, then about
/// `then` once `gate` is opened; and the file it writes the keys it gets
/// after that into.
fn codex_asking_twice(
    sb: &Sandbox,
    first: &str,
    gate: &Path,
    then: &str,
) -> (common::Session, PathBuf) {
    let codex = stand_in(sb, "two", "codex", FAKE_CODEX_TWO_ASKS);
    let got = got_file(sb, "cx");
    let s = sb.start(
        "cx",
        &[],
        &[
            &codex,
            got.to_str().expect("utf-8"),
            first,
            gate.to_str().expect("utf-8"),
            then,
        ],
    );
    (s, got)
}

#[test]
fn an_answer_to_a_dialog_that_was_replaced_is_refused_and_sends_nothing() {
    let sb = Sandbox::new();
    let gate = common::gate(&sb, "gate");
    let (_s, got) = codex_asking_twice(&sb, "cargo test", &gate, "npm publish");
    wait_for_permission(&sb, "cx");
    // What the person saw: the dialog about `cargo test`, and its id.
    let seen = sb.status_json("cx");
    assert_eq!(seen["dialog"]["subject"], "cargo test", "{seen}");
    let id = seen["dialog"]["id"].as_u64().expect("a dialog id");
    let text = stdout(&sb.cmd(&["status", "cx"]));
    assert!(
        text.contains(&format!("dialog:   {id} about 'cargo test'")),
        "{text}"
    );
    // Before the answer arrives, the program asks about something else.
    common::open_gate(&gate);
    common::wait_until("the second question", || {
        sb.status_json("cx")["dialog"]["subject"] == "npm publish"
    });
    let out = sb.cmd(&["approve", "cx", "--dialog", &id.to_string()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("hm: the dialog in 'cx' changed: now asking about 'npm publish'"),
        "{err}"
    );
    // The new one is answered when named: its keys are the first the
    // program gets, so the refused answer sent none.
    let now = sb.status_json("cx")["dialog"]["id"]
        .as_u64()
        .expect("a dialog id");
    assert_ne!(now, id);
    // A number it has not come to yet was never shown: a mistake, not a
    // change.
    let ahead = (now + 1000).to_string();
    let out = sb.cmd(&["approve", "cx", "--dialog", &ahead]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "hm: 'cx' has shown no dialog {ahead}: it asks about 'npm publish' now (dialog {now})"
        )),
        "{err}"
    );
    // Nor is dialog 0: they are numbered from 1.
    let out = sb.cmd(&["approve", "cx", "--dialog", "0"]);
    assert!(
        stderr(&out).starts_with("hm: 'cx' has shown no dialog 0:"),
        "{}",
        stderr(&out)
    );
    let out = sb.cmd(&["approve", "cx", "--dialog", &now.to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(keys_got(&got), "79");
}

/// Two answers to one dialog, the second before the program has redrawn
/// (two dashboards, a person after a script): the second is refused and
/// sends nothing, even naming the dialog. Both were given, and Claude
/// Code's prompt read `❯ 1`.
#[test]
fn a_dialog_answered_a_moment_ago_is_not_answered_again() {
    let sb = Sandbox::new();
    let codex = fake_codex(&sb);
    let got = got_file(&sb, "cx");
    let _s = sb.start(
        "cx",
        &[],
        &[&codex, got.to_str().expect("utf-8"), "cargo test", "more"],
    );
    wait_for_permission(&sb, "cx");
    let id = sb.status_json("cx")["dialog"]["id"]
        .as_u64()
        .expect("a dialog id")
        .to_string();
    let first = common::answer_when_it_takes_keys(&sb, &["approve", "cx", "--dialog", &id]);
    assert!(first.status.success(), "{}", stderr(&first));
    // The program took the key and still shows the dialog (it prints
    // what it got below it).
    assert_eq!(keys_got(&got), "79");
    let again = sb.cmd(&["approve", "cx", "--dialog", &id]);
    assert_eq!(again.status.code(), Some(1), "{}", stdout(&again));
    let err = stderr(&again);
    assert!(
        err.starts_with("hm: the dialog in 'cx' was answered ")
            && err.contains("(approved by hand)")
            && err.contains("nothing was sent"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let denied = sb.cmd(&["deny", "cx"]);
    assert_eq!(denied.status.code(), Some(1), "{}", stdout(&denied));
    let more = got.with_extension("got.more");
    common::wait_until("the program to stop listening", || more.exists());
    assert_eq!(std::fs::read_to_string(&more).expect("read").trim(), "");
    let actions = explain_json(&sb, "cx")["actions"].clone();
    assert_eq!(actions.as_array().map(Vec::len), Some(1), "{actions}");
}

/// A plain script's `[y/N]` under the default classifier: the process
/// says it asks, the generic rules read the question, and `hm approve`
/// answers it as the inbox does (`y`, then Enter once the line shows it).
#[test]
fn a_plain_scripts_question_is_approved_without_the_agent_classifier() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "yn",
        &[],
        &[
            "sh",
            "-c",
            "printf 'Continue? [y/N] '; read a; echo went-on-$a; exec sleep 30",
        ],
    );
    common::wait_until("the question with its dialog", || {
        sb.status_json("yn")["dialog"]["rule"] == "input.yes_no"
    });
    assert_eq!(sb.status_json("yn")["classifier"], "simple");
    let out = common::answer_when_it_takes_keys(&sb, &["approve", "yn"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("approved input.yes_no in 'yn': Continue? [y/N] (keys: y Enter)"),
        "{}",
        stdout(&out)
    );
    common::wait_until("the script to go on", || {
        stdout(&sb.cmd(&["logs", "yn"])).contains("went-on-y")
    });
}

/// A question that asks for the word, `(yes/no)?`, is approved with the
/// word (the inbox offered `y`, and the answer was refused with the
/// pattern it missed), and denied with `no`.
#[test]
fn a_question_asking_for_the_word_is_answered_with_it() {
    let sb = Sandbox::new();
    let script = "import time\nfor q in ('Continue (yes/no)? ', 'Really [yes/no] '):\n    print('got', input(q), flush=True)\ntime.sleep(30)\n";
    let _s = sb.start("word", &[], &["python3", "-c", script]);
    for (verb, question, keys, went) in [
        ("approve", "Continue (yes/no)?", "y e s Enter", "got yes"),
        ("deny", "Really [yes/no]", "n o Enter", "got no"),
    ] {
        common::wait_until("the question with its dialog", || {
            sb.status_json("word")["dialog"]["subject"] == question
        });
        let out = common::answer_when_it_takes_keys(&sb, &[verb, "word"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains(&format!("(keys: {keys})")),
            "{}",
            stdout(&out)
        );
        common::wait_until(went, || stdout(&sb.cmd(&["logs", "word"])).contains(went));
    }
}

/// `hm approve` returns once its answer is typed whole, not after the
/// first of its keys: a script's next answer, to the program's next
/// question, was refused while the first was still being typed (`still
/// answering its dialog (y e s Enter by hand)`), and `hm wait --state
/// waiting` met the question half answered.
#[test]
fn an_answer_of_several_keys_returns_once_all_are_typed() {
    let sb = Sandbox::new();
    let script = "import time\nprint('got', input('Continue connecting (yes/no)? '), flush=True)\nprint('got', input('Overwrite file? [Y/n] '), flush=True)\ntime.sleep(30)\n";
    let _s = sb.start("two", &[], &["python3", "-c", script]);
    common::wait_until("the first question", || {
        sb.status_json("two")["dialog"]["rule"] == "input.yes_no"
    });
    let out = common::answer_when_it_takes_keys(&sb, &["approve", "two", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let acted: serde_json::Value = serde_json::from_slice(&out.stdout).expect("ACTED as JSON");
    assert_eq!(
        acted["action"]["keys"],
        serde_json::json!(["y", "e", "s", "Enter"])
    );
    assert!(acted.get("pending").is_none(), "{acted}");
    assert!(acted["action"].get("unfinished").is_none(), "{acted}");
    // Typed whole when it returned: the program has its answer, and the
    // next question is the one answered next.
    let out = sb.cmd(&["wait", "two", "--state", "waiting", "--timeout", "10"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = common::answer_when_it_takes_keys(&sb, &["deny", "two"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .contains("denied input.yes_no in 'two': Overwrite file? [Y/n] (keys: n Enter)"),
        "{}",
        stdout(&out)
    );
    common::wait_until("both answers taken", || {
        let logs = stdout(&sb.cmd(&["logs", "two"]));
        logs.contains("got yes") && logs.contains("got n\n")
    });
}

/// A password prompt is a dialog no rule has keys to approve: the refusal
/// says whose rules those are in words (it said `*'s rules`).
#[test]
fn a_password_prompt_is_refused_in_words() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "pw",
        &[],
        &["bash", "-c", "read -s -p 'Password: ' p; exec sleep 30"],
    );
    common::wait_until("the prompt with its dialog", || {
        sb.status_json("pw")["dialog"]["rule"] == "input.password"
    });
    let out = sb.cmd(&["approve", "pw"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "the rules common to every program know no keys that approve 'input.password'"
        ),
        "{err}"
    );
    assert!(!err.contains('*'), "{err}");
}

#[test]
fn approving_a_session_that_is_not_at_a_dialog_is_refused_in_one_line() {
    let sb = Sandbox::new();
    let _shell = sb.start(
        "sh",
        &["--classifier", "agent"],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    common::wait_until("the shell at its prompt", || {
        sb.status_json("sh")["primary"] == "idle"
    });
    let out = sb.cmd(&["approve", "sh"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("hm: session 'sh' is idle · ready, not at a dialog to approve"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Without the agent classifier, a program that does not ask is at
    // no dialog either (one that asks is answered: tests/inbox.rs).
    let _plain = sb.start("plain", &["--classifier", "simple"], &["sleep", "30"]);
    let out = sb.cmd(&["deny", "plain", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["ok"], false, "{v}");
    assert!(
        stderr(&out).contains("hm: session 'plain' is ")
            && stderr(&out).contains(", not at a dialog to deny"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_answer_is_refused_when_the_dialog_is_not_the_one_expected() {
    let sb = Sandbox::new();
    let codex = fake_codex(&sb);
    let got = got_file(&sb, "cx");
    let _s = sb.start(
        "cx",
        &[],
        &[&codex, got.to_str().expect("utf-8"), "npm publish"],
    );
    wait_for_permission(&sb, "cx");
    let refused = |args: &[&str], why: &str| {
        let out = sb.cmd(args);
        // A regex that is none is the command line's mistake (2).
        let code = if why.starts_with("invalid") { 2 } else { 1 };
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
    };
    refused(
        &["approve", "cx", "--subject", "^npm test"],
        "shows codex.permission about 'npm publish', which does not match '^npm test'",
    );
    refused(
        &["approve", "cx", "--rule", "claude.permission"],
        "shows codex.permission, not the expected claude.permission",
    );
    refused(
        &["approve", "cx", "--fingerprint", "0000000000000000"],
        "but not the dialog expected: it changed",
    );
    refused(&["approve", "cx", "--subject", "("], "invalid --subject");
    assert!(!got.exists(), "a refused answer sent keys");
    // The dialog as `hm explain --json` showed it is answered.
    let fingerprint = explain_json(&sb, "cx")["dialog"]["fingerprint"]
        .as_str()
        .expect("a fingerprint")
        .to_owned();
    let out = sb.cmd(&[
        "approve",
        "cx",
        "--fingerprint",
        &fingerprint,
        "--rule",
        "codex.permission",
        "--subject",
        "^npm publish$",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(keys_got(&got), "79");
}

#[test]
fn an_automation_rule_approves_once_after_its_dwell() {
    let sb = Sandbox::new();
    let codex = fake_codex(&sb);
    let conf = config(
        &sb,
        "[[automation]]\nagent = \"codex\"\nstate = \"waiting\"\ndetail = \"permission\"\n\
         subject = '^(cargo|npm) test'\naction = \"approve\"\ndwell_ms = 300\n",
    );
    let got = got_file(&sb, "cx");
    let _s = sb.start(
        "cx",
        &["--config", &conf],
        &[&codex, got.to_str().expect("utf-8"), "cargo test", "more"],
    );
    assert_eq!(keys_got(&got), "79");
    // The dialog stays on screen, answered: nothing more is sent.
    let more = got.with_extension("got.more");
    common::wait_until("the program to stop listening", || more.exists());
    assert_eq!(std::fs::read_to_string(&more).expect("read").trim(), "");
    let why = explain_json(&sb, "cx");
    let actions = why["actions"].as_array().expect("actions");
    assert_eq!(actions.len(), 1, "{why}");
    let a = &actions[0];
    assert_eq!(a["by"], format!("{conf}:1"), "{why}");
    assert_eq!(a["answer"], "approve", "{why}");
    // Not before the dialog had stood for the dwell.
    let shown = why["evidence"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["rule"] == "codex.permission"))
        .and_then(|r| r["since_ms"].as_u64())
        .expect("the dialog in the evidence");
    let at = a["at_ms"].as_u64().expect("at_ms");
    assert!(
        at >= shown + 300,
        "answered at {at} ms, dialog since {shown} ms"
    );
    let text = stdout(&sb.cmd(&["explain", "cx"]));
    assert!(
        text.contains(&format!(
            "approve codex.permission by automation ({conf}:1)"
        )),
        "{text}"
    );
}

#[test]
fn an_automation_rule_whose_subject_does_not_match_does_nothing() {
    let sb = Sandbox::new();
    let codex = fake_codex(&sb);
    // The second entry fits, but waits an hour: once it is armed, the
    // supervisor has looked at the dialog, and the first has not fitted.
    let conf = config(
        &sb,
        "[[automation]]\ndetail = \"permission\"\nsubject = '^cargo test'\naction = \"approve\"\n\
         dwell_ms = 100\n\n[[automation]]\ndetail = \"permission\"\nsubject = '^rm '\n\
         action = \"deny\"\ndwell_ms = 3600000\n",
    );
    let got = got_file(&sb, "cx");
    let _s = sb.start(
        "cx",
        &["--config", &conf],
        &[&codex, got.to_str().expect("utf-8"), "rm -rf build"],
    );
    common::wait_until("the second entry to be armed", || {
        explain_json(&sb, "cx")["automation"][1]["due_in_ms"].is_u64()
    });
    let why = explain_json(&sb, "cx");
    assert!(why["automation"][0]["due_in_ms"].is_null(), "{why}");
    // The dialog says so itself, as a dashboard hears it.
    let due = why["dialog"]["automation_in_ms"].as_u64().expect("told");
    assert!((3_000_000..=3_600_000).contains(&due), "{why}");
    assert_eq!(why["actions"], serde_json::json!([]), "{why}");
    let text = stdout(&sb.cmd(&["explain", "cx"]));
    assert!(text.contains("automation:"), "{text}");
    assert!(text.contains("· answers the dialog in "), "{text}");
    // The first keys the program gets are the ones given by hand.
    let out = sb.cmd(&["deny", "cx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(keys_got(&got), "1b");
    // Answered, the dialog is not answered again by the waiting entry.
    let why = explain_json(&sb, "cx");
    assert!(why["automation"][1]["due_in_ms"].is_null(), "still armed");
    assert!(why["dialog"]["automation_in_ms"].is_null(), "{why}");
}

/// A stand-in for Codex at its prompt, the words of its approval dialog
/// typed into its composer (the last `›` row, with the status row under
/// it): the dialog's text is there, but above the composer, where no
/// dialog is.
const CODEX_AT_PROMPT: &str = r#"#!/bin/bash
printf '  >_ OpenAI Codex (v0.169.0)\r\n\r\n'
printf '\342\200\272 Would you like to run the following command?\r\n'
printf '  $ cargo test\r\n'
printf '\342\200\272 1. Yes, proceed (y)\r\n\r\n'
printf '  gpt-5-codex default \302\267 ~/proj\r\n'
exec sleep 60
"#;

#[test]
fn dialog_text_typed_at_a_prompt_is_never_answered() {
    let sb = Sandbox::new();
    let conf = config(
        &sb,
        "[[automation]]\ndetail = \"permission\"\naction = \"approve\"\ndwell_ms = 100\n",
    );
    // At an agent's prompt.
    let codex = stand_in(&sb, "prompt", "codex", CODEX_AT_PROMPT);
    let _c = sb.start("cx", &["--config", &conf], &[&codex]);
    common::wait_until("the prompt on screen", || {
        stdout(&sb.cmd(&["logs", "cx", "--screen"])).contains("gpt-5-codex default")
    });
    // At a shell's prompt: typed, then printed by a command.
    let _s = sb.start(
        "sh",
        &["--config", &conf, "--classifier", "agent"],
        &["bash", "--norc", "--noprofile", "-i"],
    );
    let mut raw = Raw::connect(&sb.sock("sh")).expect("connect");
    raw.send(ClientType::Subscribe as u8, &[]);
    let typed = "printf '  Would you like to run the following command?\\n\\n  $ rm -rf /\\n\\n› 1. Yes, proceed (y)\\n  3. No, and tell Codex what to do differently (esc)\\n'";
    raw.send(ClientType::Input as u8, typed.as_bytes());
    raw.output_until(b"(esc)\\n'");
    // Looked at for a while, typed and then entered: never a dialog,
    // never an answer.
    for step in 0..40 {
        if step == 20 {
            raw.send(ClientType::Input as u8, b"\r");
            raw.output_until(b"(esc)\r\n");
        }
        for id in ["cx", "sh"] {
            let v = sb.status_json(id);
            assert_ne!(v["primary"], "waiting", "{id}: {v}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for id in ["cx", "sh"] {
        let why = explain_json(&sb, id);
        assert!(why["dialog"].is_null(), "{id}: {why}");
        assert_eq!(why["actions"], serde_json::json!([]), "{id}: {why}");
        let out = sb.cmd(&["approve", id]);
        assert_eq!(out.status.code(), Some(1), "{id}");
        assert!(
            stderr(&out).contains("not at a dialog to approve"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn an_automation_entry_that_cannot_be_used_stops_hm_run_in_one_line() {
    let sb = Sandbox::new();
    let conf = config(
        &sb,
        "[[automation]]\ndetail = \"permission\"\naction = \"approve\"\n\n[[automation]]\n\
         detail = \"thinking\"\naction = \"approve\"\n",
    );
    let out = sb.cmd(&["--config", &conf, "run", "--bg", "--", "sleep", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        format!(
            "hm: {conf}:6: invalid value for 'automation.detail': 'thinking' is not a detail \
             of 'waiting' (expected one of: permission, question, plan_approval, folder_trust, \
             survey, diff, external_editor, onboarding, input)"
        )
    );
    // Valid in itself, but no agent's rules can give that answer: found
    // when the session starts, as a broken rule file is.
    let conf = config(
        &sb,
        "\n[[automation]]\ndetail = \"survey\"\naction = \"approve\"\n",
    );
    let codex = fake_codex(&sb);
    let out = sb.cmd(&["--config", &conf, "run", "--bg", "--", &codex, "x", "y"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "hm: {conf}:2: invalid value for 'automation': no agent's rules know keys that \
             approve a 'survey' dialog"
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn act_is_answered_with_acted_and_an_oversized_act_is_refused() {
    let sb = Sandbox::new();
    let codex = fake_codex(&sb);
    let got = got_file(&sb, "cx");
    let _s = sb.start("cx", &[], &[&codex, got.to_str().expect("utf-8"), "make"]);
    wait_for_permission(&sb, "cx");
    // A client written from the spec: ACT with a JSON object, ACTED back.
    let mut raw = Raw::connect(&sb.sock("cx")).expect("connect");
    raw.send(ClientType::Act as u8, br#"{"answer":"maybe"}"#);
    let f = raw.expect(ServerType::Acted as u8);
    let v: serde_json::Value = serde_json::from_slice(&f.payload).expect("json");
    assert_eq!(v["ok"], false, "{v}");
    assert!(
        v["reason"]
            .as_str()
            .expect("reason")
            .contains("unknown answer 'maybe'")
    );
    // A dialog drawn a moment ago may be too new to answer: the ACTED
    // says when to ask again.
    let v = loop {
        raw.send(
            ClientType::Act as u8,
            br#"{"answer":"approve","subject":"^make$"}"#,
        );
        let f = raw.expect(ServerType::Acted as u8);
        let v: serde_json::Value = serde_json::from_slice(&f.payload).expect("json");
        match v["retry_in_ms"].as_u64() {
            Some(ms) => std::thread::sleep(Duration::from_millis(ms)),
            None => break v,
        }
    };
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["action"]["rule"], "codex.permission", "{v}");
    assert_eq!(keys_got(&got), "79");
    // The payload is bounded, as RESIZE's is fixed.
    let mut raw = Raw::connect(&sb.sock("cx")).expect("connect");
    let big = vec![b' '; protocol::MAX_ACT_PAYLOAD as usize + 1];
    raw.send(ClientType::Act as u8, &big);
    let f = raw.expect(ServerType::Error as u8);
    let (code, message) = protocol::decode_error(&f.payload);
    assert_eq!(code, ErrorCode::MalformedPayload as u16, "{message}");
    assert!(
        message.contains("ACT payload must be at most 4096 bytes"),
        "{message}"
    );
}

/// A stand-in for aider 0.86 at its shell command confirmation: the
/// command, then the question ending the cursor's row, read as a line
/// (echoed as typed, unless `$2` is `noecho`); the line read goes as hex
/// into file `$1`. Named `aider`, so that hm takes it for aider.
const FAKE_AIDER: &str = r#"#!/bin/bash
[ "$2" = noecho ] && stty -echo
printf 'Aider v0.86.2\r\n\r\nls -la && echo listed\r\n'
printf "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: "
IFS= read -r line
printf '%s' "$line" | od -An -tx1 | tr -d ' \n' > "$1.tmp" && mv "$1.tmp" "$1"
exec sleep 60
"#;

fn fake_aider(sb: &Sandbox) -> String {
    stand_in(sb, "aider-bin", "aider", FAKE_AIDER)
}

#[test]
fn a_later_key_of_an_answer_waits_until_the_dialog_shows_the_first_taken() {
    let sb = Sandbox::new();
    let aider = fake_aider(&sb);
    let got = got_file(&sb, "ai");
    let _s = sb.start("ai", &[], &[&aider, got.to_str().expect("utf-8")]);
    wait_for_permission(&sb, "ai");
    let why = explain_json(&sb, "ai");
    assert_eq!(why["dialog"]["subject"], "ls -la && echo listed", "{why}");
    let out = sb.cmd(&["deny", "ai", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        v["action"]["keys"],
        serde_json::json!(["n", "Enter"]),
        "{v}"
    );
    // `n`, and Enter once the line shows it: the program read "n".
    assert_eq!(keys_got(&got), "6e");
}

#[test]
fn an_answer_whose_first_key_does_not_show_stops_before_the_next() {
    let sb = Sandbox::new();
    let aider = fake_aider(&sb);
    let got = got_file(&sb, "ai");
    // The program does not echo: the `n` never shows on its line.
    let _s = sb.start("ai", &[], &[&aider, got.to_str().expect("utf-8"), "noecho"]);
    wait_for_permission(&sb, "ai");
    // `hm deny` returns once the answer is whole or has stopped short.
    let deny = sb.background(&["deny", "ai"]);
    common::wait_until("the first key sent", || {
        explain_json(&sb, "ai")["actions"][0]["keys"] == serde_json::json!(["n", "Enter"])
    });
    // While it waits to see the `n`, no other answer is given.
    let again = sb.cmd(&["approve", "ai"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("is still answering its dialog (n Enter by hand)"),
        "{}",
        stderr(&again)
    );
    let out = deny.wait_with_output().expect("hm deny");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("denied aider.permission in 'ai'"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out)
            .starts_with("hm: 'ai': only part of the answer was sent: the dialog did not show"),
        "{}",
        stderr(&out)
    );
    let why = explain_json(&sb, "ai");
    let unfinished = why["actions"][0]["unfinished"].as_str().expect("why");
    assert!(unfinished.contains("the rest was not sent"), "{unfinished}");
    // Enter was never pressed: the program is still reading its line.
    assert!(!got.exists(), "Enter was sent");
    let text = stdout(&sb.cmd(&["explain", "ai"]));
    assert!(text.contains("stopped short:"), "{text}");
}

/// A program stopped by a signal (here its own SIGSTOP; Ctrl-Z in a
/// program that stops itself is the same) moves again only when
/// continued, and nothing above it would: `waiting · stopped`, with the
/// way out in `hm status`; `hm continue` continues it, once.
#[test]
fn a_stopped_program_is_waiting_stopped_until_hm_continue() {
    let sb = Sandbox::new();
    let _s = sb.start(
        "job",
        &[],
        &[
            "sh",
            "-c",
            "echo before; kill -STOP $$; echo after-continue; exec sleep 600",
        ],
    );
    common::wait_until("waiting · stopped", || {
        let v = sb.status_json("job");
        v["primary"] == "waiting" && v["detail"] == "stopped"
    });
    let v = sb.status_json("job");
    assert_eq!(v["signals"][0]["text"], "stopped by SIGSTOP", "{v}");
    let shown = stdout(&sb.cmd(&["status", "job"]));
    assert!(shown.contains("waiting · stopped"), "{shown}");
    assert!(shown.contains("(hm continue job resumes it)"), "{shown}");
    let ls = stdout(&sb.cmd(&["ls"]));
    assert!(ls.contains("waiting · stopped"), "{ls}");

    let out = sb.cmd(&["continue", "job"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "continued 'job' (stopped by SIGSTOP)");
    common::wait_until("the program to go on", || {
        stdout(&sb.cmd(&["logs", "job", "--screen"])).contains("after-continue")
    });
    common::wait_until("no longer stopped", || {
        sb.status_json("job")["detail"] != "stopped"
    });
    let again = sb.cmd(&["continue", "job"]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        stderr(&again).trim(),
        "hm: 'job': the program is not stopped"
    );
}
