//! The integration tests, one binary (as ripgrep keeps them): each file
//! beside this one is a module, so `tests/common` is compiled once and a
//! change to the library links one test executable, not one per file.
//! `autotests = false` in Cargo.toml: a new file here must be declared
//! below, or it never runs. Run one file's tests with
//! `cargo test --test tests FILE::`.

mod common;

mod agents_live;
mod answer;
mod attach;
mod commands;
mod detect_cast_live;
mod detect_corpus;
mod detect_detector;
mod detect_dialogs;
mod detect_live;
mod detect_plain;
mod detect_replay;
mod detect_trust;
mod detect_typed;
mod ended;
mod fuzz_corpus;
mod history;
mod hooks;
mod hostile;
mod hostile_input;
mod hostile_terminal;
mod imports;
mod inbox;
mod protocol;
mod remote;
mod restore;
mod scripting;
mod supervisor;
mod tokenizer_vte;
mod tui;
mod tui_render;
mod tui_sizes;
mod upgrade;
mod vt_charset;
mod vt_lazy;
mod vt_sleep;
