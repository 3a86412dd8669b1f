//! What the inbox keeps between frames and the answers on their way:
//! plain data, held by the model; what it means is `tui::inbox`'s.

use std::time::Instant;

use crate::protocol::{Act, DialogInfo};

/// The inbox's state between frames.
#[derive(Debug, Default)]
pub struct Inbox {
    /// Its rows as last drawn, in order.
    pub shown: Vec<Shown>,
    /// The selected row's session, and its place (for when it leaves).
    pub selected: Option<String>,
    pub selected_at: usize,
    /// What the last answer came to.
    pub said: Option<Said>,
    /// Focus entered from the inbox comes back to it.
    pub after_focus: bool,
    /// When what the selected row asks last changed under the person
    /// (its row left and the next took its place; its session showed
    /// another dialog, or its dialog went), and how: an answer key this
    /// soon after was meant for what was there before.
    pub moved_at: Option<(std::time::Instant, Moved)>,
}

/// How what the selected row asks changed on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// Its row left; the next took its place.
    Row,
    /// Its session shows another dialog (the next question, once the
    /// last was answered).
    Dialog,
    /// Its dialog went (answered), and no other is shown yet.
    Gone,
}

/// A row as it was drawn: which session, and the dialog it showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub id: String,
    pub dialog: Option<DialogInfo>,
}

/// A line for the person about the last answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub text: String,
    /// Not answered: shown as an error.
    pub refused: bool,
}

/// An answer sent and not yet acted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answering {
    pub act: Act,
    pub sent: Instant,
    /// Asked again then: the dialog was too new to take keys.
    pub retry_at: Option<Instant>,
    pub tries: u32,
    /// Not replied to in time: said so once.
    pub late: bool,
}

impl super::Pane {
    /// Sends `act` (an answer, a continue) to the session, held as on its
    /// way until its ACTED comes (`tui::inbox::acted` says what it did).
    pub fn send_act(&mut self, act: Act, now: Instant, fx: &mut Vec<super::Effect>) {
        self.answering = Some(Answering {
            act: act.clone(),
            sent: now,
            retry_at: None,
            tries: 0,
            late: false,
        });
        fx.push(super::Effect::Act(self.id.clone(), act));
    }
}

impl Inbox {
    /// Which of rows `ids` is selected: the selected session's, or, when
    /// it stopped waiting, the one that took its place. The view
    /// highlights the same row this says, so `y` answers what is lit.
    pub fn selected_in(&self, ids: &[&str]) -> Option<usize> {
        if ids.is_empty() {
            return None;
        }
        let at = self
            .selected
            .as_deref()
            .and_then(|s| ids.iter().position(|i| *i == s));
        Some(at.unwrap_or(self.selected_at.min(ids.len() - 1)))
    }
}
