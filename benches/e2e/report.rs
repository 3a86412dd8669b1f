//! Medians, percentiles and markdown tables; and the list of targets the
//! issue sets, checked against this run.

use std::fmt::Write as _;

pub fn percentile(v: &[f64], p: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    // Nearest rank.
    let rank = ((p / 100.0) * s.len() as f64).ceil().max(1.0) as usize;
    Some(s[rank.min(s.len()) - 1])
}

pub fn median(v: &[f64]) -> Option<f64> {
    percentile(v, 50.0)
}

/// A number with a sensible number of digits, or a dash.
pub fn num(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

pub fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{:.1} %", x * 100.0))
}

/// A markdown table printed as it is built, and kept for the summary.
#[derive(Debug, Default)]
pub struct Table {
    pub text: String,
}

impl Table {
    pub fn new(title: &str, headers: &[&str]) -> Table {
        let mut text = format!("\n### {title}\n\n| {} |\n|", headers.join(" | "));
        for _ in headers {
            text.push_str("---|");
        }
        text.push('\n');
        Table { text }
    }

    pub fn row(&mut self, cells: &[String]) {
        let _ = writeln!(self.text, "| {} |", cells.join(" | "));
    }

    pub fn note(&mut self, line: &str) {
        let _ = write!(self.text, "\n{line}\n");
    }

    pub fn print(&self) {
        println!("{}", self.text);
    }
}

/// One target of the issue, checked.
#[derive(Debug)]
pub struct Check {
    pub what: String,
    pub goal: String,
    pub got: String,
    pub pass: Option<bool>,
}

#[derive(Debug, Default)]
pub struct Checks(pub Vec<Check>);

impl Checks {
    pub fn add(&mut self, what: &str, goal: &str, got: String, pass: Option<bool>) {
        self.0.push(Check {
            what: what.into(),
            goal: goal.into(),
            got,
            pass,
        });
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new("Targets", &["target", "goal", "this run", "met"]);
        for c in &self.0 {
            let met = match c.pass {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "not measured",
            };
            t.row(&[c.what.clone(), c.goal.clone(), c.got.clone(), met.into()]);
        }
        t
    }
}
