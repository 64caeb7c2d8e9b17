//! Reading the objects: files, standard input, or `kubectl get … -o json`.

use std::io::Read;
use std::process::Command;

use gang_kube::{Objects, TopologySource};

use crate::cli::{KubeAccess, TopologyChoiceArgs};
use crate::error::CliError;

/// The default cap on the bytes of one input (a file, standard input, what kubectl
/// prints): 256 MiB; `GANG_MAX_INPUT_BYTES` overrides it.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = gang_sim::DEFAULT_MAX_INPUT_BYTES;

/// Reads one input of at most `max_bytes` bytes, checked as UTF-8 while it streams in.
///
/// # Errors
/// [`CliError::Read`] naming `source`: unreadable, too large (naming the setting that
/// raises the cap) or not UTF-8.
pub fn read_capped(source: &str, r: &mut dyn Read, max_bytes: u64) -> Result<String, CliError> {
    gang_sim::textio::read_text(r, max_bytes).map_err(|e| CliError::Read {
        source: source.to_owned(),
        reason: match e {
            gang_sim::textio::ReadError::TooLarge { .. } => {
                format!("{e} (set GANG_MAX_INPUT_BYTES to read more)")
            }
            e => e.to_string(),
        },
    })
}

/// A file read as [`read_capped`] reads it, with the same answers, but into one buffer
/// sized from the file's length and checked as UTF-8 once (a 143 MB snapshot otherwise
/// grows its buffer by doubling and is checked twice). A file larger than the cap, one
/// that grew past it while read, or one that is not UTF-8 is read again by
/// [`read_capped`] from the bytes read, which names the error as it always does.
fn read_file_capped(
    source: &str,
    mut file: std::fs::File,
    max_bytes: u64,
) -> Result<String, CliError> {
    // Only a regular file has a length worth trusting: a device (`/dev/urandom`,
    // `/dev/zero`), a pipe or a socket says 0 and is streamed, so that bytes that are
    // not UTF-8 stop the read where they start, not after `max_bytes` of them.
    let len = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        _ => return read_capped(source, &mut file, max_bytes),
    };
    if len > max_bytes {
        return read_capped(source, &mut file, max_bytes);
    }
    // One byte more than the length: read_to_end then needs no second buffer to learn
    // that the file ended.
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    let read = (&mut file)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut buf);
    match read {
        Ok(n) if n as u64 <= max_bytes => match text_of(buf) {
            Ok(text) => Ok(text),
            Err(e) => read_capped(source, &mut e.as_bytes(), max_bytes),
        },
        Ok(_) => read_capped(source, &mut buf.as_slice(), max_bytes),
        Err(e) => Err(CliError::Read {
            source: source.to_owned(),
            reason: gang_sim::textio::ReadError::Io(e.to_string()).to_string(),
        }),
    }
}

/// The text at which [`text_of`] checks two halves on two threads.
const PARALLEL_CHECK: usize = 8 << 20;

/// `buf` as text, as [`String::from_utf8`] makes it; a large buffer (a 143 MB snapshot
/// takes ~60M instructions to check) is checked in two halves on two threads, and
/// whatever is not UTF-8 or cannot be so checked is checked again whole, for the error.
fn text_of(buf: Vec<u8>) -> Result<String, std::string::FromUtf8Error> {
    let two = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    if buf.len() >= PARALLEL_CHECK && two {
        let (first, second) = buf.split_at(buf.len() / 2);
        let ok = std::thread::scope(|scope| {
            let other = std::thread::Builder::new()
                .spawn_scoped(scope, || std::str::from_utf8(second).is_ok());
            let first_ok = std::str::from_utf8(first).is_ok();
            first_ok && other.ok().and_then(|h| h.join().ok()) == Some(true)
        });
        if ok {
            // SAFETY: both halves are UTF-8, and a prefix that is UTF-8 ends at a
            // character boundary: the two together are UTF-8.
            return Ok(unsafe { String::from_utf8_unchecked(buf) });
        }
    }
    String::from_utf8(buf)
}

/// Objects read from files (`-` is standard input, read once), in the order given;
/// each at most `max_bytes` bytes.
///
/// # Errors
/// [`CliError::Read`] for a file that cannot be read, is larger than `max_bytes` or is
/// not UTF-8 (or `-` given twice); [`CliError::Kube`] for text gang-kube rejects
/// (naming the file, object and field).
pub fn read_files(
    files: &[String],
    stdin: &mut dyn Read,
    max_bytes: u64,
) -> Result<Objects, CliError> {
    let mut objects = Objects::new();
    if files.iter().filter(|f| *f == "-").count() > 1 {
        return Err(CliError::Read {
            source: "-".into(),
            reason: "standard input given twice".into(),
        });
    }
    for f in files {
        let text = if f == "-" {
            read_capped("-", stdin, max_bytes)?
        } else {
            let file = std::fs::File::open(f).map_err(|e| CliError::Read {
                source: f.clone(),
                reason: e.to_string(),
            })?;
            read_file_capped(f, file, max_bytes)?
        };
        let name = if f == "-" { "<stdin>" } else { f.as_str() };
        let before = objects.len();
        objects.add(name, &text)?;
        if objects.len() == before {
            return Err(CliError::input(name, "no Kubernetes objects in it"));
        }
    }
    Ok(objects)
}

/// The topology source the options choose. See [`TopologySource`].
///
/// # Errors
/// [`CliError::Input`] for an empty `--levels` entry.
pub fn topology_source(t: &TopologyChoiceArgs) -> Result<TopologySource, CliError> {
    Ok(if let Some(levels) = &t.levels {
        let levels: Vec<String> = levels.iter().map(|l| l.trim().to_owned()).collect();
        if levels.is_empty() || levels.iter().any(String::is_empty) {
            return Err(CliError::Input {
                source: "--levels".into(),
                object: None,
                field: None,
                reason: "give node label keys, outermost first, separated by commas".into(),
            });
        }
        TopologySource::Levels(levels)
    } else if let Some(name) = &t.topology {
        TopologySource::Topology(name.clone())
    } else if let Some(name) = &t.flavor {
        TopologySource::Flavor(name.clone())
    } else if t.detect {
        TopologySource::Detect
    } else {
        TopologySource::Auto
    })
}

/// The Kueue objects the plugin reads when the levels are not given.
pub const KUEUE_RESOURCES: &str = "topologies.kueue.x-k8s.io,resourceflavors.kueue.x-k8s.io";

/// The PriorityClasses the plugin reads for `explain` and `preempt`.
pub const PRIORITY_CLASSES: &str = "priorityclasses.scheduling.k8s.io";

/// Kueue's WorkloadPriorityClasses, read after the PriorityClasses (apart: a cluster
/// without Kueue does not have the resource).
pub const WORKLOAD_PRIORITY_CLASSES: &str = "workloadpriorityclasses.kueue.x-k8s.io";

/// Runs `kubectl` (the first on `PATH`) and reads what it prints as objects.
pub struct Kubectl<'a> {
    /// The program to run.
    pub program: &'a str,
    /// `--context`, `--kubeconfig`, `--request-timeout`.
    pub access: &'a KubeAccess,
    /// The most bytes kubectl may print.
    pub max_bytes: u64,
}

/// Seconds kubectl is given beyond its own `--request-timeout` before it is killed.
const KILL_GRACE_SECS: u64 = 5;

impl Kubectl<'_> {
    /// `kubectl [--context C] [--kubeconfig K] --request-timeout=Ns ARGS…`: its standard
    /// output, or why not. Output past `max_bytes` stops the read; a kubectl still
    /// running `KILL_GRACE_SECS` after its request timeout is killed.
    ///
    /// # Errors
    /// [`CliError::Kubectl`] when kubectl cannot be run, exits non-zero, prints too
    /// much or text that is not UTF-8, or hangs.
    pub fn run(&self, args: &[&str]) -> Result<String, CliError> {
        use std::process::Stdio;
        use std::sync::mpsc;
        use std::time::{Duration, Instant};

        let mut full: Vec<String> = Vec::new();
        if let Some(c) = &self.access.context {
            full.extend(["--context".to_owned(), c.clone()]);
        }
        if let Some(k) = &self.access.kubeconfig {
            full.extend(["--kubeconfig".to_owned(), k.clone()]);
        }
        full.extend(args.iter().map(|a| (*a).to_owned()));
        // The command as messages name it: without the timeout gang adds.
        let command = format!("{} {}", self.program, full.join(" "));
        let timeout = self.access.request_timeout.max(1);
        full.insert(
            full.len() - args.len(),
            format!("--request-timeout={timeout}s"),
        );
        let fail = |reason: String| CliError::Kubectl {
            command: command.clone(),
            reason,
        };
        let mut child = Command::new(self.program)
            .args(&full)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("cannot run {}: {e}", self.program)))?;
        let (tx, rx) = mpsc::channel();
        if let Some(mut out) = child.stdout.take() {
            let tx = tx.clone();
            let max = self.max_bytes;
            std::thread::spawn(move || {
                let _ = tx.send((true, gang_sim::textio::read_text(&mut out, max)));
            });
        }
        if let Some(mut err) = child.stderr.take() {
            std::thread::spawn(move || {
                // The first 64 KiB are kept for the message; the rest is drained, so
                // that a kubectl writing much to its standard error is never blocked
                // on a full pipe (it was, then killed at the deadline as if it hung).
                let mut kept = Vec::new();
                let _ = (&mut err).take(64 * 1024).read_to_end(&mut kept);
                let _ = std::io::copy(&mut err, &mut std::io::sink());
                let text = String::from_utf8_lossy(&kept).into_owned();
                let _ = tx.send((false, Ok(text)));
            });
        }
        let deadline = Instant::now() + Duration::from_secs(timeout + KILL_GRACE_SECS);
        let (mut stdout, mut stderr) = (None, None);
        while stdout.is_none() || stderr.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((true, r)) => stdout = Some(r),
                Ok((false, r)) => stderr = Some(r.unwrap_or_default()),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(fail(format!(
                        "no answer within {}s; killed it (--request-timeout raises the limit)",
                        timeout + KILL_GRACE_SECS
                    )));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if let Some(Err(e)) = &stdout {
                let _ = child.kill();
                let _ = child.wait();
                let hint = match e {
                    gang_sim::textio::ReadError::TooLarge { .. } => {
                        " (set GANG_MAX_INPUT_BYTES to read more)"
                    }
                    _ => "",
                };
                return Err(fail(format!("its output: {e}{hint}")));
            }
        }
        let status = child.wait().map_err(|e| fail(e.to_string()))?;
        let stderr = stderr.unwrap_or_default().trim().to_owned();
        if !status.success() {
            return Err(fail(if stderr.is_empty() {
                format!("exit status {status}")
            } else {
                stderr
            }));
        }
        match stdout {
            Some(Ok(text)) => Ok(text),
            Some(Err(e)) => Err(fail(format!("its output: {e}"))),
            None => Ok(String::new()),
        }
    }

    /// The namespace kubectl uses without `-n`: the current context's (`kubectl config
    /// view --minify -o jsonpath={..namespace}`), else `default` — also when kubectl
    /// cannot say (no current context: kubectl itself then uses `default`).
    pub fn context_namespace(&self) -> String {
        let out = self
            .run(&["config", "view", "--minify", "-o", "jsonpath={..namespace}"])
            .unwrap_or_default();
        let ns = out.trim();
        if ns.is_empty() || ns.contains(char::is_whitespace) {
            "default".to_owned()
        } else {
            ns.to_owned()
        }
    }

    /// Reads `kubectl ARGS…` into `objects`, the source named by the command line.
    ///
    /// # Errors
    /// As [`Kubectl::run`]; [`CliError::Kube`] for output gang-kube rejects.
    pub fn add(&self, objects: &mut Objects, args: &[&str]) -> Result<(), CliError> {
        let text = self.run(args)?;
        let source = format!("kubectl {}", args.join(" "));
        if text.trim().is_empty() {
            return Ok(());
        }
        objects.add(&source, &text)?;
        Ok(())
    }

    /// The cluster: `kubectl get nodes,pods --all-namespaces -o json`, and unless the
    /// levels come from elsewhere the Kueue Topology and ResourceFlavor objects
    /// (skipped, with a note, when Kueue is not installed).
    ///
    /// # Errors
    /// As [`Kubectl::add`] for the nodes and pods.
    pub fn cluster(
        &self,
        objects: &mut Objects,
        topology: &TopologySource,
        notes: &mut Vec<String>,
    ) -> Result<(), CliError> {
        let mut cluster = Objects::new();
        self.add(
            &mut cluster,
            &["get", "nodes,pods", "--all-namespaces", "-o", "json"],
        )?;
        cluster.expect_kinds(&["Node", "Pod"])?;
        objects.extend(cluster);
        if !matches!(topology, TopologySource::Levels(_) | TopologySource::Detect) {
            if let Err(e) = self.add(objects, &["get", KUEUE_RESOURCES, "-o", "json"]) {
                if matches!(e, CliError::Kube(_)) {
                    return Err(e);
                }
                notes.push(format!(
                    "no Kueue Topology or ResourceFlavor read ({e}); levels detected from node labels"
                ));
            }
        }
        Ok(())
    }

    /// `kubectl get priorityclasses.scheduling.k8s.io -o json` into `objects`: the
    /// classes that give workloads their priority (`explain`, `preempt`); then
    /// `kubectl get workloadpriorityclasses.kueue.x-k8s.io -o json` (Kueue's, named by
    /// the label `kueue.x-k8s.io/priority-class`), when an object read carries that
    /// label. A cluster that will not list them
    /// (RBAC, or no Kueue) is a note, not an error.
    ///
    /// # Errors
    /// [`CliError::Kube`] for output gang-kube rejects.
    pub fn priority_classes(
        &self,
        objects: &mut Objects,
        notes: &mut Vec<String>,
    ) -> Result<(), CliError> {
        if let Err(e) = self.add(objects, &["get", PRIORITY_CLASSES, "-o", "json"]) {
            if matches!(e, CliError::Kube(_)) {
                return Err(e);
            }
            notes.push(format!(
                "no PriorityClass read ({e}); priorities come from spec.priority only"
            ));
        }
        // Only an object labelled kueue.x-k8s.io/priority-class needs them.
        if !objects.uses_workload_priority_class() {
            return Ok(());
        }
        if let Err(e) = self.add(objects, &["get", WORKLOAD_PRIORITY_CLASSES, "-o", "json"]) {
            if matches!(e, CliError::Kube(_)) {
                return Err(e);
            }
            notes.push(format!("no Kueue WorkloadPriorityClass read ({e})"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checked in two halves or whole: the same text, or the same error, wherever a
    /// character or a bad byte falls (at the middle, in either half).
    #[test]
    fn text_checked_in_halves_is_checked_as_whole() {
        let n = PARALLEL_CHECK + 6;
        let mid = n / 2;
        let base: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
        let mut cases = vec![base.clone()];
        for at in [mid - 2, mid - 1, mid, mid + 1] {
            let mut b = base.clone();
            b[at..at + 3].copy_from_slice("€".as_bytes());
            cases.push(b.clone());
            // The character cut short: not UTF-8.
            b[at + 2] = b'x';
            cases.push(b);
        }
        for at in [0, mid - 1, mid, n - 1] {
            let mut b = base.clone();
            b[at] = 0xff;
            cases.push(b);
        }
        for b in cases {
            let whole = String::from_utf8(b.clone()).map_err(|e| e.utf8_error());
            let halves = text_of(b).map_err(|e| e.utf8_error());
            assert_eq!(halves, whole);
        }
    }
}
