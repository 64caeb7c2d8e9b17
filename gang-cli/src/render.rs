//! Output formatting: every report as text for people (optionally coloured), and as
//! JSON or YAML documents (the reports serialise as they are).

use std::cell::Cell;
use std::fmt::Write;
use std::rc::Rc;

use gang_core::diagnosis::{LevelStatus, Part};
use gang_core::Quantity;
use gang_kube::{CheckStatus, Framework, PrioritySource, RoleExclusions, TopologyChoice};
use serde::Serialize;

use crate::cli::{ColorMode, Format};
use crate::report::{
    short_level, ClusterSummary, ExplainReport, LevelRow, PlaceReport, PreemptAnswer,
    PreemptReport, Status, WorkloadSummary,
};
use crate::tree::{Domain, TopologyReport};

/// Whether to colour: `always`, `never`, or (`auto`) when standard output is a terminal
/// and `NO_COLOR` is unset or empty (<https://no-color.org>).
///
/// ```
/// use gang_cli::{cli::ColorMode, render::use_color};
/// assert!(use_color(ColorMode::Auto, true, None));
/// assert!(!use_color(ColorMode::Auto, true, Some("1")));
/// assert!(use_color(ColorMode::Auto, true, Some(""))); // empty: not set
/// assert!(!use_color(ColorMode::Auto, false, None)); // a pipe or a file
/// assert!(use_color(ColorMode::Always, false, Some("1")));
/// assert!(!use_color(ColorMode::Never, true, None));
/// ```
pub fn use_color(mode: ColorMode, is_terminal: bool, no_color: Option<&str>) -> bool {
    match mode {
        ColorMode::Always => true,
        ColorMode::Never => false,
        ColorMode::Auto => is_terminal && no_color.is_none_or(str::is_empty),
    }
}

/// `text` made safe for a terminal: control characters other than newline and tab
/// (ESC among them), and the invisible or direction-changing format characters (bidi
/// overrides and isolates, zero-width characters, the BOM), are written as `\u{…}`
/// escapes, so a name cannot move the cursor, retitle the window, reorder what is shown
/// or colour it. JSON and YAML output are not passed through this: they stay exact.
///
/// ```
/// use gang_cli::render::terminal_safe;
/// assert_eq!(terminal_safe("ml\x1b]0;pwned\x07/pg\n"), "ml\\u{1b}]0;pwned\\u{7}/pg\n");
/// assert_eq!(terminal_safe("a\u{202e}b"), "a\\u{202e}b");
/// assert_eq!(terminal_safe("\x1b[32mok"), "\\u{1b}[32mok");   // a colour of the input's
/// ```
pub fn terminal_safe(text: &str) -> String {
    escape(text, |_, _| None)
}

/// What [`Style`] writes where a colour starts or ends, until [`terminal_text`] turns
/// it into `ESC`: a Unicode noncharacter (reserved for a program's own use), so that
/// the colours are told apart from whatever the input holds.
const MARK: char = '\u{fdd0}';
/// The colour codes gang writes after [`MARK`] (then `ESC`).
const CODES: [&str; 6] = ["[0m", "[1m", "[2m", "[31m", "[32m", "[33m"];

/// The text a report was rendered to with `style`, for a terminal: every character
/// of the input escaped as [`terminal_safe`] does (an `ESC [ 32 m` in a name included:
/// it is escaped before gang's own colours are put in), and gang's own colours, which
/// `style` wrote as a mark, turned into escape codes. Should the input itself hold the
/// mark followed by a colour code (a noncharacter no real name has), no mark is taken
/// for a colour: the text is shown uncoloured with every mark escaped, so nothing of the
/// input is hidden and nothing coloured by it.
///
/// ```
/// use gang_cli::render::{terminal_text, Style};
/// let style = Style::new(true);
/// let text = format!("{} {}", style.bold("ok"), "name\x1b[1mX");
/// assert_eq!(terminal_text(&text, &style), "\x1b[1mok\x1b[0m name\\u{1b}[1mX");
/// ```
pub fn terminal_text(text: &str, style: &Style) -> String {
    let marks = |t: &str| {
        t.match_indices(MARK)
            .filter(|(i, m)| CODES.iter().any(|c| t[i + m.len()..].starts_with(c)))
            .count()
    };
    if style.color && marks(text) == style.painted.get() {
        escape(text, |text, i| {
            CODES
                .iter()
                .any(|c| text[i + MARK.len_utf8()..].starts_with(c))
                .then_some('\x1b')
        })
    } else {
        escape(text, |_, _| None)
    }
}

/// `text` with its unsafe characters escaped; `ours(text, i)` says what to write for
/// a [`MARK`] at byte `i` (`None`: escape it too).
fn escape(text: &str, ours: impl Fn(&str, usize) -> Option<char>) -> String {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}' | '\u{feff}' | MARK)
    };
    if !text.chars().any(unsafe_char) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        match (c == MARK).then(|| ours(text, i)).flatten() {
            Some(esc) => out.push(esc),
            None if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            None => out.push(c),
        }
    }
    out
}

/// ANSI styling, or none. Colours are written as a mark that [`terminal_text`] turns
/// into escape codes once the input's own characters are escaped; the style counts
/// the marks it wrote (clones share the count).
#[derive(Debug, Clone)]
pub struct Style {
    /// Whether to emit colours.
    pub color: bool,
    painted: Rc<Cell<usize>>,
}

impl Style {
    /// A style that colours, or not.
    pub fn new(color: bool) -> Style {
        Style {
            color,
            painted: Rc::default(),
        }
    }
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            self.painted.set(self.painted.get() + 2);
            format!("{MARK}[{code}m{s}{MARK}[0m")
        } else {
            s.to_owned()
        }
    }
    /// `s` in bold (as headings are written).
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
}

/// Serialises `value` as the format asks (`text` is not handled here).
pub fn document<T: Serialize>(value: &T, format: Format) -> String {
    let json = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
    match format {
        Format::Yaml => serde_yaml_ng::to_string(&to_yaml(&json)).unwrap_or_default(),
        _ => {
            let mut s = serde_json::to_string_pretty(&json).unwrap_or_default();
            s.push('\n');
            s
        }
    }
}

/// JSON to YAML values: numbers through their integer or float value (gang-core's
/// serde_json keeps numbers as text, which YAML would print as a map).
fn to_yaml(v: &serde_json::Value) -> serde_yaml_ng::Value {
    use serde_json::Value as J;
    use serde_yaml_ng::Value as Y;
    match v {
        J::Null => Y::Null,
        J::Bool(b) => Y::Bool(*b),
        J::Number(n) => {
            if let Some(u) = n.as_u64() {
                Y::Number(u.into())
            } else if let Some(i) = n.as_i64() {
                Y::Number(i.into())
            } else if let Some(f) = n.as_f64() {
                Y::Number(f.into())
            } else {
                Y::String(n.to_string())
            }
        }
        J::String(s) => Y::String(s.clone()),
        J::Array(a) => Y::Sequence(a.iter().map(to_yaml).collect()),
        J::Object(m) => Y::Mapping(
            m.iter()
                .map(|(k, v)| (Y::String(k.clone()), to_yaml(v)))
                .collect(),
        ),
    }
}

fn shape(r: &gang_kube::Resources) -> String {
    r.iter()
        .map(|(k, v)| format!("{k} {}", v.human(k)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `native PodGroup`, `PyTorchJob`, …
pub fn framework_name(f: Framework) -> &'static str {
    match f {
        Framework::NativePodGroup => "Kubernetes PodGroup",
        Framework::VolcanoPodGroup => "Volcano PodGroup",
        Framework::CoschedulingPodGroup => "scheduler-plugins PodGroup",
        Framework::KaiPodGroup => "KAI PodGroup",
        Framework::Job => "Job",
        Framework::JobSet => "JobSet",
        Framework::PyTorchJob => "PyTorchJob",
        Framework::MpiJob => "MPIJob",
        Framework::TfJob => "TFJob",
        Framework::VolcanoJob => "Volcano Job",
        Framework::JaxJob => "JAXJob",
        Framework::XgBoostJob => "XGBoostJob",
        Framework::PaddleJob => "PaddleJob",
        Framework::LeaderWorkerSet => "LeaderWorkerSet group",
        Framework::RayCluster => "RayCluster",
        Framework::RayJob => "RayJob",
        Framework::AppWrapper => "AppWrapper",
        Framework::KueuePodGroup => "Kueue pod group",
        _ => "workload",
    }
}

/// Wraps `text` at [`WIDTH`] columns: the first line starts at the column of `indent`'s
/// end (after a label of that width), every later line is indented by `indent`.
fn wrap(text: &str, indent: &str) -> String {
    wrap_at(text, indent.chars().count(), indent)
}

/// As [`wrap`], the first line starting at column `start`.
fn wrap_at(text: &str, start: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = start;
    let mut fresh = true;
    for word in text.split_whitespace() {
        let w = word.chars().count();
        if !fresh && line + 1 + w > WIDTH {
            out.push('\n');
            out.push_str(indent);
            line = indent.chars().count();
        } else if !fresh {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += w;
        fresh = false;
    }
    out
}

const WIDTH: usize = 88;

fn topology_line(t: &TopologyChoice) -> String {
    let levels = if t.levels.is_empty() {
        "flat (no levels)".to_owned()
    } else {
        t.levels.join(" > ")
    };
    format!("{levels} — {}", t.reason)
}

fn request_text(w: &WorkloadSummary) -> String {
    match &w.request {
        None => "—".to_owned(),
        Some(r) => {
            let mut parts = Vec::new();
            if let Some(l) = &r.required {
                parts.push(format!("required: one {} ({l})", short_level(l)));
            }
            if let Some(l) = &r.preferred {
                parts.push(format!("preferred: one {} ({l})", short_level(l)));
            }
            for (l, size) in &r.slices {
                parts.push(format!("slices of {size} per {}", short_level(l)));
            }
            if parts.is_empty() {
                "none (any nodes, still all-or-nothing)".to_owned()
            } else {
                parts.join("; ")
            }
        }
    }
}

fn label(s: &Style, name: &str) -> String {
    s.bold(&format!("{name:<12}"))
}

fn cluster_line(c: &ClusterSummary) -> String {
    let mut s = format!("{} nodes, {} schedulable", c.nodes, c.schedulable);
    if !c.excluded.is_empty() {
        let shown: Vec<String> = c
            .excluded
            .iter()
            .take(3)
            .map(|e| {
                let why: Vec<String> = e.reasons.iter().map(ToString::to_string).collect();
                format!("{}: {}", e.node, why.join(", "))
            })
            .collect();
        let more = if c.excluded.len() > 3 {
            format!(", {} more", c.excluded.len() - 3)
        } else {
            String::new()
        };
        let _ = write!(s, " (excluded {}{more})", shown.join("; "));
    }
    let p = &c.pods;
    let _ = write!(s, "; {} pods counted", p.counted);
    let mut extra = Vec::new();
    if p.ignored > 0 {
        extra.push(format!("{} the workload's own", p.ignored));
    }
    if p.unbound > 0 {
        extra.push(format!("{} pending", p.unbound));
    }
    if p.terminal > 0 {
        extra.push(format!("{} finished", p.terminal));
    }
    if p.on_unknown_nodes > 0 {
        extra.push(format!("{} on unknown nodes", p.on_unknown_nodes));
    }
    if !extra.is_empty() {
        let _ = write!(s, " (not counted: {})", extra.join(", "));
    }
    s
}

fn workload_head(s: &Style, w: &WorkloadSummary) -> String {
    let at = if w.source.is_empty() {
        w.position.clone()
    } else {
        format!("{} {}", w.source, w.position)
    };
    format!(
        "{} {} ({}, {at})",
        s.bold("Workload"),
        s.bold(&w.object),
        framework_name(w.framework)
    )
}

fn warnings_text(out: &mut String, s: &Style, warnings: &[String]) {
    if warnings.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", s.bold("Warnings"));
    for w in warnings {
        let _ = writeln!(out, "  {} {}", s.yellow("!"), wrap(w, "    "));
    }
}

/// `gang place` as text.
pub fn place_text(r: &PlaceReport, s: &Style) -> String {
    let mut out = String::new();
    let w = &r.workload;
    match &r.outcome {
        gang_core::Outcome::Placed(p) => {
            let place = match p.level() {
                _ if !r.parts.is_empty() => {
                    format!("{} parts, each in a domain of its own", r.parts.len())
                }
                Some(l) => format!("{} {} ({l})", short_level(l), p.domain_path()),
                None => "the cluster (no single domain)".to_owned(),
            };
            let _ = writeln!(
                out,
                "{} {}: {} members in {place}",
                s.green("placed"),
                s.bold(&w.object),
                p.member_count()
            );
            // Placed in parts (a JobSet's child Jobs, Kueue's PodSets): each part's
            // own domain, which the whole gang's assignment does not show.
            for part in &r.parts {
                let head = format!("  {} {}: ", part.name, part_place(part));
                let _ = writeln!(
                    out,
                    "{head}{}",
                    wrap_at(
                        &assignments_text(&part.assignments),
                        head.chars().count(),
                        "    "
                    )
                );
            }
            for (role, k) in p.placed_by_role().filter(|_| r.parts.is_empty()) {
                let nodes: Vec<String> = p
                    .assignments()
                    .iter()
                    .filter(|a| a.role == role)
                    .map(|a| format!("{} ×{}", a.node, a.count))
                    .collect();
                let count = w
                    .roles
                    .iter()
                    .find(|x| x.name == role)
                    .map_or(k, |x| x.members);
                let head = format!("  {role} {k} of {count}: ");
                let _ = writeln!(
                    out,
                    "{head}{}",
                    wrap_at(&nodes.join(", "), head.chars().count(), "    ")
                );
            }
            let preferred = w.request.as_ref().and_then(|r| r.preferred.as_deref());
            if let Some(pref) = preferred.filter(|pref| Some(*pref) != p.level()) {
                let _ = writeln!(
                    out,
                    "  (no one {} holds it: preferred, so it walked up to {})",
                    short_level(pref),
                    p.level().map_or("the whole cluster", short_level)
                );
            }
            if !p.search_complete() {
                let _ = writeln!(
                    out,
                    "  (the exact search ran out of budget at a tighter level first: a tighter placement may exist)"
                );
            }
        }
        other => {
            let word = if Status::of(other) == Status::Undecided {
                s.yellow("undecided")
            } else {
                s.red("does not fit")
            };
            let _ = writeln!(out, "{word} {}", s.bold(&w.object));
            if let Some(d) = other.diagnosis() {
                let _ = writeln!(out, "  {}", wrap(&d.to_string(), "  "));
            }
            let _ = writeln!(
                out,
                "  (`gang explain` with the same arguments walks through the checklist)"
            );
        }
    }
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Request"),
        wrap(&request_text(w), "             ")
    );
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Topology"),
        wrap(&topology_line(&r.topology), "             ")
    );
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Cluster"),
        wrap(&cluster_line(&r.cluster), "             ")
    );
    warnings_text(&mut out, s, &r.warnings);
    out
}

fn status_word(s: &Style, st: CheckStatus) -> String {
    match st {
        CheckStatus::Ok => s.green("ok   "),
        CheckStatus::Warning => s.yellow("warn "),
        CheckStatus::Error => s.red("error"),
    }
}

/// A role's excluded nodes: why the cordoned ones are, as Kubernetes says it, then
/// gang-core's causes in its words.
fn exclusion_parts(x: &RoleExclusions) -> Vec<String> {
    let mut parts = Vec::new();
    if x.not_ready > 0 {
        parts.push(format!("{} not ready", x.not_ready));
    }
    if x.unschedulable > 0 {
        parts.push(format!("{} unschedulable", x.unschedulable));
    }
    if x.outside_flavor > 0 {
        parts.push(format!("{} outside the ResourceFlavor", x.outside_flavor));
    }
    parts.extend(x.causes.iter().map(ToString::to_string));
    parts
}

fn level_line(s: &Style, row: &LevelRow, name_w: usize, dom_w: usize) -> String {
    let r = &row.report;
    let domain = if r.domain.is_empty() {
        "—".to_owned()
    } else {
        r.domain.clone()
    };
    let mark = if r.requested { "  ← requested" } else { "" };
    let line = format!("  {:<name_w$}  {:<dom_w$}  {r}{mark}", row.name, domain);
    match r.status {
        LevelStatus::Fits => s.green(&line),
        LevelStatus::Invalid => s.dim(&line),
        _ => line,
    }
}

/// `gang explain` as text: one screen.
pub fn explain_text(r: &ExplainReport, s: &Style) -> String {
    let mut out = String::new();
    let w = &r.workload;
    let ind = "             ";
    let _ = writeln!(out, "{}", workload_head(s, w));
    let kinds: Vec<String> = r
        .objects
        .kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Objects"),
        wrap(
            &format!(
                "{} in {}: {}",
                r.objects.total,
                r.objects.sources.join(", "),
                kinds.join(", ")
            ),
            ind
        )
    );
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Topology"),
        wrap(&topology_line(&r.topology), ind)
    );
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Cluster"),
        wrap(&cluster_line(&r.cluster), ind)
    );
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Members"),
        wrap(
            &format!(
                "{} members, minimum {} ({}); {}",
                w.members,
                w.minimum,
                w.minimum_field,
                request_text(w)
            ),
            ind
        )
    );
    for role in &w.roles {
        let min = role
            .min_count
            .map(|m| format!(" (at least {m})"))
            .unwrap_or_default();
        let free = if role.constrained { "" } else { ", anywhere" };
        let head = format!("{ind}{} × {}{min}{free}: ", role.members, role.name);
        let _ = writeln!(
            out,
            "{head}{}",
            wrap_at(
                &shape(&role.requests),
                head.chars().count(),
                &format!("{ind}  ")
            )
        );
    }
    let _ = writeln!(out, "{}", s.bold("Checklist"));
    for c in &r.checks {
        let _ = writeln!(
            out,
            "  {} {:<15} {}",
            status_word(s, c.status),
            c.id,
            wrap(&c.message, "                        ")
        );
    }
    let _ = writeln!(
        out,
        "{}",
        s.bold("Nodes by role (each node under its first reason)")
    );
    for x in &r.exclusions {
        let parts = exclusion_parts(x);
        let excl = if parts.is_empty() {
            String::new()
        } else {
            format!("; excluded: {}", parts.join(", "))
        };
        let _ = writeln!(
            out,
            "  {}",
            wrap(
                &format!(
                    "{}: {} of {} nodes fit one member now{excl}",
                    x.role, x.fits_now, x.nodes
                ),
                "    "
            )
        );
    }
    if !r.levels.is_empty() {
        let _ = writeln!(out, "{}", s.bold("Best domain per level"));
        let name_w = r
            .levels
            .iter()
            .map(|l| l.name.chars().count())
            .max()
            .unwrap_or(4);
        let dom_w = r
            .levels
            .iter()
            .map(|l| l.report.domain.chars().count().max(1))
            .max()
            .unwrap_or(1)
            .min(40);
        for row in &r.levels {
            let _ = writeln!(out, "{}", level_line(s, row, name_w, dom_w));
        }
    }
    let a = &r.answer;
    let (head, plain_head) = match a.status {
        Status::Placed => (s.green("placed"), "placed"),
        Status::Undecided => (s.yellow("undecided"), "undecided"),
        Status::Invalid => (s.red("invalid"), "invalid"),
        Status::Unschedulable => (s.red("does not fit"), "does not fit"),
    };
    let body = match a.status {
        Status::Placed => {
            let place = match &a.level {
                Some(l) => format!("{} {}", short_level(l), a.domain),
                None => "the cluster".to_owned(),
            };
            if a.parts.is_empty() {
                format!("in {place}: {}", assignments_text(&a.assignments))
            } else {
                let parts: Vec<String> = a
                    .parts
                    .iter()
                    .map(|x| {
                        format!(
                            "{} {}: {}",
                            x.name,
                            part_place(x),
                            assignments_text(&x.assignments)
                        )
                    })
                    .collect();
                format!("in parts, each in its own domain: {}", parts.join("; "))
            }
        }
        // The table above shows the best domain, the nodes by role the exclusions, and
        // the Relax lines below the relaxations: the rest of gang-core's paragraph.
        Status::Unschedulable | Status::Undecided | Status::Invalid => match &r.diagnosis {
            Some(d) => d
                .sentences()
                .into_iter()
                .filter(|(p, _)| {
                    !matches!(
                        p,
                        Part::Best | Part::Excluded | Part::Relaxation | Part::FewerMembers
                    )
                })
                .map(|(_, s)| s)
                .collect::<Vec<_>>()
                .join(" "),
            None => a.message.clone().unwrap_or_default(),
        },
    };
    let body = wrap_at(&body, 13 + plain_head.chars().count() + 2, ind);
    let _ = writeln!(out, "{} {head}: {body}", label(s, "Answer"));
    for x in &r.relaxations {
        let text = match &x.set {
            Some(set) => format!("{} (set {set}).", x.message.trim_end_matches('.')),
            None => x.message.clone(),
        };
        let _ = writeln!(out, "{} {}", label(s, "Relax"), wrap(&text, ind));
    }
    if let Some(p) = &r.preemption {
        let _ = writeln!(
            out,
            "{} {}",
            label(s, "Preempt"),
            wrap(
                &format!(
                    "{} ({}; `gang preempt` for the what-if)",
                    p.message,
                    priority_words(p)
                ),
                ind
            )
        );
    }
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Not checked"),
        s.dim(&wrap(r.not_checked, ind))
    );
    warnings_text(&mut out, s, &r.warnings);
    out
}

/// `priority 100 from PriorityClass urgent`, `priority 7 from spec.priority`.
fn priority_words(p: &PreemptAnswer) -> String {
    let class = p.priority.class.as_deref().unwrap_or_default();
    let from = match p.priority.source {
        PrioritySource::GlobalDefault => format!("the global default PriorityClass {class}"),
        PrioritySource::PriorityClass => format!("PriorityClass {class}"),
        PrioritySource::WorkloadPriorityClass => {
            format!("Kueue WorkloadPriorityClass {class} (label kueue.x-k8s.io/priority-class)")
        }
        PrioritySource::SpecPriority => p.priority.field.clone().unwrap_or_default(),
        PrioritySource::None => {
            return "priority 0 (no spec.priority, PriorityClass or global default)".to_owned()
        }
    };
    format!("priority {} from {from}", p.priority.value)
}

/// `gang preempt` as text: the plan (or why there is none), the workload's priority,
/// where it would go, then the request, topology and cluster lines of `place`.
pub fn preempt_text(r: &PreemptReport, s: &Style) -> String {
    let mut out = String::new();
    let w = &r.workload;
    let p = &r.preemption;
    let ind = "             ";
    let word = match (p.status, &p.plan) {
        (Status::Placed, Some(plan)) if plan.fits_now => s.green("fits now"),
        (Status::Placed, _) => s.green("preempt"),
        (Status::Undecided, _) => s.yellow("undecided"),
        _ => s.red("no plan"),
    };
    let plain_word = match (p.status, &p.plan) {
        (Status::Placed, Some(plan)) if plan.fits_now => "fits now",
        (Status::Placed, _) => "preempt",
        (Status::Undecided, _) => "undecided",
        _ => "no plan",
    };
    let start = plain_word.chars().count() + w.object.chars().count() + 3;
    let _ = writeln!(
        out,
        "{word} {}: {}",
        s.bold(&w.object),
        wrap_at(&p.message, start, "  ")
    );
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Priority"),
        wrap(
            &format!(
                "{}; {} of {} running workloads have a lower priority",
                priority_words(p),
                p.lower_priority,
                p.running
            ),
            ind
        )
    );
    if let Some(plan) = &p.plan {
        let _ = writeln!(
            out,
            "{} {}",
            label(s, "Then"),
            wrap(&assignments_text(&plan.assignments), ind)
        );
    }
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Request"),
        wrap(&request_text(w), ind)
    );
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Topology"),
        wrap(&topology_line(&r.topology), ind)
    );
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Cluster"),
        wrap(&cluster_line(&r.cluster), ind)
    );
    warnings_text(&mut out, s, &r.warnings);
    out
}

/// `worker: a1 ×2, a2 ×2; master: a1 ×1`.
/// `in rack b1/r2`, or `in the cluster`, for a part.
fn part_place(p: &crate::report::PartAnswer) -> String {
    match &p.level {
        Some(l) => format!("in {} {}", short_level(l), p.domain),
        None => "in the cluster".to_owned(),
    }
}

fn assignments_text(a: &[gang_core::Assignment]) -> String {
    let mut roles: Vec<(&str, Vec<String>)> = Vec::new();
    for x in a {
        let item = format!("{} ×{}", x.node, x.count);
        match roles.iter_mut().find(|(r, _)| *r == x.role) {
            Some((_, v)) => v.push(item),
            None => roles.push((x.role.as_str(), vec![item])),
        }
    }
    roles
        .iter()
        .map(|(r, v)| format!("{r}: {}", v.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

const BAR: usize = 20;

fn bar(s: &Style, free: Quantity, alloc: Quantity) -> String {
    let (f, a) = (free.millis() as u128, alloc.millis() as u128);
    let mut cells = (f * BAR as u128 + a / 2)
        .checked_div(a)
        .map_or(0, |c| c as usize);
    if f > 0 && cells == 0 {
        cells = 1;
    }
    if f < a && cells == BAR {
        cells = BAR - 1;
    }
    let cells = cells.min(BAR);
    format!(
        "{}{}",
        s.green(&"█".repeat(cells)),
        s.dim(&"░".repeat(BAR - cells))
    )
}

struct Row {
    prefix: String,
    label: String,
    d: Domain,
}

fn flatten(d: &Domain, prefix: &str, child_prefix: &str, rows: &mut Vec<Row>) {
    let label = match &d.level {
        None => "cluster".to_owned(),
        Some(l) if l == gang_core::HOSTNAME_LEVEL => d.name.clone(),
        Some(_) if d.unlabelled => d.name.clone(),
        Some(l) => format!("{} {}", short_level(l), d.name),
    };
    let mut shallow = d.clone();
    shallow.children = Vec::new();
    rows.push(Row {
        prefix: prefix.to_owned(),
        label,
        d: shallow,
    });
    let n = d.children.len();
    for (i, c) in d.children.iter().enumerate() {
        let last = i + 1 == n;
        let p = format!("{child_prefix}{}", if last { "└─ " } else { "├─ " });
        let cp = format!("{child_prefix}{}", if last { "   " } else { "│  " });
        flatten(c, &p, &cp, rows);
    }
}

/// `gang topology` as text: the tree, one bar per drawn resource (free on schedulable
/// nodes / allocatable), nodes and schedulable counts.
pub fn topology_text(r: &TopologyReport, s: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {}",
        label(s, "Topology"),
        wrap(&topology_line(&r.topology), "             ")
    );
    let _ = writeln!(
        out,
        "{} free on schedulable nodes / allocatable, per domain",
        label(s, "Bars")
    );
    let mut rows = Vec::new();
    flatten(&r.tree, "", "", &mut rows);
    let name_w = rows
        .iter()
        .map(|x| x.prefix.chars().count() + x.label.chars().count())
        .max()
        .unwrap_or(7);
    let nums: Vec<Vec<String>> = rows
        .iter()
        .map(|x| {
            r.resources
                .iter()
                .map(|res| {
                    let f = x.d.free.get(res).copied().unwrap_or_default();
                    let a = x.d.allocatable.get(res).copied().unwrap_or_default();
                    format!("{}/{}", f.human(res), a.human(res))
                })
                .collect()
        })
        .collect();
    let num_w: Vec<usize> = (0..r.resources.len())
        .map(|i| nums.iter().map(|n| n[i].chars().count()).max().unwrap_or(1))
        .collect();
    let mut head = format!("{:name_w$}", "");
    for (i, res) in r.resources.iter().enumerate() {
        let col = BAR + 1 + num_w[i];
        let _ = write!(head, "  {:<col$}", res);
    }
    let _ = writeln!(out, "{}", s.bold(head.trim_end()));
    for (x, n) in rows.iter().zip(&nums) {
        let name = format!("{}{}", x.prefix, x.label);
        let pad = name_w - name.chars().count();
        let shown = if !x.d.excluded.is_empty() {
            s.red(&x.label)
        } else if x.d.unlabelled {
            s.dim(&x.label)
        } else {
            x.label.clone()
        };
        let mut line = format!("{}{shown}{}", x.prefix, " ".repeat(pad));
        for (i, res) in r.resources.iter().enumerate() {
            let f = x.d.free.get(res).copied().unwrap_or_default();
            let a = x.d.allocatable.get(res).copied().unwrap_or_default();
            let _ = write!(line, "  {} {:>w$}", bar(s, f, a), n[i], w = num_w[i]);
        }
        let is_node = x.d.level.as_deref() == Some(gang_core::HOSTNAME_LEVEL);
        if is_node {
            if !x.d.excluded.is_empty() {
                let _ = write!(line, "  {}", s.red(&x.d.excluded.join(", ")));
            }
        } else {
            let plural = if x.d.nodes == 1 { "node" } else { "nodes" };
            let _ = write!(line, "  {} {plural}", x.d.nodes);
            if x.d.schedulable != x.d.nodes {
                let _ = write!(line, ", {} schedulable", x.d.schedulable);
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    warnings_text(&mut out, s, &r.warnings);
    out
}
