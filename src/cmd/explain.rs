//! `hm explain ID`: a session's verdict with the signals that decided it
//! and the evidence table behind them.

use std::io::Write;

use anyhow::Result;

use crate::cli::ExplainArgs;
use crate::client::view::SessionView;
use crate::client::{self, find_session, human_ms};
use crate::config::Config;
use crate::protocol::conn;

pub fn explain(args: ExplainArgs, config: &Config) -> Result<i32> {
    let dir = client::socket_dir(&args.dir, config);
    let session = find_session(&dir, &args.id)?;
    let (info, st) = client::runtime()?.block_on(client::answered(&session.id, async {
        Ok(conn::info_status_at(&session.sock).await?)
    }))?;
    let mut out = std::io::stdout().lock();
    let view = SessionView::live(&session.id, &st, info.as_ref());
    let mut v = serde_json::to_value(&view)?;
    let evidence = info
        .as_ref()
        .and_then(|i| i.evidence.clone())
        .unwrap_or_else(|| serde_json::json!([]));
    let classifier = info.as_ref().map(|i| i.classifier.as_str());
    // The session clock when the state was reported, which the evidence's
    // `since_ms` count on.
    let now = info
        .as_ref()
        .and_then(|i| i.state.as_ref())
        .and_then(|s| s.clock_ms);
    if args.json {
        // Each row with its age too, as the signals have theirs.
        let mut evidence = evidence;
        for row in evidence.as_array_mut().into_iter().flatten() {
            if let (Some(age), Some(map)) = (age_ms(row, now), row.as_object_mut()) {
                map.insert("age_ms".into(), age.into());
            }
        }
        v["evidence"] = evidence;
        if let Some(i) = &info {
            v["automation"] = serde_json::to_value(&i.automation)?;
            v["actions"] = serde_json::to_value(&i.actions)?;
        }
        writeln!(out, "{v}")?;
        return Ok(0);
    }
    let classifier = classifier.unwrap_or("?");
    writeln!(
        out,
        "{}: {} for {} ({} classifier)",
        crate::client::shown_id(&session.id),
        view.label(),
        human_ms(u64::from(st.state_ms)),
        classifier
    )?;
    if let Some(x) = v["health"].as_str() {
        writeln!(out, "  health: {x}")?;
    }
    // Which agent, what named it, and whether automation may act for it.
    let row = |rule: &str| {
        evidence
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["rule"] == rule))
    };
    if let Some(x) = v["agent"].as_str() {
        match row("agent").and_then(|r| r["source"].as_str()) {
            Some(by) => writeln!(out, "  agent: {x} (named by its {by})")?,
            None => writeln!(out, "  agent: {x}")?,
        }
    }
    if let Some(x) = row("agent.identity").and_then(|r| r["value"].as_str()) {
        writeln!(out, "  identity: {x}")?;
    }
    let signals = v["signals"].as_array().cloned().unwrap_or_default();
    if signals.is_empty() {
        let why = if classifier == "agent" {
            "no evidence decided"
        } else {
            "this classifier goes by output timing alone; --classifier agent explains itself"
        };
        writeln!(out, "signals: none ({why})")?;
    } else {
        writeln!(out, "signals, strongest first:")?;
        for s in &signals {
            writeln!(out, "  {}", describe_row(s))?;
        }
    }
    if let Some(rows) = evidence.as_array().filter(|r| !r.is_empty()) {
        writeln!(out, "evidence:")?;
        for row in rows {
            writeln!(out, "  {}", describe_row(&aged(row, now)))?;
        }
    }
    if let Some(i) = &info {
        answers(i, &mut out)?;
    }
    Ok(0)
}

/// The dialog on screen, the automation rules and the answers given.
fn answers(info: &crate::protocol::Info, out: &mut impl Write) -> Result<()> {
    // Whole rows and subjects (`paths::sanitize` cuts at 80), with what a
    // terminal would act on replaced.
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect()
    };
    if let Some(d) = &info.dialog {
        let about = d
            .subject
            .as_deref()
            .map(|s| format!(" about {}", quoted(&clean(s))))
            .unwrap_or_default();
        let answers = if d.answers.is_empty() {
            "no answer known".to_owned()
        } else {
            format!("hm can {}", d.answers.join(", "))
        };
        writeln!(
            out,
            "dialog {}: {}{about} · {answers} · fingerprint {}",
            d.id, d.rule, d.fingerprint
        )?;
    }
    if !info.automation.is_empty() {
        writeln!(out, "automation:")?;
        for a in &info.automation {
            let mut line = format!(
                "  {}  {} {}",
                a.at,
                a.answer,
                a.detail.map_or("?", |d| d.name())
            );
            if let Some(agent) = &a.agent {
                line.push_str(&format!(" ({agent})"));
            }
            if let Some(s) = &a.subject {
                line.push_str(&format!(" subject {}", quoted(&clean(s))));
            }
            line.push_str(&format!(" after {}", human_ms(a.dwell_ms)));
            if let Some(due) = a.due_in_ms {
                line.push_str(&format!(" · answers the dialog in {}", human_ms(due)));
            }
            writeln!(out, "{line}")?;
        }
    }
    if !info.actions.is_empty() {
        writeln!(out, "answers given, latest last:")?;
        let now = crate::clock::unix_ms();
        for a in &info.actions {
            let by = if a.by == "hand" {
                "by hand".to_owned()
            } else {
                format!("by automation ({})", a.by)
            };
            let about = a
                .subject
                .as_deref()
                .map(|s| format!(" {}", quoted(&clean(s))))
                .unwrap_or_default();
            // `choose 2`: the keys alone may not say which option it was.
            let answer = match a.option {
                Some(n) => format!("{} {n}", a.answer),
                None => a.answer.clone(),
            };
            writeln!(
                out,
                "  {} ago  {answer} {} {by}{about} · keys {}",
                human_ms(now.saturating_sub(a.at_unix_ms)),
                a.rule,
                a.keys.join(" ")
            )?;
            // A program that went on without the later keys (`read -n
            // 1`) was answered: said so, not as an answer stopped short.
            match (a.stopped_short(), &a.unfinished) {
                (Some(why), _) => writeln!(out, "    stopped short: {}", clean(why))?,
                (None, Some(why)) => writeln!(out, "    {}", clean(why))?,
                (None, None) => {}
            }
            for row in &a.rows {
                writeln!(out, "    │ {}", clean(row))?;
            }
        }
    }
    Ok(())
}

/// An evidence row with its age, as the signals above it say theirs:
/// `age_ms`, how long ago it was first seen, where the row has
/// `since_ms`, the session clock's time of it (`since_ms=57` beside
/// `age_ms=1949` read as two ages). `now` is the session clock when the
/// state was reported; without it the row is left as it is. `--json`
/// gives both.
fn aged(row: &serde_json::Value, now: Option<u64>) -> serde_json::Value {
    let mut row = row.clone();
    if let (Some(age), Some(map)) = (age_ms(&row, now), row.as_object_mut()) {
        map.remove("since_ms");
        map.insert("age_ms".into(), age.into());
    }
    row
}

/// How long ago an evidence row was first seen: `now` (the session clock
/// when the state was reported) less its `since_ms`; `None` without
/// either.
fn age_ms(row: &serde_json::Value, now: Option<u64>) -> Option<u64> {
    let since = row.get("since_ms")?.as_u64()?;
    Some(now?.saturating_sub(since))
}

/// One signal or evidence row on a line: its source and rule, then the
/// other fields as `key=value`, the matched text quoted last.
fn describe_row(row: &serde_json::Value) -> String {
    let Some(map) = row.as_object() else {
        return row.to_string();
    };
    let mut parts = Vec::new();
    for key in ["source", "rule"] {
        if let Some(x) = map.get(key).and_then(|x| x.as_str()) {
            parts.push(x.to_string());
        }
    }
    for (key, value) in map {
        if matches!(key.as_str(), "source" | "rule" | "text") {
            continue;
        }
        let value = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        parts.push(format!("{key}={value}"));
    }
    if let Some(text) = map.get("text").and_then(|x| x.as_str())
        && !text.is_empty()
    {
        parts.push(quoted(&crate::paths::sanitize(text)));
    }
    parts.join("  ")
}

/// Text in double quotes, as a person reads it: a quote or backslash in
/// it escaped, the characters that show nothing or turn the text around
/// (zero-width, bidirectional controls) named, everything else as it is
/// (Rust's `{:?}` wrote the non-breaking space after Claude Code's `❯` as
/// `\u{a0}`).
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\u{a0}' => out.push(' '),
            c if crate::paths::invisible(c) => {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    /// A row's matched text reads as on screen: Claude Code's prompt
    /// `❯` and its non-breaking space read `❯\u{a0}draft` before.
    #[test]
    fn a_rows_text_is_quoted_as_a_person_reads_it() {
        let row = serde_json::json!({"source": "screen", "rule": "claude.prompt_typed",
            "text": "❯\u{a0}say \"hi\""});
        assert_eq!(
            super::describe_row(&row),
            "screen  claude.prompt_typed  \"❯ say \\\"hi\\\"\""
        );
        // What shows nothing, or turns the text around, is named.
        assert_eq!(
            super::quoted("a\u{202e}b\u{200b}"),
            "\"a\\u{202e}b\\u{200b}\""
        );
    }

    /// An evidence row says how long ago it was first seen, as a signal
    /// does, not the session clock's time of it.
    #[test]
    fn an_evidence_row_says_its_age() {
        let row = serde_json::json!({"source": "screen", "rule": "input.yes_no",
            "since_ms": 57, "fresh": true, "value": "waiting · input"});
        assert_eq!(
            super::describe_row(&super::aged(&row, Some(2006))),
            "screen  input.yes_no  age_ms=1949  fresh=true  value=waiting · input"
        );
        // No clock reported (an older supervisor): as it came.
        assert!(super::describe_row(&super::aged(&row, None)).contains("since_ms=57"));
    }
}
