//! Reading the objects: files, standard input, or `kubectl get … -o json`.

use std::io::Read;
use std::process::Command;

use gang_kube::{Objects, TopologySource};

use crate::cli::{KubeAccess, TopologyChoiceArgs};
use crate::error::CliError;

/// Objects read from files (`-` is standard input, read once), in the order given.
///
/// # Errors
/// [`CliError::Read`] for a file that cannot be read (or `-` given twice);
/// [`CliError::Kube`] for text gang-kube rejects (naming the file, object and field).
pub fn read_files(files: &[String], stdin: &mut dyn Read) -> Result<Objects, CliError> {
    let mut objects = Objects::new();
    if files.iter().filter(|f| *f == "-").count() > 1 {
        return Err(CliError::Read {
            source: "-".into(),
            reason: "standard input given twice".into(),
        });
    }
    for f in files {
        let text = if f == "-" {
            let mut s = String::new();
            stdin.read_to_string(&mut s).map_err(|e| CliError::Read {
                source: "-".into(),
                reason: e.to_string(),
            })?;
            s
        } else {
            std::fs::read_to_string(f).map_err(|e| CliError::Read {
                source: f.clone(),
                reason: e.to_string(),
            })?
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

/// Runs `kubectl` (the first on `PATH`) and reads what it prints as objects.
pub struct Kubectl<'a> {
    /// The program to run.
    pub program: &'a str,
    /// `--context`, `--kubeconfig`.
    pub access: &'a KubeAccess,
}

impl Kubectl<'_> {
    /// `kubectl [--context C] [--kubeconfig K] ARGS…`: its standard output, or why not.
    ///
    /// # Errors
    /// [`CliError::Kubectl`] when kubectl cannot be run or exits non-zero.
    pub fn run(&self, args: &[&str]) -> Result<String, CliError> {
        let mut full: Vec<String> = Vec::new();
        if let Some(c) = &self.access.context {
            full.extend(["--context".to_owned(), c.clone()]);
        }
        if let Some(k) = &self.access.kubeconfig {
            full.extend(["--kubeconfig".to_owned(), k.clone()]);
        }
        full.extend(args.iter().map(|a| (*a).to_owned()));
        let command = format!("{} {}", self.program, full.join(" "));
        let out = Command::new(self.program)
            .args(&full)
            .output()
            .map_err(|e| CliError::Kubectl {
                command: command.clone(),
                reason: format!("cannot run {}: {e}", self.program),
            })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            return Err(CliError::Kubectl {
                command,
                reason: if stderr.is_empty() {
                    format!("exit status {}", out.status)
                } else {
                    stderr
                },
            });
        }
        String::from_utf8(out.stdout).map_err(|_| CliError::Kubectl {
            command,
            reason: "printed text that is not UTF-8".into(),
        })
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
    /// classes that give workloads their priority (`explain`, `preempt`). A cluster
    /// that will not list them (RBAC) is a note, not an error.
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
        Ok(())
    }
}
