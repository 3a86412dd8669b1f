//! The rule file format: what a `*.toml` rule file may say, as serde sees
//! it, and [`parse`], which turns one file into an agent's validated
//! [`AgentRules`]. Every error names the file and line (`file:line:
//! message`). It is separate from the rule model in `rules` because it is
//! the only part that knows TOML, spans and the spelling of states,
//! details and regions; merging files and the built-in set stay there.

use serde::Deserialize;
use toml::Spanned;

use super::{
    ANY_AGENT, ActionRule, AgentRules, Answer, Condition, InputBox, Key, Pattern, Region,
    RuleError, ScreenRule, Step, SubjectRule, TitleRule,
};
use crate::verdict::{Detail, Primary};

/// Where in a rule file: `file:line`.
struct Place<'a> {
    name: &'a str,
    text: &'a str,
    /// A built-in file, whose regexes the tests have checked.
    builtin: bool,
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
    #[serde(default)]
    action: Vec<ActionSpec>,
    /// Lists of patterns several rules share, each used as `{name}` in a
    /// rule's pattern list (a `{` cannot start a regex, so nothing else
    /// can read so).
    #[serde(default)]
    patterns: std::collections::BTreeMap<String, Vec<Spanned<String>>>,
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
    /// Whether the box alone, found on a screen, names the agent.
    #[serde(default = "default_true")]
    names_agent: bool,
}

fn default_span() -> usize {
    8
}

fn default_true() -> bool {
    true
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
    subject: Option<SubjectSpec>,
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
struct SubjectSpec {
    region: Option<Spanned<String>>,
    #[serde(default)]
    lines: usize,
    patterns: Spanned<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionSpec {
    rule: Spanned<RuleNames>,
    answer: Spanned<String>,
    keys: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    requires: Vec<Spanned<String>>,
    #[serde(default)]
    then: Vec<StepSpec>,
}

/// An action's `rule`: one name, or several dialogs answered alike.
#[derive(Deserialize)]
#[serde(untagged, expecting = "a rule's name, or a list of rules' names")]
enum RuleNames {
    One(String),
    Several(Vec<String>),
}

impl RuleNames {
    fn names(&self) -> &[String] {
        match self {
            RuleNames::One(name) => std::slice::from_ref(name),
            RuleNames::Several(names) => names,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepSpec {
    keys: Spanned<Vec<Spanned<String>>>,
    requires: Spanned<Vec<Spanned<String>>>,
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
    parse_at(Place {
        name,
        text,
        builtin: false,
    })
}

/// A built-in rule file's agent. Its regexes are not parsed now but when
/// first matched, most of them never: `builtin_rules_compile` has checked
/// them, and parsing a hundred patterns would cost every supervisor
/// start-up time and leave it the parser's freed scraps, which the
/// allocator keeps for reuse rather than give back.
pub fn parse_builtin(name: &str, text: &str) -> Result<AgentRules, RuleError> {
    parse_at(Place {
        name,
        text,
        builtin: true,
    })
}

fn parse_at(place: Place<'_>) -> Result<AgentRules, RuleError> {
    let (name, text) = (place.name, place.text);
    let mut spec: FileSpec = toml::from_str(text).map_err(|e| RuleError::Invalid {
        at: place.line(e.span()),
        message: e.message().trim().replace('\n', "; "),
    })?;
    spec.expand(&place)?;
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
            names_agent: i.names_agent,
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
        let subject = match &r.subject {
            Some(s) => Some(subject(&place, s, conditions[0].region)?),
            None => None,
        };
        rules.push(ScreenRule {
            name: rule_name(&agent, r.name.get_ref()),
            primary,
            detail,
            priority: r.priority.unwrap_or_else(|| default_priority(primary)),
            conditions,
            names_agent,
            subject,
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
    let mut actions = Vec::new();
    for a in &spec.action {
        actions.extend(action(&place, &agent, a)?);
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
        actions,
    })
}

/// A rule's `subject`: where it looks (the rule's own region unless it
/// says) and patterns that each capture a group named `subject`.
fn subject(
    place: &Place<'_>,
    spec: &SubjectSpec,
    rule_region: Region,
) -> Result<SubjectRule, RuleError> {
    let region = match &spec.region {
        Some(r) => parse_region(place, r)?,
        None => rule_region,
    };
    let mut patterns = Vec::new();
    for p in spec.patterns.get_ref() {
        // Cheaper than compiling the regex to ask for its group names,
        // and says what is wrong in the same words.
        let src = p.get_ref();
        if !src.contains("(?P<subject>") && !src.contains("(?<subject>") {
            return Err(place.invalid(
                p.span(),
                "a subject pattern needs a group named 'subject', e.g. '\\$ (?P<subject>.+)'",
            ));
        }
        patterns.push(regex(place, p)?);
    }
    if patterns.is_empty() {
        return Err(place.invalid(spec.patterns.span(), "a subject needs at least one pattern"));
    }
    Ok(SubjectRule {
        region,
        lines: spec.lines,
        patterns,
    })
}

/// An `[[action]]`: which rules' dialogs, which answer, which keys; an
/// [`ActionRule`] for each rule it names.
fn action(place: &Place<'_>, agent: &str, spec: &ActionSpec) -> Result<Vec<ActionRule>, RuleError> {
    let answer = Answer::from_name(spec.answer.get_ref()).ok_or_else(|| {
        place.invalid(
            spec.answer.span(),
            format!(
                "unknown answer '{}' (expected approve, deny, always or choose)",
                spec.answer.get_ref().escape_debug()
            ),
        )
    })?;
    let keys = key_list(place, &spec.keys)?;
    // A choice picks the option asked for, and only a choice knows one.
    let picks = keys.contains(&Key::Option)
        || spec
            .then
            .iter()
            .any(|s| s.keys.get_ref().iter().any(|k| k.get_ref() == "{option}"));
    match (answer, picks) {
        (Answer::Choose(_), false) => {
            return Err(place.invalid(
                spec.keys.span(),
                "a 'choose' answer presses the option's digit: put '{option}' among its keys",
            ));
        }
        (a, true) if a != Answer::Choose(0) => {
            return Err(place.invalid(
                spec.keys.span(),
                format!(
                    "'{{option}}' is a choice's digit; '{}' picks no option",
                    a.name()
                ),
            ));
        }
        _ => {}
    }
    let regexes = |list: &[Spanned<String>]| -> Result<Vec<Pattern>, RuleError> {
        list.iter().map(|r| regex(place, r)).collect()
    };
    let mut then = Vec::new();
    for step in &spec.then {
        // A step with nothing to wait for is the same step as the one
        // before it, and would press its keys unchecked.
        if step.requires.get_ref().is_empty() {
            return Err(place.invalid(
                step.requires.span(),
                "a later step needs the rows that show the keys before it were taken",
            ));
        }
        then.push(Step {
            keys: key_list(place, &step.keys)?,
            requires: regexes(step.requires.get_ref())?,
        });
    }
    let names = spec.rule.get_ref().names();
    if names.is_empty() {
        return Err(place.invalid(spec.rule.span(), "an action needs a rule"));
    }
    let requires = regexes(&spec.requires)?;
    Ok(names
        .iter()
        .map(|rule| ActionRule {
            rule: rule_name(agent, rule),
            answer,
            keys: keys.clone(),
            requires: requires.clone(),
            then: then.clone(),
            at: place.line(Some(spec.rule.span())),
        })
        .collect())
}

impl FileSpec {
    /// Puts each `{name}` in a pattern list in place of the `[patterns]`
    /// list it names, so that what follows sees patterns only.
    fn expand(&mut self, place: &Place<'_>) -> Result<(), RuleError> {
        let table = std::mem::take(&mut self.patterns);
        let expand = |list: &mut Vec<Spanned<String>>| -> Result<(), RuleError> {
            if !list.iter().any(|p| shared_name(p.get_ref()).is_some()) {
                return Ok(());
            }
            let mut out = Vec::with_capacity(list.len());
            for p in list.drain(..) {
                let Some(name) = shared_name(p.get_ref()) else {
                    out.push(p);
                    continue;
                };
                let shared = table.get(name).ok_or_else(|| {
                    place.invalid(
                        p.span(),
                        format!("no pattern list '{}' under [patterns]", name.escape_debug()),
                    )
                })?;
                out.extend(shared.iter().cloned());
            }
            *list = out;
            Ok(())
        };
        expand(&mut self.identify.title)?;
        expand(&mut self.identify.screen)?;
        for r in &mut self.rule {
            for list in [&mut r.all, &mut r.any, &mut r.none] {
                expand(list)?;
            }
            for c in &mut r.when {
                for list in [&mut c.all, &mut c.any, &mut c.none] {
                    expand(list)?;
                }
            }
            if let Some(subject) = &mut r.subject {
                expand(subject.patterns.get_mut())?;
            }
        }
        for a in &mut self.action {
            expand(&mut a.requires)?;
            for step in &mut a.then {
                expand(step.requires.get_mut())?;
            }
        }
        Ok(())
    }
}

/// `name` for a pattern written `{name}`: a shared list's place.
fn shared_name(pattern: &str) -> Option<&str> {
    let name = pattern.strip_prefix('{')?.strip_suffix('}')?;
    let word = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    word.then_some(name)
}

/// An action's or a step's keys: known names, at least one.
fn key_list(
    place: &Place<'_>,
    keys: &Spanned<Vec<Spanned<String>>>,
) -> Result<Vec<Key>, RuleError> {
    let mut out = Vec::new();
    for k in keys.get_ref() {
        let key = Key::parse(k.get_ref()).ok_or_else(|| {
            place.invalid(
                k.span(),
                format!(
                    "unknown key '{}' (expected one character or one of: {})",
                    k.get_ref().escape_debug(),
                    Key::NAMES
                ),
            )
        })?;
        out.push(key);
    }
    if out.is_empty() {
        return Err(place.invalid(keys.span(), "an action needs at least one key"));
    }
    Ok(out)
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
    if place.builtin {
        return Ok(Pattern::unchecked(pattern.get_ref()));
    }
    Pattern::checked(pattern.get_ref()).map_err(|e| {
        let why = e;
        // The parser's message spans lines (a caret diagram); its last
        // line says what is wrong.
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

fn parse_region(place: &Place<'_>, r: &Spanned<String>) -> Result<Region, RuleError> {
    Region::parse(r.get_ref()).ok_or_else(|| {
        place.invalid(
            r.span(),
            format!(
                "unknown region '{}' (expected screen, bottom, below_input, above_input, \
                 input, cursor_line or above_cursor)",
                r.get_ref().escape_debug()
            ),
        )
    })
}

fn condition(
    place: &Place<'_>,
    spec: &ConditionSpec,
    rule: &Spanned<String>,
) -> Result<Condition, RuleError> {
    let region = match &spec.region {
        Some(r) => parse_region(place, r)?,
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_shared_pattern_list_is_used_by_name_and_an_unknown_name_is_refused() {
        let text = "agent = \"x\"\n[patterns]\nprompt = ['^\\$ ', '^> ']\n\
                    [[rule]]\nname = \"r\"\nstate = \"waiting\"\nall = ['a', '{prompt}']\n\
                    none = [\"{prompt}\"]\n";
        let ok = parse("f.toml", text).unwrap();
        let sources = |ps: &[Pattern]| ps.iter().map(|p| p.source().to_owned()).collect::<Vec<_>>();
        let c = &ok.rules[0].conditions[0];
        assert_eq!(sources(&c.all), ["a", "^\\$ ", "^> "]);
        assert_eq!(sources(&c.none), ["^\\$ ", "^> "]);
        let err = parse(
            "f.toml",
            &text.replace("none = [\"{prompt}\"]", "none = [\"{prompts}\"]"),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(err, "f.toml:8: no pattern list 'prompts' under [patterns]");
        // A regex that only looks like one stays a regex.
        assert_eq!(shared_name("{1,2}"), None);
        assert_eq!(shared_name("a{prompt}"), None);
    }

    #[test]
    fn an_action_for_several_rules_answers_each() {
        let text = "agent = \"x\"\n[[rule]]\nname = \"p\"\nstate = \"waiting\"\nall = ['a']\n\
                    [[rule]]\nname = \"q\"\nstate = \"waiting\"\nall = ['b']\n\
                    [[action]]\nrule = [\"p\", \"q\"]\nanswer = \"choose\"\nkeys = [\"{option}\"]\n";
        let ok = parse("f.toml", text).unwrap();
        let rules: Vec<&str> = ok.actions.iter().map(|a| a.rule.as_str()).collect();
        assert_eq!(rules, ["x.p", "x.q"]);
        assert!(ok.actions.iter().all(|a| a.at == "f.toml:11"));
        let err = parse("f.toml", &text.replace("[\"p\", \"q\"]", "[]"))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "f.toml:11: an action needs a rule");
        let err = parse("f.toml", &text.replace("[\"p\", \"q\"]", "3"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a rule's name, or a list of rules' names"),
            "{err}"
        );
    }

    #[test]
    fn actions_and_subjects_are_checked_where_they_are_written() {
        let rule = "agent = \"x\"\n[[rule]]\nname = \"r\"\nstate = \"waiting\"\nall = ['a']\n";
        let with = |more: &str| parse("f.toml", &format!("{rule}{more}"));
        let ok = with(
            "subject = { patterns = ['(?P<subject>.+)'] }\n\
             [[action]]\nrule = \"r\"\nanswer = \"deny\"\nkeys = [\"Escape\"]\nrequires = ['b']\n",
        )
        .unwrap();
        assert_eq!(ok.actions[0].rule, "x.r");
        assert_eq!(ok.actions[0].at, "f.toml:8");
        assert!(ok.rules[0].subject.is_some());
        let err = |more: &str| with(more).unwrap_err().to_string();
        let e = err("[[action]]\nrule = \"r\"\nanswer = \"deny\"\nkeys = [\"Esc\", \"Ctrl-C\"]\n");
        assert!(e.starts_with("f.toml:9: unknown key 'Ctrl-C'"), "{e}");
        let e = err("[[action]]\nrule = \"r\"\nanswer = \"yes\"\nkeys = [\"y\"]\n");
        assert!(e.starts_with("f.toml:8: unknown answer 'yes'"), "{e}");
        let e = err("[[action]]\nrule = \"r\"\nanswer = \"deny\"\nkeys = []\n");
        assert!(
            e.starts_with("f.toml:9: an action needs at least one key"),
            "{e}"
        );
        let e = err("subject = { patterns = ['\\$ (.+)'] }\n");
        assert!(
            e.starts_with("f.toml:6: a subject pattern needs a group named 'subject'"),
            "{e}"
        );
        let e = err("subject = { region = \"nowhere\", patterns = ['(?P<subject>.)'] }\n");
        assert!(e.starts_with("f.toml:6: unknown region 'nowhere'"), "{e}");
    }
}
