//! The status records target: OSC 7501 records in a program's output,
//! through the emulator and an `agent` detector, with every bound the
//! detector promises checked after each read. Separate because it is the
//! one target that runs the detector.

use crate::protocol::Size;

use super::{cuts, hash};

/// A program's output, cut into reads, through the screen and an `agent`
/// detector that has answered the status probe: whatever OSC 7501 records
/// it holds, the detector keeps at most [`status::MAX_CHILDREN`] children
/// with bounded text, and its verdict carries a bounded explanation.
pub fn status_records(data: &[u8]) {
    use crate::detect::{Detector, Settings, status};
    use crate::vt::events::Recorder;
    use crate::vt::term::Term;

    let mut term = Term::with_callbacks(Size { cols: 80, rows: 24 }, Recorder::default());
    // No processes here to tell the asker by: its records count as a
    // replay's do.
    let settings = Settings {
        process_evidence: false,
        ..Settings::default()
    };
    let mut detector = Detector::new(settings, &["claude".to_owned()], 0);
    // The program asks first, as Claude Code does; the rest is the input.
    term.feed(b"\x1b]7501;?\x07");
    let mut now = 0;
    let mut rest = data;
    for n in cuts(data.len(), hash(data)) {
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        now += 7;
        term.feed(chunk);
        for event in term.callbacks_mut().take() {
            detector.event(&event, now);
        }
        detector.output(chunk, now);
        let verdict = detector.verdict(term.screen(), now);
        let table = detector.table();
        assert!(table.children.len() <= status::MAX_CHILDREN);
        for c in &table.children {
            assert!(c.id.len() <= status::MAX_ID);
            assert!(c.title.chars().count() <= status::MAX_TEXT);
        }
        assert!(
            verdict
                .signals
                .iter()
                .all(|s| s.text.chars().count() <= 240)
        );
    }
}
