//! The `agent` classifier's settings (`[classifier.agent]`): what the
//! detector is tuned by, apart from the rules. Separate so that the code
//! that builds a detector (the classifier registry, `hm classify`, the
//! corpus scorer) names its settings without reaching into the detector.
//!
//! The default idle threshold is here too, though every timing classifier
//! starts from it: `classify`, which builds them all, already reads the
//! agent's settings and primary states from `detect`, so the constant
//! lives on that lower side and the dependency runs one way.

/// Output quieter than this is not work by timing alone, unless the
/// session says otherwise (`simple`, `claude` and `agent` alike).
pub const DEFAULT_IDLE_THRESHOLD_MS: u64 = 3000;
/// How long a session may claim to work with an unchanged screen before
/// it is `stuck`, unless the session says otherwise.
pub const DEFAULT_STUCK_AFTER_MS: u64 = 60_000;

/// Settings of the `agent` classifier (`[classifier.agent]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Output quieter than this is not work by timing alone.
    pub idle_threshold_ms: u64,
    /// A session that claims to work with an unchanged screen this long is
    /// `stuck`.
    pub stuck_after_ms: u64,
    /// Whether process facts are evidence (off for replayed recordings,
    /// whose process is a player, not the agent).
    pub process_evidence: bool,
    /// Whether the program's own status records (OSC 7501) are read, and
    /// so whether the supervisor answers the protocol's probe.
    pub status_protocol: bool,
    /// Whether hook reports (`hm hook`) are taken, and so whether `hm run`
    /// installs the agent's hooks for the session.
    pub hooks: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            idle_threshold_ms: DEFAULT_IDLE_THRESHOLD_MS,
            stuck_after_ms: DEFAULT_STUCK_AFTER_MS,
            process_evidence: true,
            status_protocol: true,
            hooks: true,
        }
    }
}
