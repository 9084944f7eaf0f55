//! What a `park` command ends with: the exit statuses of the CLI contract (README "Using it").
//! `0` every target reached the asked state (already being there counts), `1` something was
//! refused, failed or needs attention, `2` a usage error (bad flag, target or set name: nothing
//! was done). Commands return an [`ExitStatus`]; only `main` turns it into a process exit code.

/// The exit status of one `park` command (see the module docs). Ordered by severity, so the
/// status of several steps is their `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExitStatus {
    Success,
    Refused,
    Usage,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Refused => 1,
            ExitStatus::Usage => 2,
        }
    }

    /// `Success` when everything reached the asked state, else `Refused`.
    pub fn from_ok(ok: bool) -> Self {
        if ok {
            ExitStatus::Success
        } else {
            ExitStatus::Refused
        }
    }
}

/// A command that stops before it acts: the status, and what to tell the person. Core code
/// returns it; the CLI prints it once (`park: <message>` on stderr) and exits with its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub status: ExitStatus,
    /// `None` when whatever stopped already said why (a declined confirmation).
    pub message: Option<String>,
    /// The verb the message is about, when it is not the command as a whole
    /// (`park archive --prune: …`).
    pub verb: Option<&'static str>,
}

impl Stop {
    /// A usage error (exit 2): a bad flag, target, set name or duration; nothing was done.
    pub fn usage(message: impl Into<String>) -> Self {
        Stop {
            status: ExitStatus::Usage,
            message: Some(message.into()),
            verb: None,
        }
    }

    /// A refusal before anything was done (exit 1).
    pub fn refused(message: impl Into<String>) -> Self {
        Stop {
            status: ExitStatus::Refused,
            message: Some(message.into()),
            verb: None,
        }
    }

    /// A refusal that was already explained to the person (exit 1).
    pub fn declined() -> Self {
        Stop {
            status: ExitStatus::Refused,
            message: None,
            verb: None,
        }
    }

    /// The same stop, said of one verb (`park <verb>: <message>`).
    pub fn of(self, verb: &'static str) -> Self {
        Stop {
            verb: Some(verb),
            ..self
        }
    }
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message.as_deref().unwrap_or("stopped"))
    }
}

impl From<ExitStatus> for i32 {
    fn from(s: ExitStatus) -> i32 {
        s.code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_ones_and_max_is_the_worst() {
        assert_eq!(
            [ExitStatus::Success, ExitStatus::Refused, ExitStatus::Usage].map(ExitStatus::code),
            [0, 1, 2]
        );
        assert_eq!(
            ExitStatus::Success.max(ExitStatus::Refused),
            ExitStatus::Refused
        );
        assert_eq!(
            ExitStatus::Usage.max(ExitStatus::Refused),
            ExitStatus::Usage
        );
        assert_eq!(ExitStatus::from_ok(false), ExitStatus::Refused);
    }
}
