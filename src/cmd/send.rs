//! `hm send ID TEXT... [--enter]` and `hm send ID --keys KEY...`: types
//! into a session, as if at its terminal.

use anyhow::{Result, bail};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::wait::{self, Judged, Outcome};
use crate::cli::SendArgs;
use crate::client::{self, find_session};
use crate::config::Config;
use crate::protocol::{self, Reply, Request, StateReport, Subscribe, conn};
use crate::verdict::{Detail, Primary, Source};

/// The bytes a terminal sends for a key named as tmux names them: `Enter`,
/// `Tab`, `Escape`, `BSpace`, `Space`, arrows, `Home`, `End`, `PageUp`,
/// `PageDown` (`PPage`/`PgUp`, `NPage`/`PgDn`), `Delete` (`DC`), `Insert`
/// (`IC`), `F1`-`F24` (past F12, xterm's shifted F1-F12), or a single
/// character for itself; each after any of the modifiers `C-` (control),
/// `M-` (meta) and `S-` (shift), in any order: `C-c`, `M-x`, `C-Left`,
/// `S-Up`, `C-M-x`. They are the bytes the dashboard sends for the key
/// pressed in a session (xterm's): a modified arrow carries its modifiers
/// in its sequence (`C-Left` is `ESC [ 1 ; 5 D`), a meta character comes
/// after ESC.
///
/// With `app_cursor` (the program turned on application cursor keys, as
/// `less` and `vim` do) arrows, Home and End are sent as a terminal sends
/// them then: `ESC O A`, not `ESC [ A`.
pub fn key_bytes(name: &str, app_cursor: bool) -> Option<Vec<u8>> {
    let mut mods = KeyModifiers::NONE;
    let mut rest = name;
    // `C-` alone is no key; `C--` is control of `-`.
    while rest.len() > 2 {
        let m = match rest.get(..2).map(str::to_ascii_uppercase).as_deref() {
            Some("C-") => KeyModifiers::CONTROL,
            Some("M-") => KeyModifiers::ALT,
            Some("S-") => KeyModifiers::SHIFT,
            _ => break,
        };
        mods |= m;
        rest = &rest[2..];
    }
    let code = match rest {
        "Up" => KeyCode::Up,
        "Down" => KeyCode::Down,
        "Right" => KeyCode::Right,
        "Left" => KeyCode::Left,
        "Home" => KeyCode::Home,
        "End" => KeyCode::End,
        "Enter" => KeyCode::Enter,
        "Tab" if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        "Tab" => KeyCode::Tab,
        "BTab" => KeyCode::BackTab,
        "Escape" | "Esc" => KeyCode::Esc,
        "BSpace" | "Backspace" => KeyCode::Backspace,
        "Space" => KeyCode::Char(' '),
        "PageUp" | "PPage" | "PgUp" => KeyCode::PageUp,
        "PageDown" | "NPage" | "PgDn" => KeyCode::PageDown,
        "Delete" | "DC" => KeyCode::Delete,
        "Insert" | "IC" => KeyCode::Insert,
        _ => match (rest.strip_prefix('F'))
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|n| format!("F{n}") == rest)
        {
            Some(n @ 1..=12) => KeyCode::F(n),
            // xterm sends F13-F24 as shifted F1-F12.
            Some(n @ 13..=24) => {
                mods |= KeyModifiers::SHIFT;
                KeyCode::F(n - 12)
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return None,
                }
            }
        },
    };
    let code = match code {
        // A shifted character is the character shifted; a terminal sends
        // no modifier for it.
        KeyCode::Char(c) if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(u), None) => KeyCode::Char(u),
                _ => return None,
            }
        }
        code => code,
    };
    if mods.contains(KeyModifiers::CONTROL)
        && let KeyCode::Char(c) = code
    {
        // Only characters with a control form have a C- name; the rest
        // would come out as themselves.
        let plain = encode(KeyCode::Char(c), KeyModifiers::CONTROL, false)?;
        if plain == c.to_string().into_bytes() {
            return None;
        }
    }
    encode(code, mods, app_cursor)
}

/// The bytes the dashboard would send for this key pressed in a session.
fn encode(code: KeyCode, mods: KeyModifiers, app_cursor: bool) -> Option<Vec<u8>> {
    crate::vt::keys::encode(&KeyEvent::new(code, mods), app_cursor)
}

pub fn send(args: SendArgs, config: &Config) -> Result<i32> {
    // The command line is checked before the session is looked for: a
    // mistake in it is the same mistake whatever the id (exit 2).
    if args.keys
        && let Some(k) = args.text.iter().find(|k| key_bytes(k, false).is_none())
    {
        super::usage!(
            "unknown key '{k}' (names as tmux's: Enter, Tab, Escape, BSpace, Up, PgUp, F1, C-c, M-x, C-Left, S-Up, ...)"
        );
    }
    let limit = wait::time_limit(args.timeout)?;
    if args.text.iter().all(String::is_empty) && !args.enter {
        super::usage!("nothing to send (give TEXT, or --enter)");
    }
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let rt = client::runtime()?;
    // Arrow keys depend on the mode the program put its terminal in.
    let cursor_keys = ["Up", "Down", "Left", "Right", "Home", "End"];
    let app_cursor = args.keys
        && args
            .text
            .iter()
            .any(|k| cursor_keys.iter().any(|c| k.ends_with(c)))
        && rt
            .block_on(client::answered(&session.id, async {
                Ok(conn::screen_at(&session.sock).await?)
            }))
            .is_ok_and(|s| s.application_cursor);
    // Text typed at an agent's dialog answers it by its first letter
    // (`n` of "next step" denied Codex's command, the rest became its
    // next prompt): a script sending its next task at the wrong moment
    // is told, not obeyed. Keys are sent as named, deliberately.
    if !args.keys && !args.force {
        let asked = rt.block_on(client::answered(&session.id, async {
            Ok(conn::info_status_at(&session.sock).await?)
        }));
        // Nor is text added to a draft someone typed at an agent's
        // prompt: `next: run the tests` and a script's `also lint` went
        // off as one prompt.
        if let Ok((Some(info), _)) = &asked
            && !args.text.iter().all(|t| t.is_empty())
            && let Some(state) = &info.state
            && state.detail == Some(Detail::PromptEditing)
            && state.turn_over().is_some()
        {
            let id = client::shown_id(&session.id);
            let draft = state
                .signals
                .iter()
                .find(|s| s.source == crate::detect::Source::Screen)
                .map(|s| {
                    // The prompt's glyph and the space after it (`❯ `), not
                    // the draft's own first characters (`/compact`).
                    let text = s.text.trim_start();
                    let mut chars = text.chars();
                    let glyph = chars
                        .next()
                        .filter(|c| !c.is_alphanumeric() && !"/@\"'".contains(*c));
                    let text = if glyph.is_some() {
                        chars.as_str()
                    } else {
                        text
                    };
                    format!(" ('{}')", crate::paths::sanitize(text.trim_start()))
                })
                .unwrap_or_default();
            bail!(
                "session '{id}' has a draft typed at its prompt{draft}, which what you type \
                 would be added to: --force types anyway ('hm attach {id}' to see it)"
            );
        }
        if let Ok((Some(info), _)) = asked
            && let Some(d) = info
                .dialog
                .filter(|d| d.detail.is_some_and(|d| d != Detail::Input))
        {
            let id = client::shown_id(&session.id);
            let what = d.detail.map_or("a", |d| d.name());
            let about = d
                .subject
                .as_deref()
                .map(|s| format!(" ({})", crate::paths::sanitize(s)))
                .unwrap_or_default();
            let takes = |a: &str| d.answers.iter().any(|n| n == a);
            let answer = match (takes("approve") || takes("deny"), takes("choose")) {
                (true, true) => format!("'hm approve {id}', 'hm deny {id}' or 'hm choose {id} N'"),
                (false, true) => format!("'hm choose {id} N'"),
                _ => format!("'hm approve {id}' or 'hm deny {id}'"),
            };
            bail!(
                "session '{id}' is waiting at its {what} dialog{about}, which what you type would \
                 answer: {answer} answers it; --force types anyway"
            );
        }
    }
    let mut bytes = Vec::new();
    if args.keys {
        for k in &args.text {
            let Some(b) = key_bytes(k, app_cursor) else {
                bail!(
                    "unknown key '{k}' (names as tmux's: Enter, Tab, Escape, BSpace, Up, PgUp, F1, C-c, M-x, C-Left, S-Up, ...)"
                );
            };
            bytes.extend(b);
        }
    } else {
        bytes.extend(args.text.join(" ").into_bytes());
    }
    // Enter comes apart from the text, a moment after it: Codex takes a
    // burst of typed characters for a paste and, for 120 ms after one,
    // an Enter for a new line in its prompt, not for sending it.
    let enter = args.enter.then_some(&b"\r"[..]);
    let (text, enter) = match enter {
        Some(e) if bytes.is_empty() => (e, None),
        e => (&bytes[..], e),
    };
    let (mut r, mut w, before) = rt
        .block_on(client::answered(&session.id, async {
            let (mut r, mut w) = conn::connect(&session.sock).await?;
            // With --wait, the states are followed from before the first
            // byte: none that the input brings about can be missed.
            if args.wait {
                let states = Subscribe {
                    state: true,
                    ..Subscribe::default()
                };
                conn::ask(&mut w, &[Request::Subscribe(states)]).await?;
            }
            let mut before = None;
            // INPUT has no answer; the STATUS after it is answered only
            // once the supervisor has taken the input, so the command
            // returns when the bytes are on their way to the program.
            for (i, part) in std::iter::once(text).chain(enter).enumerate() {
                if i > 0 {
                    tokio::time::sleep(ENTER_AFTER).await;
                }
                let mut requests: Vec<Request<'_>> = part
                    .chunks(protocol::MAX_PAYLOAD as usize / 2)
                    .map(Request::Input)
                    .collect();
                // The state's clock as the input is taken: --wait counts
                // only the states entered from then on.
                if args.wait {
                    requests.push(Request::Info);
                }
                requests.push(Request::Status);
                conn::ask(&mut w, &requests).await?;
                loop {
                    match r.expect().await? {
                        Reply::Status(_) => break,
                        Reply::Info(info) if !info.relabelled => before = info.state,
                        _ => {}
                    }
                }
            }
            Ok((r, w, before))
        }))
        .map_err(|e| {
            // Refused as the program has exited (the supervisor is about to
            // write its record), or reset on its way out: how it ended.
            let refused = e
                .chain()
                .any(|c| matches!(c.downcast_ref(), Some(conn::ConnError::Refused(_))));
            let soon = std::time::Instant::now() + REFUSED_PATIENCE;
            match refused.then(|| client::ended_meanwhile(&dir, &session.id, soon)) {
                Some(Some(r)) => anyhow::anyhow!(client::has_ended(&r)),
                _ => client::or_ended(&dir, &session.id, e),
            }
        })?;
    if !args.wait {
        return Ok(0);
    }
    let mut turn = Turn::after(before.as_ref());
    let watched = rt.block_on(wait::within(
        limit,
        wait::follow(&mut r, &mut w, &session.id, Some(QUIET), |report| {
            turn.judge(report)
        }),
    ));
    let ended = watched
        .map(|w| wait::settle(&dir, &session, w))
        .transpose()?;
    if let Some(Outcome::Closed) = ended {
        client::after_hangup(&dir, &session.id);
    }
    match ended {
        // Ended of itself with success (an `exit` or `quit` sent): the
        // turn's end, said as `hm wait --state exited` says it; a failure
        // or a kill is not.
        Some(o)
            if matches!(&o, Outcome::Reached(_))
                || matches!(&o, Outcome::Exited(_, v) if v.exit_code == Some(0) && !v.killed) =>
        {
            wait::print_reached(&mut std::io::stdout().lock(), &session.id, &o, args.json)?;
            Ok(0)
        }
        Some(o) => bail!(wait::ended_before(
            &dir,
            &session.id,
            &o,
            "before its turn ended",
            false
        )),
        None => {
            let secs = args.timeout.unwrap_or_default();
            let now = turn
                .last
                .map(|l| format!(" (it is {l})"))
                .unwrap_or_default();
            let id = client::shown_id(&session.id);
            bail!("timed out after {secs}s waiting for '{id}' to end its turn{now}")
        }
    }
}

/// How `--wait` tells the end of the turn a send started, from the states
/// that follow it. A state entered before the send says nothing of it (a
/// turn over from the last prompt, a shell's prompt as it was): the end is
/// one entered after, idle or waiting for an answer. An agent's idle
/// counts once it was seen working: Claude Code clears its prompt before
/// its spinner shows. A program whose state the input leaves as it was
/// (Enter at a shell's empty prompt), or an agent not seen working, is
/// done once it has printed since and gone quiet for [`QUIET`].
struct Turn {
    /// The session clock as the input was taken; `None` from an older
    /// supervisor, whose states carry no clock: then only a state after
    /// work counts.
    sent_ms: Option<u64>,
    /// The state as the input was taken (its byte, detail and session
    /// clock start): found then by INFO's own look, it would pass for one
    /// entered after.
    at_send: Option<(u8, Option<Detail>, u64)>,
    /// A program hm knows only by its process (no agent, no shell) was
    /// reading its terminal as the input came, as its process said (a
    /// REPL at its prompt, `bc`): its turn is over when it reads again.
    /// Quiet is no end for it: `time.sleep(5)` typed into `python3` is
    /// idle by the timing, and was taken as done three seconds in. Not
    /// a question read off the screen (apt's `[Y/n]` over ssh), whose
    /// answer leaves a prompt that is no question: idle for ever.
    reads: bool,
    /// Whether it was seen working after the send.
    worked: bool,
    /// The last state seen, for the time-out's words.
    last: Option<String>,
}

impl Turn {
    /// The turn of an input taken with the session in state `at_send`
    /// (INFO's, asked with the input).
    fn after(at_send: Option<&StateReport>) -> Turn {
        Turn {
            sent_ms: at_send.and_then(|s| s.clock_ms),
            at_send: at_send.and_then(|s| Some((s.state_byte, s.detail, s.began_ms()?))),
            reads: at_send.is_some_and(|s| {
                s.primary == Primary::Waiting
                    && s.detail == Some(Detail::Input)
                    && s.agent.is_none()
                    && s.signals
                        .first()
                        .is_some_and(|g| g.source == Source::Process)
            }),
            worked: false,
            last: None,
        }
    }

    fn judge(&mut self, r: &StateReport) -> Judged {
        self.last = Some(r.label());
        let since = |at: Option<u64>| self.sent_ms.zip(at).is_some_and(|(sent, at)| at >= sent);
        let start = r.began_ms();
        let as_sent = start.is_some_and(|t| self.at_send == Some((r.state_byte, r.detail, t)));
        let entered = since(start) && !as_sent;
        match r.primary {
            Primary::Active | Primary::Stuck => {
                self.worked |= entered || self.sent_ms.is_none();
                Judged::Not
            }
            // Computing without a word, not reading: not done.
            Primary::Idle if self.reads => Judged::Not,
            // After work, any rest is its end (an interrupted turn's too).
            Primary::Waiting | Primary::Idle if self.worked => Judged::Reached,
            Primary::Waiting if entered => Judged::Reached,
            // An agent's idle only after work (or quiet, below): Claude
            // Code clears its prompt before its spinner shows, and after
            // a turn that worked the detector names that `finished`.
            Primary::Idle if entered && r.turn_over().is_none() => Judged::Reached,
            // No change it could be told by (Enter at a shell's empty
            // prompt, a line `cat` takes and asks again), or none that
            // decides (`input()` in a Python started from a shell): done
            // once it has printed since the send and gone quiet.
            Primary::Idle | Primary::Waiting | Primary::Unknown => {
                let printed = since(r.clock_ms.zip(r.idle_ms).map(|(c, i)| c.saturating_sub(i)));
                let still = r.idle_ms.unwrap_or(0).min(r.state_ms);
                match QUIET.checked_sub(std::time::Duration::from_millis(still)) {
                    _ if !printed => Judged::AskIn(QUIET),
                    Some(left) if !left.is_zero() => Judged::AskIn(left),
                    _ => Judged::Reached,
                }
            }
            Primary::Dead => Judged::Not,
        }
    }
}

/// How long a program that showed no change of state after the input
/// must have been quiet, having printed since, for `--wait` to take its
/// turn as over; and how often it is asked meanwhile.
const QUIET: std::time::Duration = std::time::Duration::from_millis(1500);

/// How long after the text `--enter` sends its Enter: past the 120 ms in
/// which Codex 0.169 reads an Enter after a burst of characters as a new
/// line (its paste-burst rule).
const ENTER_AFTER: std::time::Duration = std::time::Duration::from_millis(150);

/// How long a refused input looks for the record of a session that has
/// just ended: its supervisor writes it right after the program's end.
const REFUSED_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);

#[cfg(test)]
mod tests {
    use super::{Judged, Turn};

    /// A state of `agent` (`None`: a plain program) reported at session
    /// clock 10 000: in it since `entered`, last output at `printed`.
    fn report(
        agent: Option<&str>,
        state: &str,
        entered: u64,
        printed: u64,
    ) -> crate::protocol::StateReport {
        let (primary, detail) = state.split_once(" · ").unwrap_or((state, ""));
        serde_json::from_value(serde_json::json!({
            "state": primary, "state_byte": 0, "primary": primary,
            "detail": (!detail.is_empty()).then_some(detail),
            "health": "alive", "agent": agent, "state_ms": 10_000 - entered,
            "signals": [], "idle_ms": 10_000 - printed, "clock_ms": 10_000,
        }))
        .expect("a report")
    }

    /// The turn of an input sent at clock 5 000 to `agent` in `state`
    /// (since 1 000; a plain program's `waiting · input` as its process
    /// says it).
    fn sent_to(agent: Option<&str>, state: &str) -> Turn {
        let mut at = report(agent, state, 1_000, 1_000);
        at.clock_ms = Some(5_000);
        at.state_ms = 4_000;
        if agent.is_none() && state == "waiting · input" {
            at.signals = vec![crate::verdict::Signal {
                source: crate::verdict::Source::Process,
                rule: "process.reading".into(),
                text: String::new(),
                since_ms: 1_000,
            }];
        }
        Turn::after(Some(&at))
    }

    fn turn() -> Turn {
        sent_to(Some("claude"), "idle · finished")
    }

    fn reached(j: &Judged) -> bool {
        matches!(j, Judged::Reached)
    }

    /// The last turn's end, or a dialog still shown, is not this turn's.
    #[test]
    fn a_state_entered_before_the_send_is_not_its_turns_end() {
        let claude = Some("claude");
        let over = report(claude, "idle · finished", 1_000, 1_000);
        assert!(matches!(turn().judge(&over), Judged::AskIn(_)));
        let asked = report(claude, "waiting · permission", 1_000, 1_000);
        assert!(matches!(turn().judge(&asked), Judged::AskIn(_)));
        // A turn over after it: once it worked, or once quiet.
        let mut t = turn();
        t.judge(&report(claude, "active · thinking", 5_100, 5_100));
        let over = report(claude, "idle · finished", 9_000, 9_000);
        assert!(reached(&t.judge(&over)));
        assert!(matches!(turn().judge(&over), Judged::AskIn(_)));
        let quiet = report(claude, "idle · finished", 8_000, 8_000);
        assert!(reached(&turn().judge(&quiet)));
        let asks = report(claude, "waiting · permission", 6_000, 6_000);
        assert!(reached(&turn().judge(&asks)));
        // Found by INFO's own look as the input was taken: not after it.
        let shell = Some("shell");
        let mut at = report(shell, "idle · prompt_editing", 5_000, 5_000);
        at.clock_ms = Some(5_000);
        at.state_ms = 0;
        let mut t = Turn::after(Some(&at));
        let same = report(shell, "idle · prompt_editing", 5_000, 9_900);
        assert!(matches!(t.judge(&same), Judged::AskIn(_)));
    }

    /// Claude Code clears its prompt before its spinner shows: idle, not
    /// over, and entered after the send is not the end, unless the turn
    /// was seen working (an interrupted one ends so).
    #[test]
    fn an_agents_idle_ends_its_turn_when_over_or_after_work() {
        let cleared = report(Some("claude"), "idle · ready", 5_010, 9_990);
        assert!(matches!(turn().judge(&cleared), Judged::AskIn(_)));
        let mut t = turn();
        assert!(matches!(
            t.judge(&report(Some("claude"), "active · thinking", 5_020, 9_990)),
            Judged::Not
        ));
        assert!(reached(&t.judge(&cleared)));
        // A shell's idle entered after the send is its end.
        assert!(reached(&turn().judge(&report(
            Some("shell"),
            "idle · ready",
            5_010,
            5_010
        ))));
        // Work of the last turn, before the send, is not this one's.
        let mut t = turn();
        t.judge(&report(Some("claude"), "active · thinking", 4_000, 9_990));
        assert!(matches!(t.judge(&cleared), Judged::AskIn(_)));
    }

    /// A plain program reading its terminal as the input came (a REPL)
    /// is done when it reads again, not when it is quiet: idle is it
    /// computing. Unknown, with output since the send and quiet, is done.
    #[test]
    fn a_program_that_read_ends_its_turn_reading_again() {
        let mut t = sent_to(None, "waiting · input");
        assert!(matches!(
            t.judge(&report(None, "active", 5_010, 5_500)),
            Judged::Not
        ));
        assert!(matches!(
            t.judge(&report(None, "idle", 6_000, 5_500)),
            Judged::Not
        ));
        assert!(reached(&t.judge(&report(
            None,
            "waiting · input",
            9_000,
            9_000
        ))));
        // A shell at `read` answered is done at its prompt.
        let mut t = sent_to(Some("shell"), "waiting · input");
        assert!(reached(&t.judge(&report(
            Some("shell"),
            "idle · ready",
            5_010,
            5_010
        ))));
        let unsure = report(Some("shell"), "unknown", 5_010, 5_010);
        assert!(reached(
            &sent_to(Some("shell"), "idle · ready").judge(&unsure)
        ));
        // A question read off the screen (apt's over ssh), answered: its
        // prompt after is no question, and idle ends the turn.
        let mut asked = report(None, "waiting · input", 1_000, 1_000);
        asked.clock_ms = Some(5_000);
        asked.state_ms = 4_000;
        let mut t = Turn::after(Some(&asked));
        assert!(reached(&t.judge(&report(None, "idle", 6_000, 5_500))));
    }

    /// No change of state: done once it printed after the send and has
    /// been quiet for QUIET since; asked again until then.
    #[test]
    fn no_change_is_done_once_it_printed_and_went_quiet() {
        let quiet = super::QUIET.as_millis() as u64;
        let unchanged = |printed| report(None, "idle", 1_000, printed);
        assert!(matches!(turn().judge(&unchanged(4_000)), Judged::AskIn(d) if d == super::QUIET));
        assert!(matches!(
            turn().judge(&unchanged(10_000 - quiet + 100)),
            Judged::AskIn(d) if d.as_millis() == 100
        ));
        assert!(reached(&turn().judge(&unchanged(10_000 - quiet))));
    }

    #[test]
    fn keys_are_named_as_tmux_names_them() {
        let key_bytes = |k: &str| super::key_bytes(k, false);
        assert_eq!(key_bytes("Enter").as_deref(), Some(&b"\r"[..]));
        assert_eq!(key_bytes("c-c").as_deref(), Some(&[3u8][..]));
        assert_eq!(key_bytes("C-Space").as_deref(), Some(&[0u8][..]));
        assert_eq!(key_bytes("C-M-x").as_deref(), Some(&[0x1b, 0x18][..]));
        assert_eq!(key_bytes("S-Tab").as_deref(), Some(&b"\x1b[Z"[..]));
        assert_eq!(
            super::key_bytes("Down", true).as_deref(),
            Some(&b"\x1bOB"[..])
        );
        assert_eq!(
            super::key_bytes("Down", false).as_deref(),
            Some(&b"\x1b[B"[..])
        );
        assert_eq!(key_bytes("C-c").as_deref(), Some(&[3u8][..]));
        assert_eq!(key_bytes("C-C").as_deref(), Some(&[3u8][..]));
        assert_eq!(key_bytes("M-x").as_deref(), Some(&b"\x1bx"[..]));
        // As xterm and the dashboard send them: the modifiers in the
        // sequence.
        assert_eq!(key_bytes("M-Up").as_deref(), Some(&b"\x1b[1;3A"[..]));
        assert_eq!(key_bytes("C-Left").as_deref(), Some(&b"\x1b[1;5D"[..]));
        assert_eq!(key_bytes("S-Up").as_deref(), Some(&b"\x1b[1;2A"[..]));
        assert_eq!(key_bytes("C-S-Right").as_deref(), Some(&b"\x1b[1;6C"[..]));
        assert_eq!(key_bytes("M-C-x").as_deref(), Some(&[0x1b, 0x18][..]));
        assert_eq!(key_bytes("C-PgUp").as_deref(), Some(&b"\x1b[5;5~"[..]));
        assert_eq!(key_bytes("PgDn").as_deref(), Some(&b"\x1b[6~"[..]));
        assert_eq!(key_bytes("S-a").as_deref(), Some(&b"A"[..]));
        assert_eq!(key_bytes("C--"), None, "- has no control form");
        assert_eq!(key_bytes("M--").as_deref(), Some(&b"\x1b-"[..]));
        assert_eq!(key_bytes("F13").as_deref(), Some(&b"\x1b[1;2P"[..]));
        assert_eq!(key_bytes("F24").as_deref(), Some(&b"\x1b[24;2~"[..]));
        assert_eq!(key_bytes("F25"), None);
        // With application cursor keys, a modified arrow keeps its CSI.
        assert_eq!(
            super::key_bytes("C-Up", true).as_deref(),
            Some(&b"\x1b[1;5A"[..])
        );
        assert_eq!(key_bytes("y").as_deref(), Some(&b"y"[..]));
        assert_eq!(key_bytes("é").as_deref(), Some("é".as_bytes()));
        assert_eq!(key_bytes("F12").as_deref(), Some(&b"\x1b[24~"[..]));
        assert_eq!(key_bytes("Nope"), None);
        assert_eq!(key_bytes("C-"), None);
        assert_eq!(key_bytes("C-ab"), None);
        assert_eq!(key_bytes("C-é"), None);
        assert_eq!(key_bytes("F05"), None);
        assert_eq!(key_bytes("F1").as_deref(), Some(&b"\x1bOP"[..]));
        assert_eq!(
            super::key_bytes("Home", true).as_deref(),
            Some(&b"\x1bOH"[..])
        );
    }
}
