//! A lost session as the run loop found it: plain data, the payload of
//! `Msg::Lost`; `tui::lost` makes panes of it.

/// A lost session, as the run loop found it: its manifest's facts and the
/// end of its old output, for its pane.
#[derive(Debug, Clone)]
pub struct LostFound {
    pub lost: crate::lost::Lost,
    pub tail: Vec<u8>,
}
