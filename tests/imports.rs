//! Imports run one way: the order `src/lib.rs` writes down is checked
//! against every path in `src/` that names a module of this crate
//! (`crate::…`, `super::…`, `self::…`, and a child's name after `use`).
//!
//! Each reference is reduced to the two modules it crosses between:
//! siblings under their closest common parent (a file that uses
//! `crate::vt::term` from `src/vt/history.rs` makes `history -> term`
//! under `vt`). A module using its own parent or its own child is not a
//! crossing (a parent wires its children; a child may take what its parent
//! defines for it). Then:
//! - between top-level modules, an import may only go to a module of the
//!   same tier or one below it in `lib.rs`'s list;
//! - among the children of any one module, and within a tier, there is no
//!   cycle.
//!
//! Names are matched as written (`crate::vt::keys::encode` is `vt::keys`),
//! which is how a reader sees the dependency; a re-export does not hide
//! one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path: `["supervisor", "client", "inbound"]`; the crate root
/// is empty.
type Module = Vec<String>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/` with its module path (`main.rs`, the
/// binary, is left out: it may use anything).
fn modules() -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read src")
            .map(|e| e.expect("entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let root = src();
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&root).expect("under src");
        let mut parts: Module = rel
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
            .collect();
        // The binary may use anything, and test-only files (`tests.rs`,
        // the fuzz targets' checks) build fixtures from anywhere.
        if parts == ["main"] || parts.last().is_some_and(|p| p == "tests") {
            continue;
        }
        if parts == ["lib"] {
            parts.clear();
        }
        out.insert(parts, f);
    }
    out
}

/// The code of a file without comments, string literals and its test
/// module: what it imports to do its work.
fn code(text: &str) -> String {
    // Test modules may reach anywhere (they build fixtures).
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 4 + e);
            i = end;
        } else if b[i] == b'"'
            || (b[i] == b'r'
                && b.get(i + 1).is_some_and(|c| *c == b'#' || *c == b'"')
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')))
        {
            // A string: plain, or raw with any number of #s.
            if b[i] == b'r' {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                i = text[start..]
                    .find(&close)
                    .map_or(b.len(), |e| start + e + close.len());
            } else {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // A char literal such as '"'.
            i += 3;
        } else if b[i..].starts_with(b"'\\") {
            let end = text[i + 2..].find('\'').map_or(b.len(), |e| i + 3 + e);
            i = end;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// The paths a file names that start at `crate`, `super` or `self`, as
/// module paths relative to the crate root (`use a::{b, c::d}` expanded).
fn references(me: &Module, text: &str) -> Vec<Module> {
    // A file `a/b.rs` is module a::b; `super` in it is `a`.
    let mut out = Vec::new();
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        let at_word = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        let starts = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|s| bytes[i..].starts_with(s.as_bytes()));
        match starts {
            Some(s) if at_word => {
                let base: Module = match s {
                    "crate::" => Vec::new(),
                    "self::" => me.clone(),
                    _ => {
                        let mut m = me.clone();
                        // `super::super::` climbs twice.
                        let mut j = i;
                        m.pop();
                        j += s.len();
                        while bytes[j..].starts_with(b"super::") {
                            m.pop();
                            j += "super::".len();
                        }
                        i = j - "super::".len();
                        m
                    }
                };
                let (paths, used) = path_tree(&text[i + s.len()..]);
                for p in paths {
                    let mut m = base.clone();
                    m.extend(p);
                    out.push(m);
                }
                i += s.len() + used;
            }
            _ => i += 1,
        }
    }
    out
}

/// Reads `a::b::{c, d::e}` at the start of `s`: every full path in it,
/// and how many bytes were read.
fn path_tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut prefix: Vec<String> = Vec::new();
    loop {
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if i > start {
            prefix.push(s[start..i].to_owned());
        }
        if s[i..].starts_with("::{") {
            i += 3;
            let mut all = Vec::new();
            loop {
                while i < b.len() && (b[i] == b' ' || b[i] == b'\n' || b[i] == b',') {
                    i += 1;
                }
                if i >= b.len() || b[i] == b'}' {
                    i += 1;
                    break;
                }
                let (inner, used) = path_tree(&s[i..]);
                for p in inner {
                    let mut full = prefix.clone();
                    full.extend(p);
                    all.push(full);
                }
                // `self` inside braces is the prefix itself.
                i += used.max(1);
            }
            return (all, i);
        }
        if s[i..].starts_with("::") {
            i += 2;
            continue;
        }
        if prefix.last().is_some_and(|l| l == "self") {
            prefix.pop();
        }
        return (vec![prefix], i);
    }
}

/// The longest prefix of `path` that is a module of the crate.
fn module_of(path: &Module, all: &BTreeMap<Module, PathBuf>) -> Module {
    let mut m = path.clone();
    while !m.is_empty() && !all.contains_key(&m) {
        m.pop();
    }
    m
}

/// The tiers of `src/lib.rs`'s map, bottom first: each bullet of its list
/// is one tier, naming its modules as [`name`].
fn tiers() -> Vec<BTreeSet<String>> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let mut tiers: Vec<BTreeSet<String>> = Vec::new();
    let mut in_list = false;
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            continue;
        };
        let doc = doc.trim_start();
        if doc.starts_with("- ") {
            in_list = true;
            tiers.push(BTreeSet::new());
        } else if doc.is_empty() {
            in_list = false;
        }
        if !in_list {
            continue;
        }
        let tier = tiers.last_mut().expect("a tier");
        let mut rest = doc;
        while let Some(a) = rest.find("[`") {
            let after = &rest[a + 2..];
            let Some(e) = after.find("`]") else { break };
            tier.insert(after[..e].to_owned());
            rest = &after[e + 2..];
        }
    }
    tiers
}

/// Every crossing: (common parent, from child, to child) -> where.
fn crossings() -> BTreeMap<(Module, String, String), String> {
    let all = modules();
    let mut out = BTreeMap::new();
    for (me, file) in &all {
        let text = std::fs::read_to_string(file).expect("read a source file");
        for path in references(me, &code(&text)) {
            let target = module_of(&path, &all);
            let common = me.iter().zip(&target).take_while(|(a, b)| a == b).count();
            // An ancestor or a descendant: containment, not a crossing.
            if common == me.len() || common == target.len() {
                continue;
            }
            let key = (
                me[..common].to_vec(),
                me[common].clone(),
                target[common].clone(),
            );
            let rel = file.strip_prefix(src()).expect("under src");
            out.entry(key)
                .or_insert_with(|| format!("src/{} uses {}", rel.display(), path.join("::")));
        }
    }
    out
}

/// A cycle in `edges`, as the modules along it, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_owned(), 1);
        stack.push(n.to_owned());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|x| x == m).unwrap_or(0);
                    let mut c = stack[from..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n.as_str()) {
            let mut stack = Vec::new();
            if let Some(c) = visit(n, edges, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn top_level_modules_import_only_their_own_tier_or_below() {
    let tiers = tiers();
    let tier_of = |m: &str| tiers.iter().position(|t| t.contains(m));
    let mut wrong = Vec::new();
    for ((parent, from, to), at) in crossings() {
        if !parent.is_empty() {
            continue;
        }
        match (tier_of(&from), tier_of(&to)) {
            (Some(a), Some(b)) if b <= a => {}
            (None, _) | (_, None) => wrong.push(format!(
                "{from} -> {to}: a module missing from lib.rs's list ({at})"
            )),
            _ => wrong.push(format!("{from} -> {to} goes up lib.rs's list ({at})")),
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_module_imports_in_a_cycle() {
    let mut graphs: BTreeMap<Module, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let found = crossings();
    for (parent, from, to) in found.keys() {
        graphs
            .entry(parent.clone())
            .or_default()
            .entry(from.clone())
            .or_default()
            .insert(to.clone());
    }
    let mut wrong = Vec::new();
    for (parent, edges) in &graphs {
        if let Some(c) = cycle(edges) {
            let under = if parent.is_empty() {
                "the crate".to_owned()
            } else {
                parent.join("::")
            };
            let at: Vec<String> = c
                .windows(2)
                .map(|w| {
                    found
                        .get(&(parent.clone(), w[0].clone(), w[1].clone()))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            wrong.push(format!(
                "under {under}: {} ({})",
                c.join(" -> "),
                at.join("; ")
            ));
        }
    }
    assert!(wrong.is_empty(), "import cycles:\n{}", wrong.join("\n"));
}

#[test]
fn the_reader_finds_nested_and_relative_paths() {
    let me: Module = vec!["supervisor".into(), "client".into()];
    let refs = references(
        &me,
        "use super::state::{Shared, x::{Y, self}};\nlet a = crate::vt::term::Term::new();\nuse super::super::paths;",
    );
    let show: Vec<String> = refs.iter().map(|r| r.join("::")).collect();
    assert!(
        show.contains(&"supervisor::state::Shared".to_owned()),
        "{show:?}"
    );
    assert!(
        show.contains(&"supervisor::state::x::Y".to_owned()),
        "{show:?}"
    );
    assert!(
        show.contains(&"supervisor::state::x".to_owned()),
        "{show:?}"
    );
    assert!(show.contains(&"vt::term::Term::new".to_owned()), "{show:?}");
    assert!(show.contains(&"paths".to_owned()), "{show:?}");
    assert_eq!(code("a // crate::x\n\"crate::y\" b"), "a \n\"\" b");
}
