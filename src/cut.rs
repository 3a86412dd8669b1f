//! Text cut to a number of columns, marked `…` where it was: at its end,
//! or in its middle for an id (the dashboard's titles, `hm ls`), since
//! ids that tell sessions apart often differ only at the end.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `text` cut to `cols` columns, its end marked `…`.
pub fn end(text: &str, cols: usize) -> String {
    if text.width() <= cols {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > cols {
            break;
        }
        used += w;
        out.push(c);
    }
    // `the lexer…`, not `the lexer …`.
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

/// `text` cut to `cols` columns, its start given up for `…`.
pub fn start(text: &str, cols: usize) -> String {
    if text.width() <= cols {
        return text.to_owned();
    }
    let mut kept = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > cols {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

/// `text` in `cols` columns, its middle given up for `…`: ids that tell
/// sessions apart often differ only at the end (`claude-worker-1`,
/// `claude-worker-2`), so the end keeps as much as the start, or a column
/// more.
pub fn middle(text: &str, cols: usize) -> String {
    if text.width() <= cols {
        return text.to_owned();
    }
    let room = cols.saturating_sub(1);
    let head = room / 2;
    let take = |chars: &mut dyn Iterator<Item = char>, cols: usize| {
        let mut used = 0;
        let mut kept = Vec::new();
        for c in chars {
            used += c.width().unwrap_or(0);
            if used > cols {
                break;
            }
            kept.push(c);
        }
        kept
    };
    let start = take(&mut text.chars(), head);
    let mut end = take(&mut text.chars().rev(), room - head);
    end.reverse();
    start.into_iter().chain(['…']).chain(end).collect()
}

/// An id in `cols` columns: another machine's host is cut first (to
/// nothing but the mark), so `host:id` keeps the session's own id whole
/// as long as it can; then the id loses its middle (see [`middle`]).
pub fn short_id(id: &str, cols: usize) -> String {
    if id.width() <= cols {
        return id.to_owned();
    }
    if let Some((host, plain)) = crate::host::split_target(id) {
        // `h…:id`, at least `…:id`.
        let for_host = cols.saturating_sub(plain.width() + 1);
        if for_host >= 1 {
            let host = if for_host >= 2 {
                end(host, for_host)
            } else {
                "…".to_owned()
            };
            return format!("{host}:{plain}");
        }
        return match cols.saturating_sub(2) {
            0 => "…".to_owned(),
            keep => format!("…:{}", middle(plain, keep)),
        };
    }
    middle(id, cols.max(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text cut at its start keeps its end, wide characters counted as
    /// two columns.
    #[test]
    fn text_gives_up_its_start() {
        assert_eq!(start("review PR 42", 20), "review PR 42");
        assert_eq!(start("review PR 42", 6), "…PR 42");
        assert_eq!(start("漢字漢字x", 6), "…漢字x");
    }

    #[test]
    fn an_id_gives_up_its_middle_and_a_host_first() {
        assert_eq!(short_id("claude-worker-frontend-1", 12), "claud…tend-1");
        assert_eq!(short_id("ab字字字字cd", 6), "ab…cd");
        assert_eq!(short_id("hmremote:cc1", 8), "hmr…:cc1");
        assert_eq!(
            short_id("hmremote:claude-worker-frontend-1", 10),
            "…:cla…nd-1"
        );
        assert_eq!(end("sleep 900", 6), "sleep…");
    }
}
