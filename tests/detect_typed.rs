//! Text the user typed at a prompt, or an agent quoted, never makes a
//! dialog; a plain program's question on the cursor's row does.
//!
//! Screens are drawn through the real emulator, with the cursor where the
//! program would leave it.

use heimdall::detect::{Detail, Detector, Primary, Settings, Verdict};
use heimdall::protocol::Size;
use heimdall::vt::events::Recorder;
use heimdall::vt::term::Term;

const RULE: &str =
    "────────────────────────────────────────────────────────────────────────────────";

/// The verdict on `bytes` drawn on an 80x24 screen, with the detector told
/// the session runs `command`.
fn verdict(command: &[&str], bytes: &str) -> Verdict {
    let mut term = Term::with_callbacks(Size { cols: 80, rows: 24 }, Recorder::default());
    let command: Vec<String> = command.iter().map(|s| s.to_string()).collect();
    let settings = Settings {
        process_evidence: false,
        ..Settings::default()
    };
    let mut detector = Detector::new(settings, &command, 0);
    term.feed(bytes.as_bytes());
    for e in term.callbacks_mut().take() {
        detector.event(&e, 10);
    }
    detector.output(bytes.as_bytes(), 10);
    // Long after the output: timing says nothing, the screen decides.
    detector.verdict(term.screen(), 10_000)
}

/// A Claude Code screen with `typed` in its prompt box (rows joined with
/// `\r\n`), the cursor at the end of the typed text.
fn claude_box(transcript: &str, typed: &[&str]) -> String {
    let mut s = String::from("\u{1b}[H\u{1b}[2J ▐▛███▜▌   Claude Code v2.1.197\r\n\r\n");
    s.push_str(transcript);
    s.push_str(&format!("\r\n{RULE}\r\n"));
    for (i, line) in typed.iter().enumerate() {
        if i == 0 {
            s.push_str(&format!("❯\u{a0}{line}\r\n"));
        } else {
            s.push_str(&format!("  {line}\r\n"));
        }
    }
    s.push_str(&format!("{RULE}\r\n  ● high · /effort"));
    // Park the cursor after the typed text, as the CLI does.
    let rows_above = 3 + transcript.matches("\r\n").count() + 1 + typed.len();
    let last = typed.last().map_or(0, |l| l.chars().count());
    s.push_str(&format!("\u{1b}[{};{}H", rows_above, last + 3));
    s
}

fn assert_not_waiting(v: &Verdict) {
    assert_ne!(v.primary, Primary::Waiting, "false waiting: {v:?}");
}

#[test]
fn a_dialog_typed_into_claudes_prompt_box_is_not_waiting() {
    let v = verdict(
        &["claude"],
        &claude_box("", &["Do you want to proceed? ❯ 1. Yes"]),
    );
    assert_not_waiting(&v);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::PromptEditing))
    );
}

#[test]
fn a_multi_line_dialog_typed_into_claudes_prompt_box_is_not_waiting() {
    let typed = [
        "Do you want to proceed?",
        "❯ 1. Yes",
        "  2. No",
        "Esc to cancel · Tab to amend",
        "Apply these changes? [y/N]",
    ];
    let v = verdict(&["claude"], &claude_box("", &typed));
    assert_not_waiting(&v);
    assert_eq!(v.primary, Primary::Idle);
}

/// Auto mode's notice and its No-first permission (2.1.330 through a
/// gateway), typed into the prompt box or quoted in an answer, are text,
/// not the dialogs.
#[test]
fn auto_modes_dialogs_typed_or_quoted_are_not_waiting() {
    let typed = [
        "Auto mode can't check actions in this session",
        "Enter to stay in auto mode · shift+Tab to leave · Esc to cancel",
        "Do you want to proceed?",
        "❯ No",
        "  Yes",
        "Make auto mode your default permission mode?",
        "❯ Yes, set auto mode as my default permission mode",
        "  No, keep manual mode",
    ];
    let v = verdict(&["claude"], &claude_box("", &typed));
    assert_not_waiting(&v);
    assert_eq!(v.primary, Primary::Idle);
    let transcript = "● The notice reads:\r\n\r\n  Auto mode can't check actions in this session\r\n\r\n  Enter to stay in auto mode · Esc to cancel\r\n\r\n and then:\r\n Do you want to proceed?\r\n ❯ No\r\n   Yes\r\n\r\n✻ Worked for 3s";
    let v = verdict(&["claude"], &claude_box(transcript, &[""]));
    assert_not_waiting(&v);
    assert_eq!(v.primary, Primary::Idle);
}

#[test]
fn a_dialog_claude_quotes_in_its_answer_is_not_waiting() {
    let transcript = "● Here is what the dialog looks like:\r\n\r\n Do you want to proceed?\r\n ❯ 1. Yes\r\n   2. No\r\n\r\n Esc to cancel · Tab to amend\r\n\r\n✻ Worked for 3s";
    let v = verdict(&["claude"], &claude_box(transcript, &[""]));
    assert_not_waiting(&v);
    assert_eq!(v.primary, Primary::Idle);
}

#[test]
fn yes_no_typed_at_a_shell_prompt_is_not_waiting() {
    for typed in [
        "Apply these changes? [y/N]",
        "Do you want to proceed? ❯ 1. Yes",
        "Password:",
        "Continue?",
        "(Y)es/(N)o [Yes]:",
    ] {
        let v = verdict(&["bash"], &format!("dev@box:~/proj$ {typed}"));
        assert_not_waiting(&v);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Idle, Some(Detail::PromptEditing)),
            "{typed}"
        );
    }
}

#[test]
fn a_program_asking_y_n_on_the_cursor_row_is_waiting_for_input() {
    let screen = "dev@box:~/proj$ bash -c 'sleep 4; echo \"Apply these changes? [y/N]\"; read x'\r\nApply these changes? [y/N] ";
    let v = verdict(&["bash"], screen);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Waiting, Some(Detail::Input))
    );
    assert_eq!(v.signals[0].rule, "input.yes_no");
    assert!(v.signals[0].text.contains("[y/N]"));
}

#[test]
fn other_plain_questions_are_waiting_for_input() {
    for question in [
        "Proceed with installation (y/n)? ",
        "[sudo] password for dev: ",
        "Enter passphrase for key '/home/dev/.ssh/id_ed25519': ",
        "Overwrite config.toml? ",
        "Attempt to fix lint errors? (Y)es/(N)o [Yes]: ",
        "Press Enter to continue...",
    ] {
        let screen = format!("dev@box:~$ ./install.sh\r\nInstalling...\r\n{question}");
        let v = verdict(&[], &screen);
        assert_eq!(v.primary, Primary::Waiting, "{question}: {v:?}");
    }
}

#[test]
fn a_question_echoed_before_the_next_prompt_is_not_waiting() {
    let screen = "dev@box:~$ echo \"Apply these changes? [y/N]\"\r\nApply these changes? [y/N]\r\ndev@box:~$ ";
    let v = verdict(&["bash"], screen);
    assert_eq!((v.primary, v.detail), (Primary::Idle, Some(Detail::Ready)));
}

#[test]
fn a_question_with_text_after_the_cursor_is_not_waiting() {
    // The cursor went back to the start of the row: the program is not
    // waiting after its question (a progress line being redrawn, say).
    let screen = "Apply these changes? [y/N]\r";
    let v = verdict(&[], screen);
    assert_not_waiting(&v);
}

#[test]
fn an_option_list_typed_into_codexs_composer_is_not_waiting() {
    let screen = "\u{1b}[?1049h\u{1b}[H• Ran ls\r\n\r\n› Would you like to run the following command?\r\n  1. Yes, proceed (y)\r\n  2. No (esc)\r\n\r\n  gpt-5-codex default · ~/proj\r\n  ← for agents · ? for shortcuts";
    let v = verdict(&["codex"], screen);
    assert_not_waiting(&v);
    assert_eq!(v.primary, Primary::Idle);
}

#[test]
fn a_question_typed_into_geminis_composer_is_not_waiting() {
    let bar_top = "▄".repeat(80);
    let bar_bottom = "▀".repeat(80);
    let screen = format!(
        "\u{1b}[H Gemini CLI v0.61.0\r\n\r\n{bar_top}\r\n > Allow execution of [Shell]? ● 1. Allow once\r\n   2. Allow for this session\r\n{bar_bottom}\r\n workspace (/directory)"
    );
    let v = verdict(&["gemini"], &screen);
    assert_not_waiting(&v);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::PromptEditing))
    );
    // A blank row typed between paragraphs does not end the barred box:
    // the question on the cursor's row under it is typed too.
    let screen = format!(
        "\u{1b}[H Gemini CLI v0.61.0\r\n\r\n{bar_top}\r\n > Please change the greeting.\r\n   \r\n   Continue? [y/N]\r\n{bar_bottom}\r\n workspace (/directory)\u{1b}[6;19H"
    );
    let v = verdict(&["gemini"], &screen);
    assert_not_waiting(&v);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::PromptEditing))
    );
    // In 256 colours the composer is between rows of background colour,
    // blank as text (Gemini CLI 0.61 live without COLORTERM).
    let screen = "\u{1b}[H Gemini CLI v0.61.0\r\n\r\n\r\n > Continue? [y/N]\r\n\r\n workspace (/directory)\u{1b}[4;19H";
    let v = verdict(&["gemini"], screen);
    assert_not_waiting(&v);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::PromptEditing))
    );
}

/// Gemini CLI's 256-colour composer is a ` > ` row between blank rows,
/// which many a screen has: that shape alone names no agent.
#[test]
fn a_quoted_line_between_blank_rows_is_not_geminis_composer() {
    let screen = "\u{1b}[H$ cat notes.md\r\n# Notes\r\n\r\n > Continue? [y/N]\r\n\r\n$ ";
    let v = verdict(&[], screen);
    assert_ne!(v.agent.as_deref(), Some("gemini"), "{v:?}");
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::Ready)),
        "{v:?}"
    );
}

#[test]
fn a_question_typed_after_any_common_prompt_is_not_waiting() {
    let prompts = [
        "[dev@box src]$ ",
        "dev@box ~/src $ ",
        "~/src (main) $ ",
        "λ ",
        "➜  src git:(main) ",
        "dev@box ~> ",
        "dev@box% ",
        "postgres=# ",
        "In [1]: ",
        "irb(main):001> ",
        ">>> ",
    ];
    for prompt in prompts {
        for typed in [
            "echo Continue? [y/N]",
            "# Do you want to proceed?",
            "echo Password:",
        ] {
            for command in [&["bash"][..], &[][..]] {
                let v = verdict(command, &format!("{prompt}{typed}"));
                assert_ne!(
                    v.primary,
                    Primary::Waiting,
                    "typed {typed:?} after {prompt:?} ({command:?}) made a dialog: {v:?}"
                );
            }
        }
    }
}

#[test]
fn real_questions_are_still_waiting() {
    for question in [
        "Do you want to continue? [Y/n] ",
        "Overwrite 'a->b.txt'? [y/N] ",
        "Step #3 of 5: proceed? (y/n) ",
        "[sudo] password for dev: ",
        "Download 50% complete. Continue? [y/N] ",
    ] {
        let v = verdict(&[], question);
        assert_eq!(
            (v.primary, v.detail),
            (Primary::Waiting, Some(Detail::Input)),
            "{question:?}: {v:?}"
        );
    }
}

#[test]
fn a_monitor_redrawing_is_at_rest_and_a_progress_line_is_no_prompt() {
    let top = "top - 18:02:11 up 3 days,  2:01,  1 user,  load average: 0.10, 0.20, 0.30\r\n\
               Tasks: 123 total,   1 running, 122 sleeping,   0 stopped,   0 zombie\r\n\r\n\
               \u{1b}[7m    PID USER      PR  NI    VIRT    RES  %CPU COMMAND\u{1b}[m\r\n\
               \u{20}     1 root      20   0  167000  11000   0.0 systemd";
    let v = verdict(&["top"], top);
    assert_eq!(
        (v.primary, v.detail),
        (Primary::Idle, Some(Detail::Ready)),
        "{v:?}"
    );
    let v = verdict(&["bash"], "dev@box:~$ make\r\nDownloading deps... 45%");
    assert_ne!(v.primary, Primary::Idle, "{v:?}");
}

#[test]
fn opencode_is_read_from_its_documented_texts() {
    let v = verdict(
        &["opencode"],
        "  Build  claude-sonnet\r\n\r\n  △ Permission required\r\n  $ rm -rf build\r\n\r\n  Allow once   Allow always   Reject",
    );
    assert_eq!(
        (v.primary, v.detail, v.agent.as_deref()),
        (Primary::Waiting, Some(Detail::Permission), Some("opencode")),
        "{v:?}"
    );
    let v = verdict(
        &["opencode"],
        "  Thinking...\r\n\r\n  ■⬝⬝⬝⬝⬝⬝⬝  esc interrupt",
    );
    assert_eq!(v.primary, Primary::Active, "{v:?}");
}
