//! The list of skills the model is given: computed once at session start, within a budget
//! (2% of the window, at most 8,000 characters). Over budget, descriptions are shortened first
//! (all to the same length, as long as fits), then skills are omitted from the end (user
//! skills before project ones go last), each step with a warning. The result is part of the
//! system prompt, so it stays byte-identical for the session.

use super::Skill;

/// The most characters the list may take, whatever the window.
pub const MAX_BUDGET_CHARS: usize = 8_000;
/// Descriptions are never shortened below this: then skills are omitted instead.
pub const MIN_DESCRIPTION_CHARS: usize = 40;
/// Characters per token the budget assumes (the same rough rule the context meter uses).
const CHARS_PER_TOKEN: u64 = 4;

/// What became of a skill in the list.
pub use crate::bus::SkillStatus as Status;

/// One skill's line in the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSkill {
    pub name: String,
    /// The description as listed (shortened or not).
    pub description: String,
    pub path: String,
    pub origin: String,
    pub status: Status,
}

/// The session's list: every skill with its status, the text for the system prompt and the
/// warnings to show.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillListing {
    pub entries: Vec<ListedSkill>,
    /// The characters the listed lines may take.
    pub budget: usize,
    /// The `# Skills` section of the system prompt; empty when nothing is listed.
    pub text: String,
    pub warnings: Vec<String>,
}

/// The budget for a window of `window_tokens`: 2% of it, at most `MAX_BUDGET_CHARS`.
pub fn budget_for(window_tokens: u64) -> usize {
    let chars = window_tokens.saturating_mul(CHARS_PER_TOKEN) / 50;
    usize::try_from(chars)
        .unwrap_or(usize::MAX)
        .min(MAX_BUDGET_CHARS)
}

fn line(name: &str, description: &str, path: &str) -> String {
    format!("- {name}: {description} ({path})\n")
}

fn cost(skills: &[&Skill], cap: usize) -> usize {
    skills
        .iter()
        .map(|s| {
            line(
                &s.name,
                &super::shorten(&s.description, cap),
                &s.file.display().to_string(),
            )
            .chars()
            .count()
        })
        .sum()
}

/// The largest `n` in `lo..=hi` with `fits(n)`, for a `fits` true up to some point and false
/// after it; `lo` when none fits.
fn largest(lo: usize, hi: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The list of `skills` (in precedence order) within `budget` characters.
pub fn build(skills: &[Skill], budget: usize) -> SkillListing {
    let mut entries: Vec<ListedSkill> = Vec::new();
    let offered: Vec<&Skill> = skills.iter().filter(|s| s.model_invocable).collect();
    let longest = offered
        .iter()
        .map(|s| s.description.chars().count())
        .max()
        .unwrap_or(0);
    // The longest common description length that fits, and how many skills fit at all (both
    // costs grow with what they count, so each is a binary search).
    let mut kept = offered.len();
    let mut cap = longest;
    if cost(&offered, cap) > budget {
        let floor = MIN_DESCRIPTION_CHARS.min(longest);
        kept = largest(0, offered.len(), |k| cost(&offered[..k], floor) <= budget);
        cap = largest(floor, longest, |c| cost(&offered[..kept], c) <= budget);
    }
    let mut shortened = Vec::new();
    let mut omitted = Vec::new();
    let mut text = String::new();
    for (i, skill) in offered.iter().enumerate() {
        let path = skill.file.display().to_string();
        let (description, status) = if i >= kept {
            omitted.push(skill.name.clone());
            (skill.description.clone(), Status::Omitted)
        } else if skill.description.chars().count() > cap {
            shortened.push(skill.name.clone());
            (super::shorten(&skill.description, cap), Status::Shortened)
        } else {
            (skill.description.clone(), Status::Listed)
        };
        if status != Status::Omitted {
            text.push_str(&line(&skill.name, &description, &path));
        }
        entries.push(ListedSkill {
            name: skill.name.clone(),
            description,
            path,
            origin: skill.origin.clone(),
            status,
        });
    }
    for skill in skills.iter().filter(|s| !s.model_invocable) {
        entries.push(ListedSkill {
            name: skill.name.clone(),
            description: skill.description.clone(),
            path: skill.file.display().to_string(),
            origin: skill.origin.clone(),
            status: Status::UserOnly,
        });
    }
    let mut warnings = Vec::new();
    if !shortened.is_empty() {
        warnings.push(format!(
            "skills: the descriptions of {} were shortened to {cap} characters to fit the skill list's budget of {budget} characters (/skills shows the list)",
            shortened.join(", ")
        ));
    }
    if !omitted.is_empty() {
        warnings.push(format!(
            "skills: {} left out of the model's list (over its budget of {budget} characters): the model will not know of them; /NAME still runs one",
            omitted.join(", ")
        ));
    }
    let text = if text.is_empty() {
        String::new()
    } else {
        format!("{HEADER}{text}")
    };
    SkillListing {
        entries,
        budget,
        text,
        warnings,
    }
}

/// How the model is told to use the list.
const HEADER: &str = "\n# Skills\nSkills are instructions for particular tasks, written by the user or the repository. \
When a task matches a skill's description, call the `skill` tool with its name before doing the task, then follow what it returns.\n";
