//! The warm-up exclusion form of the analysis panel without the drawing: what the person typed,
//! what is wrong with it (in words they can act on), and the [`ExclusionRule`]s it stands for.

use crate::analysis::{AttributionScope, ExclusionRule};

/// The rules of the warm-up exclusion as the form holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarmupSettings {
    /// Exclude NVTX ranges named `warmup` / `warm-up` / `warm_up` (any case).
    pub warmup_names: bool,
    /// Also exclude ranges matching this regex; empty: no such rule.
    pub exclude_regex: String,
    /// Also exclude the first `skip_first` instances of the ranges matching `iteration_regex`;
    /// 0: no such rule.
    pub skip_first: usize,
    pub iteration_regex: String,
    /// Whose ranges an event can be attributed to.
    pub scope: AttributionScope,
}

impl Default for WarmupSettings {
    fn default() -> Self {
        Self {
            warmup_names: true,
            exclude_regex: String::new(),
            skip_first: 0,
            iteration_regex: String::new(),
            scope: AttributionScope::Process,
        }
    }
}

/// What is wrong with the form, field by field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormProblems {
    pub exclude_regex: Option<String>,
    pub iteration_regex: Option<String>,
    /// The form as a whole (e.g. no rule chosen).
    pub form: Option<String>,
}

impl FormProblems {
    pub fn is_empty(&self) -> bool {
        self.exclude_regex.is_none() && self.iteration_regex.is_none() && self.form.is_none()
    }
}

/// `regex::Error` prints the pattern with a caret under the fault; the last line says what.
fn regex_problem(pattern: &str, e: &regex::Error) -> String {
    let text = e.to_string();
    let what = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid pattern")
        .trim()
        .trim_start_matches("error: ");
    format!("'{pattern}' is not a valid regex: {what}")
}

impl WarmupSettings {
    /// The rules the form stands for, or what to fix.
    pub fn rules(&self) -> Result<Vec<ExclusionRule>, FormProblems> {
        let mut rules = Vec::new();
        let mut problems = FormProblems::default();
        if self.warmup_names {
            rules.push(ExclusionRule::WarmupNames);
        }
        if !self.exclude_regex.trim().is_empty() {
            match ExclusionRule::name_regex(self.exclude_regex.trim()) {
                Ok(rule) => rules.push(rule),
                Err(e) => problems.exclude_regex = Some(regex_problem(&self.exclude_regex, &e)),
            }
        }
        if self.skip_first > 0 {
            if self.iteration_regex.trim().is_empty() {
                problems.iteration_regex =
                    Some("give the pattern of one iteration, e.g. step_.*".into());
            } else {
                match ExclusionRule::first_iterations(self.iteration_regex.trim(), self.skip_first)
                {
                    Ok(rule) => rules.push(rule),
                    Err(e) => {
                        problems.iteration_regex = Some(regex_problem(&self.iteration_regex, &e));
                    }
                }
            }
        }
        if rules.is_empty() && problems.is_empty() {
            problems.form = Some(
                "no rule chosen: tick the warm-up names, give a regex, or skip N iterations".into(),
            );
        }
        if problems.is_empty() {
            Ok(rules)
        } else {
            Err(problems)
        }
    }

    /// One line per rule, for the panel.
    pub fn describe(&self) -> Vec<String> {
        match self.rules() {
            Ok(rules) => rules.iter().map(ExclusionRule::describe).collect(),
            Err(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_is_wrong_with_each_field() {
        let ok = WarmupSettings::default();
        assert_eq!(ok.rules().map(|r| r.len()), Ok(1));

        let bad = WarmupSettings {
            exclude_regex: "step_(".into(),
            skip_first: 2,
            iteration_regex: String::new(),
            ..Default::default()
        };
        let problems = bad.rules().err().unwrap_or_default();
        let regex = problems.exclude_regex.unwrap_or_default();
        assert!(
            regex.starts_with("'step_(' is not a valid regex"),
            "{regex}"
        );
        assert!(regex.contains("unclosed group"), "{regex}");
        assert!(problems.iteration_regex.is_some());

        let none = WarmupSettings {
            warmup_names: false,
            ..Default::default()
        };
        assert!(none.rules().is_err_and(|p| p.form.is_some()));

        let all = WarmupSettings {
            exclude_regex: "^init$".into(),
            skip_first: 3,
            iteration_regex: "step_.*".into(),
            ..Default::default()
        };
        assert_eq!(
            all.describe(),
            vec![
                "NVTX ranges named warmup/warm-up/warm_up".to_string(),
                "NVTX ranges matching '^init$'".to_string(),
                "the first 3 NVTX ranges matching 'step_.*'".to_string(),
            ]
        );
    }
}
