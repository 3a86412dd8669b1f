//! Where `heimdall.toml` is looked for, and reading it: the only I/O in
//! `config`. What the text means is `schema`'s business.

use std::path::{Path, PathBuf};

use super::{Config, ConfigError};

/// The file name looked for in each search directory.
pub const FILE_NAME: &str = "heimdall.toml";

impl Config {
    /// Find and load the config: `explicit` (which must exist), else the
    /// first of [`Config::search_paths`] that exists, else the defaults.
    /// Files are not merged. The only function here that does I/O.
    pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let home = env_dir("HOME");
        if let Some(given) = explicit {
            // Absolute, so `source` still names the file after a chdir.
            let path = std::path::absolute(given).unwrap_or_else(|_| given.to_path_buf());
            return match std::fs::read_to_string(&path) {
                Ok(text) => Config::parse(&text, &path, home.as_deref()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ConfigError::NotFound {
                    path: given.to_path_buf(),
                }),
                Err(source) => Err(ConfigError::Read { path, source }),
            };
        }
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let xdg = env_dir("XDG_CONFIG_HOME");
        for path in Config::search_paths(&cwd, xdg.as_deref(), home.as_deref()) {
            match std::fs::read_to_string(&path) {
                Ok(text) => return Config::parse(&text, &path, home.as_deref()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                // A file that exists but cannot be read is not skipped
                // silently: the person meant it to be used.
                Err(source) => return Err(ConfigError::Read { path, source }),
            }
        }
        Ok(Config::defaults())
    }

    /// Where [`Config::load`] looks, in order, without `--config`.
    /// Relative `xdg_config_home` and `home` values are ignored.
    pub fn search_paths(
        cwd: &Path,
        xdg_config_home: Option<&Path>,
        home: Option<&Path>,
    ) -> Vec<PathBuf> {
        let mut paths = vec![cwd.join(FILE_NAME)];
        let dirs = [
            xdg_config_home.map(Path::to_path_buf),
            home.map(|h| h.join(".config")),
        ];
        for dir in dirs.into_iter().flatten().filter(|d| d.is_absolute()) {
            let path = dir.join("heimdall").join(FILE_NAME);
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }
}

/// An environment variable naming a directory, if it is absolute (the XDG
/// rule: relative values are ignored).
fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_order() {
        let cwd = Path::new("/w");
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            Config::search_paths(cwd, Some(Path::new("/xdg")), home),
            [
                PathBuf::from("/w/heimdall.toml"),
                PathBuf::from("/xdg/heimdall/heimdall.toml"),
                PathBuf::from("/home/u/.config/heimdall/heimdall.toml"),
            ]
        );
        assert_eq!(
            Config::search_paths(cwd, None, home),
            [
                PathBuf::from("/w/heimdall.toml"),
                PathBuf::from("/home/u/.config/heimdall/heimdall.toml"),
            ]
        );
        // A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
        assert_eq!(
            Config::search_paths(cwd, Some(Path::new("xdg")), home).len(),
            2
        );
        // XDG_CONFIG_HOME set to the default is not searched twice.
        assert_eq!(
            Config::search_paths(cwd, Some(Path::new("/home/u/.config")), home).len(),
            2
        );
        assert_eq!(
            Config::search_paths(cwd, None, None),
            [PathBuf::from("/w/heimdall.toml")]
        );
    }

    #[test]
    fn load_of_a_missing_explicit_file_says_not_found() {
        let e = Config::load(Some(Path::new("/nonexistent/hm.toml"))).expect_err("missing");
        assert_eq!(
            e.to_string(),
            "config file '/nonexistent/hm.toml' not found (check the --config path)"
        );
    }

    #[test]
    fn missing_relative_config_is_reported_as_given() {
        let e = Config::load(Some(Path::new("no-such-dir/hm.toml"))).expect_err("missing");
        assert_eq!(
            e.to_string(),
            "config file 'no-such-dir/hm.toml' not found (check the --config path)"
        );
    }

    #[test]
    fn load_reads_an_explicit_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("hm.toml");
        std::fs::write(&path, "scrollback_bytes = 7\n").expect("write");
        let c = Config::load(Some(&path)).expect("loads");
        assert_eq!(c.scrollback_bytes, 7);
        assert_eq!(c.source.as_deref(), Some(path.as_path()));
        std::fs::write(&path, "scrollback_bytes = \"x\"\n").expect("write");
        let e = Config::load(Some(&path)).expect_err("invalid").to_string();
        assert!(
            e.starts_with(&format!(
                "{}:1: invalid value for 'scrollback_bytes'",
                path.display()
            )),
            "{e}"
        );
    }
}
