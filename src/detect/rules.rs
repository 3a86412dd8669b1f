//! Screen and title rules as data: the TOML files under `src/detect/rules/`
//! (compiled in) and the user's `$XDG_CONFIG_HOME/heimdall/rules/*.toml`.
//!
//! This module owns the rule file format, its validation (every error names
//! the file and line) and the merge of user files over the built-in ones.
//! It does not look at screens: matching is [`super::screen`]'s job.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use regex::Regex;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Mutex;
use toml::Spanned;

use super::verdict::{Detail, Primary};

/// The built-in rule files, in the order their agents are tried.
const BUILTIN: [(&str, &str); 8] = [
    ("claude.toml", include_str!("rules/claude.toml")),
    ("codex.toml", include_str!("rules/codex.toml")),
    ("gemini.toml", include_str!("rules/gemini.toml")),
    ("aider.toml", include_str!("rules/aider.toml")),
    ("opencode.toml", include_str!("rules/opencode.toml")),
    ("shell.toml", include_str!("rules/shell.toml")),
    ("programs.toml", include_str!("rules/programs.toml")),
    ("generic.toml", include_str!("rules/generic.toml")),
];

/// A rule's regex, checked when its file is read and compiled the first
/// time it is matched: a session meets only its own agent's rules and the
/// common ones, and a compiled regex costs a supervisor 10-20 KiB. The
/// same text in several rules (or files) is one pattern, compiled once.
#[derive(Clone)]
pub struct Pattern(Arc<PatternInner>);

struct PatternInner {
    source: String,
    compiled: OnceLock<Regex>,
}

impl Pattern {
    /// The pattern for `source`, if it is a valid regex (parsed, not
    /// compiled: the syntax is what a rule's author gets wrong).
    pub fn checked(source: &str) -> Result<Pattern, String> {
        static INTERNED: OnceLock<Mutex<HashMap<String, Pattern>>> = OnceLock::new();
        let interned = INTERNED.get_or_init(Default::default);
        let mut map = interned.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = map.get(source) {
            return Ok(p.clone());
        }
        regex_syntax::Parser::new()
            .parse(source)
            .map_err(|e| e.to_string())?;
        let p = Pattern(Arc::new(PatternInner {
            source: source.to_owned(),
            compiled: OnceLock::new(),
        }));
        map.insert(source.to_owned(), p.clone());
        Ok(p)
    }

    pub fn source(&self) -> &str {
        &self.0.source
    }
}

impl std::ops::Deref for Pattern {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.0.compiled.get_or_init(|| {
            // Parsed when loaded; compiling can still exceed the regex
            // crate's size limit. Such a rule then never matches.
            Regex::new(&self.0.source).unwrap_or_else(|e| {
                tracing::warn!("rule pattern {:?} does not compile: {e}", self.0.source);
                never()
            })
        })
    }
}

/// A regex that matches nothing.
fn never() -> Regex {
    static NEVER: OnceLock<Regex> = OnceLock::new();
    NEVER
        .get_or_init(|| Regex::new(r"[^\s\S]").expect("a valid regex"))
        .clone()
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.0.source)
    }
}

/// The agent name that makes a file's rules apply to every session.
pub const ANY_AGENT: &str = "*";

/// A rule file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("cannot read rule file '{}'", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot list rule directory '{}'", path.display())]
    List {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
}

/// Where in a rule file: `file:line`.
struct Place<'a> {
    name: &'a str,
    text: &'a str,
}

impl Place<'_> {
    fn line(&self, span: Option<std::ops::Range<usize>>) -> String {
        match span {
            Some(span) => {
                let end = span.start.min(self.text.len());
                let line = 1 + self.text.as_bytes()[..end]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                format!("{}:{line}", self.name)
            }
            None => self.name.to_owned(),
        }
    }

    fn invalid(&self, span: std::ops::Range<usize>, message: impl Into<String>) -> RuleError {
        RuleError::Invalid {
            at: self.line(Some(span)),
            message: message.into(),
        }
    }
}

/// Part of the screen a condition looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// Every row.
    Screen,
    /// The last `lines` non-empty rows.
    Bottom,
    /// Rows below the last input box (all rows when there is none).
    BelowInput,
    /// The `lines` non-empty rows just above the last input box (none when
    /// there is no input box).
    AboveInput,
    /// The text typed into the last input box.
    Input,
    /// The cursor's row up to the cursor, and only when nothing follows the
    /// cursor on that row.
    CursorLine,
    /// The `lines` non-empty rows above the cursor's row.
    AboveCursor,
}

impl Region {
    fn parse(name: &str) -> Option<Region> {
        Some(match name {
            "screen" => Region::Screen,
            "bottom" => Region::Bottom,
            "below_input" => Region::BelowInput,
            "above_input" => Region::AboveInput,
            "input" => Region::Input,
            "cursor_line" => Region::CursorLine,
            "above_cursor" => Region::AboveCursor,
            _ => return None,
        })
    }
}

/// One test over one region; a rule matches when all its conditions do.
#[derive(Debug, Clone)]
pub struct Condition {
    pub region: Region,
    /// At most this many non-empty rows of the region (from its bottom, or
    /// for `above_*` the nearest ones); 0 means all.
    pub lines: usize,
    /// Each must match some row; with `ordered`, each on a row below the
    /// previous one's.
    pub all: Vec<Pattern>,
    pub ordered: bool,
    /// At least one must match some row (when not empty).
    pub any: Vec<Pattern>,
    /// None may match any row.
    pub none: Vec<Pattern>,
    /// Only on the alternate screen (`true`) or only on the main one.
    pub alternate: Option<bool>,
}

/// A screen rule: when its conditions hold, the screen says `state`.
#[derive(Debug, Clone)]
pub struct ScreenRule {
    /// `agent.rule`, as signals name it.
    pub name: String,
    pub primary: Primary,
    pub detail: Option<Detail>,
    /// Higher is tried first; ties keep file order.
    pub priority: i32,
    pub conditions: Vec<Condition>,
    /// Whether a match also names the agent (rules of `*` files name
    /// none, unless they say `names_agent`).
    pub names_agent: Option<String>,
}

/// A title rule: the first that matches the window title decides what
/// the title says.
#[derive(Debug, Clone)]
pub struct TitleRule {
    pub name: String,
    pub pattern: Pattern,
    pub primary: Primary,
    pub detail: Option<Detail>,
}

/// How to find an agent's input box, whose text is the user's and so is
/// masked from every region but `input`.
#[derive(Debug, Clone)]
pub struct InputBox {
    /// The row the user types on.
    pub prompt: Pattern,
    /// When set, the row right above the prompt must match.
    pub above: Option<Pattern>,
    /// A row at most `span` rows below the prompt that ends the box; the
    /// rows between are typed text.
    pub below: Pattern,
    pub span: usize,
}

/// Everything known about one agent (or, for `*`, about any session).
#[derive(Debug, Clone)]
pub struct AgentRules {
    pub name: String,
    /// Where the rules came from (`built-in claude.toml` or a path).
    pub origin: String,
    /// Program names (argv[0]'s file name) that are this agent.
    pub commands: Vec<String>,
    /// A title matching one of these names the agent.
    pub identify_title: Vec<Pattern>,
    /// A screen row matching one of these names the agent.
    pub identify_screen: Vec<Pattern>,
    pub input: Option<InputBox>,
    pub rules: Vec<ScreenRule>,
    pub titles: Vec<TitleRule>,
}

impl AgentRules {
    pub fn is_any(&self) -> bool {
        self.name == ANY_AGENT
    }
}

/// All agents' rules, built-in then user, merged.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub agents: Vec<AgentRules>,
}

impl RuleSet {
    /// The agent named `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentRules> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The agent whose program `command` runs, from argv[0]'s file name.
    pub fn agent_for_command(&self, command: &[String]) -> Option<&AgentRules> {
        let first = command.first()?;
        let base = Path::new(first).file_name()?.to_str()?;
        self.agents
            .iter()
            .find(|a| !a.is_any() && a.commands.iter().any(|c| c == base))
    }

    /// Merge one file's agent in: rules with the same name replace the
    /// existing ones in place, new ones are added; identification and the
    /// input box are replaced when the file gives them.
    fn merge(&mut self, file: AgentRules) {
        let Some(existing) = self.agents.iter_mut().find(|a| a.name == file.name) else {
            self.agents.push(file);
            return;
        };
        existing.origin = format!("{} + {}", existing.origin, file.origin);
        existing.commands.extend(file.commands);
        existing.identify_title.extend(file.identify_title);
        existing.identify_screen.extend(file.identify_screen);
        if file.input.is_some() {
            existing.input = file.input;
        }
        for rule in file.rules {
            match existing.rules.iter_mut().find(|r| r.name == rule.name) {
                Some(old) => *old = rule,
                None => existing.rules.push(rule),
            }
        }
        for rule in file.titles {
            match existing.titles.iter_mut().find(|r| r.name == rule.name) {
                Some(old) => *old = rule,
                None => existing.titles.push(rule),
            }
        }
    }

    /// Keep the `*` agents last, so that an agent's own rules are tried
    /// before the generic ones at equal priority.
    fn order(&mut self) {
        self.agents.sort_by_key(AgentRules::is_any);
    }
}

/// The built-in rules, compiled once.
pub fn builtin() -> Arc<RuleSet> {
    static BUILTIN_SET: OnceLock<Arc<RuleSet>> = OnceLock::new();
    BUILTIN_SET
        .get_or_init(|| {
            let mut set = RuleSet::default();
            for (name, text) in BUILTIN {
                // The built-in files are tested (`builtin_rules_compile`),
                // so a failure here is a build defect; skipping the file
                // keeps hm running with the other agents' rules.
                if let Ok(agent) = parse(&format!("built-in {name}"), text) {
                    set.merge(agent);
                }
            }
            set.order();
            Arc::new(set)
        })
        .clone()
}

/// The built-in rules with the `*.toml` files of `user_dir` merged over
/// them (in file-name order). A missing directory is no error.
pub fn load_rules(user_dir: Option<&Path>) -> Result<RuleSet, RuleError> {
    let mut set = (*builtin()).clone();
    let Some(dir) = user_dir else {
        return Ok(set);
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(set),
        Err(source) => {
            return Err(RuleError::List {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|source| RuleError::Read {
            path: path.clone(),
            source,
        })?;
        set.merge(parse(&path.display().to_string(), &text)?);
    }
    set.order();
    Ok(set)
}

// The file format, as serde sees it; spans keep line numbers for errors.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    agent: Spanned<String>,
    #[serde(default)]
    identify: IdentifySpec,
    input: Option<InputSpec>,
    #[serde(default)]
    rule: Vec<RuleSpec>,
    #[serde(default)]
    title: Vec<TitleSpec>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct IdentifySpec {
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default)]
    title: Vec<Spanned<String>>,
    #[serde(default)]
    screen: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputSpec {
    prompt: Spanned<String>,
    above: Option<Spanned<String>>,
    below: Spanned<String>,
    #[serde(default = "default_span")]
    span: usize,
}

fn default_span() -> usize {
    8
}

// A rule's own keys plus one condition's, spelled out rather than
// `#[serde(flatten)]`: flattening loses the spans of `Spanned` values.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    name: Spanned<String>,
    state: Spanned<String>,
    detail: Option<Spanned<String>>,
    priority: Option<i32>,
    #[serde(default)]
    names_agent: bool,
    region: Option<Spanned<String>>,
    #[serde(default)]
    lines: usize,
    #[serde(default)]
    all: Vec<Spanned<String>>,
    #[serde(default)]
    ordered: bool,
    #[serde(default)]
    any: Vec<Spanned<String>>,
    #[serde(default)]
    none: Vec<Spanned<String>>,
    alternate: Option<bool>,
    #[serde(default)]
    when: Vec<ConditionSpec>,
}

impl RuleSpec {
    /// The condition given by the rule's own keys.
    fn own_condition(&self) -> ConditionSpec {
        ConditionSpec {
            region: self.region.clone(),
            lines: self.lines,
            all: self.all.clone(),
            ordered: self.ordered,
            any: self.any.clone(),
            none: self.none.clone(),
            alternate: self.alternate,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ConditionSpec {
    region: Option<Spanned<String>>,
    #[serde(default)]
    lines: usize,
    #[serde(default)]
    all: Vec<Spanned<String>>,
    #[serde(default)]
    ordered: bool,
    #[serde(default)]
    any: Vec<Spanned<String>>,
    #[serde(default)]
    none: Vec<Spanned<String>>,
    alternate: Option<bool>,
}

impl ConditionSpec {
    fn is_empty(&self) -> bool {
        self.region.is_none()
            && self.all.is_empty()
            && self.any.is_empty()
            && self.none.is_empty()
            && self.alternate.is_none()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TitleSpec {
    name: Spanned<String>,
    pattern: Spanned<String>,
    state: Spanned<String>,
    detail: Option<Spanned<String>>,
}

/// One rule file's agent, validated. `name` is how errors name the file.
pub fn parse(name: &str, text: &str) -> Result<AgentRules, RuleError> {
    let place = Place { name, text };
    let spec: FileSpec = toml::from_str(text).map_err(|e| RuleError::Invalid {
        at: place.line(e.span()),
        message: e.message().trim().replace('\n', "; "),
    })?;
    let agent = spec.agent.get_ref().clone();
    if agent.is_empty() {
        return Err(place.invalid(spec.agent.span(), "'agent' must not be empty"));
    }
    let regexes = |list: &[Spanned<String>]| -> Result<Vec<Pattern>, RuleError> {
        list.iter().map(|p| regex(&place, p)).collect()
    };
    let input = match &spec.input {
        Some(i) => Some(InputBox {
            prompt: regex(&place, &i.prompt)?,
            above: i.above.as_ref().map(|a| regex(&place, a)).transpose()?,
            below: regex(&place, &i.below)?,
            span: i.span,
        }),
        None => None,
    };
    let mut rules = Vec::new();
    for r in &spec.rule {
        let (primary, detail) = state(&place, &r.state, r.detail.as_ref())?;
        let mut conditions = Vec::new();
        let own = r.own_condition();
        if !own.is_empty() {
            conditions.push(condition(&place, &own, &r.name)?);
        }
        for c in &r.when {
            conditions.push(condition(&place, c, &r.name)?);
        }
        if conditions.is_empty() {
            return Err(place.invalid(r.name.span(), "a rule needs a region and patterns"));
        }
        let names_agent = if agent != ANY_AGENT || r.names_agent {
            Some(if agent == ANY_AGENT {
                r.name.get_ref().split('.').next().unwrap_or("").to_owned()
            } else {
                agent.clone()
            })
        } else {
            None
        };
        rules.push(ScreenRule {
            name: rule_name(&agent, r.name.get_ref()),
            primary,
            detail,
            priority: r.priority.unwrap_or_else(|| default_priority(primary)),
            conditions,
            names_agent,
        });
    }
    let mut titles = Vec::new();
    for t in &spec.title {
        let (primary, detail) = state(&place, &t.state, t.detail.as_ref())?;
        titles.push(TitleRule {
            name: rule_name(&agent, t.name.get_ref()),
            pattern: regex(&place, &t.pattern)?,
            primary,
            detail,
        });
    }
    Ok(AgentRules {
        name: agent,
        origin: name.to_owned(),
        commands: spec.identify.commands,
        identify_title: regexes(&spec.identify.title)?,
        identify_screen: regexes(&spec.identify.screen)?,
        input,
        rules,
        titles,
    })
}

/// `agent.rule`; the `*` files' rules keep their own names, which start
/// with what they recognise (`shell.prompt`, `input.yes_no`).
fn rule_name(agent: &str, rule: &str) -> String {
    if agent == ANY_AGENT {
        rule.to_owned()
    } else {
        format!("{agent}.{rule}")
    }
}

/// Waiting before active before idle, unless a rule says otherwise: a
/// dialog drawn over a busy screen is what the person must see.
fn default_priority(primary: Primary) -> i32 {
    match primary {
        Primary::Waiting => 300,
        Primary::Active | Primary::Stuck => 200,
        Primary::Idle => 100,
        Primary::Dead | Primary::Unknown => 0,
    }
}

fn regex(place: &Place<'_>, pattern: &Spanned<String>) -> Result<Pattern, RuleError> {
    Pattern::checked(pattern.get_ref()).map_err(|e| {
        let why = e;
        // The regex crate's message spans lines (a caret diagram); its
        // last line says what is wrong.
        let last = why.lines().last().unwrap_or("invalid regex").trim();
        place.invalid(pattern.span(), format!("bad regex: {last}"))
    })
}

fn state(
    place: &Place<'_>,
    state: &Spanned<String>,
    detail: Option<&Spanned<String>>,
) -> Result<(Primary, Option<Detail>), RuleError> {
    let primary = match Primary::from_name(state.get_ref()) {
        Some(p @ (Primary::Idle | Primary::Active | Primary::Waiting)) => p,
        _ => {
            return Err(place.invalid(
                state.span(),
                format!(
                    "unknown state '{}' (expected idle, active or waiting)",
                    state.get_ref().escape_debug()
                ),
            ));
        }
    };
    let detail = match detail {
        None => None,
        Some(d) => {
            let parsed = Detail::from_name(d.get_ref()).ok_or_else(|| {
                place.invalid(
                    d.span(),
                    format!("unknown detail '{}'", d.get_ref().escape_debug()),
                )
            })?;
            if parsed.primary() != primary {
                return Err(place.invalid(
                    d.span(),
                    format!(
                        "detail '{}' belongs to '{}', not '{}'",
                        parsed.name(),
                        parsed.primary().name(),
                        primary.name()
                    ),
                ));
            }
            Some(parsed)
        }
    };
    Ok((primary, detail))
}

fn condition(
    place: &Place<'_>,
    spec: &ConditionSpec,
    rule: &Spanned<String>,
) -> Result<Condition, RuleError> {
    let region = match &spec.region {
        Some(r) => Region::parse(r.get_ref()).ok_or_else(|| {
            place.invalid(
                r.span(),
                format!(
                    "unknown region '{}' (expected screen, bottom, below_input, above_input, \
                     input, cursor_line or above_cursor)",
                    r.get_ref().escape_debug()
                ),
            )
        })?,
        None => Region::Screen,
    };
    if spec.all.is_empty()
        && spec.any.is_empty()
        && spec.none.is_empty()
        && spec.alternate.is_none()
    {
        return Err(place.invalid(rule.span(), "a condition needs all, any or none patterns"));
    }
    let list = |l: &[Spanned<String>]| -> Result<Vec<Pattern>, RuleError> {
        l.iter().map(|p| regex(place, p)).collect()
    };
    Ok(Condition {
        region,
        lines: spec.lines,
        all: list(&spec.all)?,
        ordered: spec.ordered,
        any: list(&spec.any)?,
        none: list(&spec.none)?,
        alternate: spec.alternate,
    })
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Region::Screen => "screen",
            Region::Bottom => "bottom",
            Region::BelowInput => "below_input",
            Region::AboveInput => "above_input",
            Region::Input => "input",
            Region::CursorLine => "cursor_line",
            Region::AboveCursor => "above_cursor",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_rules_compile() {
        for (name, text) in BUILTIN {
            if let Err(e) = parse(name, text) {
                panic!("{e}");
            }
        }
        assert!(builtin().agent("claude").is_some());
        assert!(builtin().agents.last().is_some_and(AgentRules::is_any));
    }

    #[test]
    fn a_bad_regex_names_file_and_line() {
        let text = "agent = \"x\"\n\n[[rule]]\nname = \"r\"\nstate = \"idle\"\nall = ['(']\n";
        let err = parse("mine.toml", text).unwrap_err().to_string();
        assert!(err.starts_with("mine.toml:6: bad regex"), "{err}");
        assert_eq!(err.lines().count(), 1);
    }

    #[test]
    fn a_syntax_error_names_file_and_line() {
        let text = "agent = \"x\"\n[[rule]\n";
        let err = parse("mine.toml", text).unwrap_err().to_string();
        assert!(err.starts_with("mine.toml:2:"), "{err}");
    }

    #[test]
    fn an_unknown_state_or_misplaced_detail_is_refused() {
        let text = "agent = \"x\"\n[[rule]]\nname = \"r\"\nstate = \"busy\"\nall = ['a']\n";
        let err = parse("f.toml", text).unwrap_err().to_string();
        assert!(err.contains("f.toml:4: unknown state 'busy'"), "{err}");
        let text = "agent = \"x\"\n[[rule]]\nname = \"r\"\nstate = \"idle\"\ndetail = \"permission\"\nall = ['a']\n";
        let err = parse("f.toml", text).unwrap_err().to_string();
        assert!(
            err.contains("f.toml:5: detail 'permission' belongs to 'waiting'"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let text = "agent = \"x\"\n[[rule]]\nname = \"r\"\nstate = \"idle\"\nal = ['a']\n";
        assert!(parse("f.toml", text).is_err());
    }

    #[test]
    fn a_user_rule_with_the_same_name_replaces_the_builtin_one() {
        let dir = tempfile::tempdir().unwrap();
        let builtin_count = builtin().agent("claude").unwrap().rules.len();
        std::fs::write(
            dir.path().join("claude.toml"),
            "agent = \"claude\"\n[[rule]]\nname = \"permission\"\nstate = \"waiting\"\n\
             detail = \"permission\"\nall = ['^MY DIALOG$']\n\
             [[rule]]\nname = \"brand_new\"\nstate = \"idle\"\nall = ['^zzz$']\n",
        )
        .unwrap();
        let set = load_rules(Some(dir.path())).unwrap();
        let claude = set.agent("claude").unwrap();
        assert_eq!(claude.rules.len(), builtin_count + 1);
        let permission = claude
            .rules
            .iter()
            .find(|r| r.name == "claude.permission")
            .unwrap();
        assert_eq!(permission.conditions[0].all[0].as_str(), "^MY DIALOG$");
    }

    #[test]
    fn a_missing_user_directory_is_no_error() {
        let set = load_rules(Some(Path::new("/nonexistent/heimdall/rules"))).unwrap();
        assert_eq!(set.agents.len(), builtin().agents.len());
    }

    #[test]
    fn a_bad_user_file_is_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(
            &path,
            "agent = \"claude\"\n[[title]]\nname = \"t\"\nstate = \"idle\"\npattern = '[a'\n",
        )
        .unwrap();
        let err = load_rules(Some(dir.path())).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}:5: bad regex", path.display())),
            "{err}"
        );
    }
}
