//! The kubectl plugin: the `gang` binary run as `kubectl-gang` (a symlink, as the
//! README installs it) and as `gang kubectl …`, against a stand-in `kubectl` on `PATH`
//! that serves gang-kube's fixtures and fails the test on any call it does not expect.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{json, kube, output, Run};

/// A YAML or JSON fixture as `kubectl -o json` prints it: one object, or a List.
fn as_json(path: &str, docs: std::ops::Range<usize>) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    if path.ends_with(".json") {
        return serde_json::from_str(&text).unwrap();
    }
    let values: Vec<serde_json::Value> = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    let items: Vec<serde_json::Value> = values[docs].to_vec();
    if items.len() == 1 {
        items.into_iter().next().unwrap()
    } else {
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})
    }
}

fn list(parts: Vec<serde_json::Value>) -> serde_json::Value {
    let mut items = Vec::new();
    for p in parts {
        match p.get("items") {
            Some(serde_json::Value::Array(a)) => items.extend(a.iter().cloned()),
            _ => items.push(p),
        }
    }
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})
}

struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    /// A directory with `kubectl` (the stand-in), `kubectl-gang` (a symlink to the
    /// binary) and the files it serves, one `case` arm per expected call.
    fn new(name: &str, calls: &[(&str, Option<serde_json::Value>)]) -> Cluster {
        let dir = std::env::temp_dir().join(format!("gang-plugin-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut script = String::from(
            "#!/bin/sh\n# Stand-in kubectl: serves fixture files for the exact calls expected.\n\
             # Every call carries gang's --request-timeout: logged in raw.log, left out of calls.log.\n\
             echo \"$*\" >> \"$(dirname \"$0\")/raw.log\"\n\
             args=\"\"\nfor a in \"$@\"; do case \"$a\" in --request-timeout=*) ;; *) args=\"$args${args:+ }$a\" ;; esac; done\n\
             echo \"$args\" >> \"$(dirname \"$0\")/calls.log\"\ncase \"$args\" in\n",
        );
        for (i, (args, body)) in calls.iter().enumerate() {
            match body {
                // Plain text (what `kubectl config view -o jsonpath=…` prints).
                Some(serde_json::Value::String(text)) => {
                    let f = dir.join(format!("reply-{i}.txt"));
                    std::fs::write(&f, text).unwrap();
                    script.push_str(&format!("  \"{args}\") cat \"{}\" ;;\n", f.display()));
                }
                Some(v) => {
                    let f = dir.join(format!("reply-{i}.json"));
                    std::fs::write(&f, serde_json::to_string_pretty(v).unwrap()).unwrap();
                    script.push_str(&format!("  \"{args}\") cat \"{}\" ;;\n", f.display()));
                }
                None => script.push_str(&format!(
                    "  \"{args}\") echo 'error: the server does not have a resource type' >&2; exit 1 ;;\n"
                )),
            }
        }
        script.push_str(
            "  *) echo \"stand-in kubectl: unexpected call: kubectl $*\" >&2; exit 99 ;;\nesac\n",
        );
        let k = dir.join("kubectl");
        std::fs::write(&k, script).unwrap();
        std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gang"), dir.join("kubectl-gang")).unwrap();
        Cluster { dir }
    }

    fn path_env(&self) -> String {
        format!(
            "{}:{}",
            self.dir.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// `kubectl-gang ARGS…` (what `kubectl gang ARGS…` runs).
    fn plugin(&self, args: &[&str]) -> Run {
        let mut c = Command::new(self.dir.join("kubectl-gang"));
        c.args(args)
            .env("PATH", self.path_env())
            .env_remove("NO_COLOR");
        output(c)
    }

    /// `gang kubectl ARGS…`.
    fn subcommand(&self, args: &[&str]) -> Run {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gang"));
        c.arg("kubectl").args(args).env("PATH", self.path_env());
        output(c)
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn clear(&self) {
        let _ = std::fs::remove_file(self.dir.join("calls.log"));
        let _ = std::fs::remove_file(self.dir.join("raw.log"));
    }

    /// The calls as kubectl saw them (with `--request-timeout`).
    fn raw_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("raw.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// A directory whose `kubectl` is the shell `body` (and `kubectl-gang`).
    fn scripted(name: &str, body: &str) -> Cluster {
        let dir = std::env::temp_dir().join(format!("gang-plugin-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let k = dir.join("kubectl");
        std::fs::write(&k, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gang"), dir.join("kubectl-gang")).unwrap();
        Cluster { dir }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const NODES_PODS: &str = "get nodes,pods --all-namespaces -o json";
const KUEUE: &str = "get topologies.kueue.x-k8s.io,resourceflavors.kueue.x-k8s.io -o json";
const PRIORITY: &str = "get priorityclasses.scheduling.k8s.io -o json";
const WORKLOAD_PRIORITY: &str = "get workloadpriorityclasses.kueue.x-k8s.io -o json";
const CONTEXT_NAMESPACE: &str = "config view --minify -o jsonpath={..namespace}";

fn empty_list() -> serde_json::Value {
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": []})
}

fn racks_cluster(name: &str) -> Cluster {
    let group = kube("training-workers.yaml");
    // The nodes and pods of racks.json plus the group's four (pending) member pods.
    let nodes_pods = list(vec![
        as_json(&kube("racks.json"), 0..1),
        as_json(&group, 1..5),
    ]);
    Cluster::new(
        name,
        &[
            (
                "get podgroup/training-workers -n ml-team -o json",
                Some(as_json(&group, 0..1)),
            ),
            (CONTEXT_NAMESPACE, Some("ml-team".into())),
            (NODES_PODS, Some(nodes_pods)),
            (KUEUE, None), // Kueue is not installed
            (PRIORITY, Some(empty_list())),
        ],
    )
}

#[test]
fn kubectl_gang_explain_reads_the_workload_then_the_cluster() {
    let c = racks_cluster("explain");
    let r = c.plugin(&["explain", "podgroup/training-workers", "-n", "ml-team"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        c.calls(),
        [
            "get podgroup/training-workers -n ml-team -o json",
            NODES_PODS,
            KUEUE,
            PRIORITY
        ]
    );
    assert!(r.stdout.starts_with("Workload PodGroup/ml-team/training-workers (Kubernetes PodGroup, kubectl get podgroup/training-workers -n ml-team -o json"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("rack   b1/a  fits all 4 training-workers  ← requested"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("Answer       placed: in rack b1/a: training-workers: a1 ×2, a2 ×2"),
        "{}",
        r.stdout
    );
    // Kueue missing is a note, not a failure.
    assert!(
        r.stdout
            .contains("no Kueue Topology or ResourceFlavor read"),
        "{}",
        r.stdout
    );
}

#[test]
fn gang_kubectl_place_is_the_same_plugin() {
    let c = racks_cluster("place");
    let r = c.subcommand(&[
        "place",
        "podgroup/training-workers",
        "-n",
        "ml-team",
        "-o",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r.stdout);
    assert_eq!(v["result"]["domain"]["topology.example.com/rack"], "a");
    assert_eq!(c.calls().len(), 3);
}

#[test]
fn without_a_namespace_the_contexts_namespace_is_used() {
    // No -n: kubectl's current context says ml-team; the workload is looked up there.
    let c = racks_cluster("no-namespace");
    let r = c.plugin(&["place", "podgroup/training-workers"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        c.calls()[..2],
        [
            CONTEXT_NAMESPACE,
            "get podgroup/training-workers -n ml-team -o json"
        ]
    );
    assert!(
        r.stdout
            .starts_with("placed PodGroup/ml-team/training-workers"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_context_without_a_namespace_or_no_context_means_default() {
    // The context names no namespace (kubectl prints nothing), or kubectl cannot say
    // (no current context: config view fails): `default`, as kubectl itself uses.
    for (name, reply) in [("empty-context", Some("".into())), ("no-context", None)] {
        let c = Cluster::new(
            name,
            &[
                (CONTEXT_NAMESPACE, reply),
                ("get job/train -n default -o json", None),
            ],
        );
        let r = c.plugin(&["explain", "job/train"]);
        assert_eq!(r.code, 4, "{name}: {}", r.stderr);
        assert_eq!(
            c.calls(),
            [CONTEXT_NAMESPACE, "get job/train -n default -o json"],
            "{name}"
        );
    }
}

#[test]
fn kueue_objects_are_read_from_the_cluster() {
    let job = kube("pytorchjob.yaml");
    let c = Cluster::new(
        "kueue",
        &[
            (
                "get pytorchjob/llama-ft -n ml -o json",
                Some(as_json(&job, 0..1)),
            ),
            (NODES_PODS, Some(as_json(&kube("gke-h100.json"), 0..1))),
            (KUEUE, Some(as_json(&kube("kueue-gke.yaml"), 0..2))),
        ],
    );
    let r = c.plugin(&[
        "place",
        "pytorchjob/llama-ft",
        "-n",
        "ml",
        "--output",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json(&r.stdout);
    assert_eq!(v["topology"]["origin"], "kueue-topology");
    assert_eq!(v["topology"]["flavor"]["name"], "a3mega");
    assert_eq!(
        v["result"]["domain"]["cloud.google.com/gce-topology-subblock"],
        "s1"
    );
    assert_eq!(
        v["result"]["domain"]["cloud.google.com/gce-topology-block"],
        "b2"
    );
    assert_eq!(c.calls().len(), 3);
}

#[test]
fn given_levels_skip_kueue_and_topology_reads_only_the_cluster() {
    let c = racks_cluster("topology");
    let r = c.plugin(&[
        "topology",
        "--levels",
        "topology.example.com/block,topology.example.com/rack",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(c.calls(), [NODES_PODS]);
    assert!(r.stdout.contains("rack a"), "{}", r.stdout);
    c.clear();
    let r = c.plugin(&["topology"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(c.calls(), [NODES_PODS, KUEUE]);
}

#[test]
fn a_failing_kubectl_is_exit_4_with_its_message() {
    let c = racks_cluster("missing");
    // The stand-in knows no job/nope: it fails as kubectl would, naming the call.
    let r = c.plugin(&["explain", "job/nope", "-n", "ml-team"]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`kubectl get job/nope -n ml-team -o json` failed"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("unexpected call"), "{}", r.stderr);
    // The workload is asked for first: nothing else was read.
    assert_eq!(c.calls(), ["get job/nope -n ml-team -o json"]);
    let r = c.plugin(&["place", "job/nope", "-o", "json"]);
    assert_eq!(r.code, 4);
    assert_eq!(json(&r.stdout)["kind"], "kubectl");
}

#[test]
fn no_kubectl_on_path_is_exit_4() {
    let dir = std::env::temp_dir().join(format!("gang-plugin-nokubectl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let link: &Path = &dir.join("kubectl-gang");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gang"), link).unwrap();
    let mut c = Command::new(link);
    c.args(["topology"]).env("PATH", &dir);
    let r = output(c);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(r.stderr.contains("cannot run kubectl"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plugin_help_names_kubectl_gang() {
    let c = racks_cluster("help");
    let r = c.plugin(&["--help"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("Usage: kubectl gang"), "{}", r.stdout);
    assert!(r.stdout.contains("Exit codes:"));
    assert!(c.calls().is_empty());
}

/// `kubectl gang preempt` reads the workload, the cluster, Kueue and the
/// PriorityClasses, and answers as `gang preempt` does on the same objects
/// (gang-kube/tests/fixtures/preemption.yaml; victims worked out by hand in its header).
#[test]
fn kubectl_gang_preempt_reads_the_priority_classes_too() {
    let f = kube("preemption.yaml");
    let all = as_json(&f, 0..1);
    let items = all["items"].as_array().unwrap();
    let of_kind = |kinds: &[&str]| -> serde_json::Value {
        let items: Vec<serde_json::Value> = items
            .iter()
            .filter(|i| kinds.contains(&i["kind"].as_str().unwrap()))
            .cloned()
            .collect();
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})
    };
    let urgent = items
        .iter()
        .find(|i| i["kind"] == "Job" && i["metadata"]["name"] == "urgent")
        .unwrap()
        .clone();
    let c = Cluster::new(
        "preempt",
        &[
            ("get job/urgent -n ml -o json", Some(urgent)),
            (NODES_PODS, Some(of_kind(&["Node", "Pod"]))),
            (KUEUE, None),
            (PRIORITY, Some(of_kind(&["PriorityClass"]))),
        ],
    );
    let r = c.plugin(&["preempt", "job/urgent", "-n", "ml", "-o", "json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        c.calls(),
        ["get job/urgent -n ml -o json", NODES_PODS, KUEUE, PRIORITY]
    );
    let v = json(&r.stdout);
    let victims: Vec<&str> = v["preemption"]["plan"]["victims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["workload"].as_str().unwrap())
        .collect();
    assert_eq!(victims, ["Job/ml/eval-b", "PodGroup/ml/big"]);
    assert_eq!(v["preemption"]["priority"]["class"], "urgent");
}

/// With a workload labelled `kueue.x-k8s.io/priority-class`, the plugin reads Kueue's
/// WorkloadPriorityClasses after the PriorityClasses, and the label's class decides
/// (gang-kube/tests/fixtures/kueue-workload-priority.yaml, worked out in its header:
/// wpc-urgent at 1000 evicts eval-b and big; at its pods' 10 it could evict nothing).
#[test]
fn kubectl_gang_preempt_reads_workload_priority_classes_when_labelled() {
    let all = as_json(&kube("preemption.yaml"), 0..1);
    let wpc = as_json(&kube("kueue-workload-priority.yaml"), 0..1);
    let items: Vec<serde_json::Value> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .chain(wpc["items"].as_array().unwrap())
        .cloned()
        .collect();
    let of_kind = |kinds: &[&str]| -> serde_json::Value {
        let items: Vec<serde_json::Value> = items
            .iter()
            .filter(|i| kinds.contains(&i["kind"].as_str().unwrap()))
            .cloned()
            .collect();
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items})
    };
    let job = items
        .iter()
        .find(|i| i["kind"] == "Job" && i["metadata"]["name"] == "wpc-urgent")
        .unwrap()
        .clone();
    let c = Cluster::new(
        "preempt-wpc",
        &[
            ("get job/wpc-urgent -n ml -o json", Some(job)),
            (NODES_PODS, Some(of_kind(&["Node", "Pod"]))),
            (KUEUE, None),
            (PRIORITY, Some(of_kind(&["PriorityClass"]))),
            (WORKLOAD_PRIORITY, Some(of_kind(&["WorkloadPriorityClass"]))),
        ],
    );
    let r = c.plugin(&["preempt", "job/wpc-urgent", "-n", "ml", "-o", "json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        c.calls(),
        [
            "get job/wpc-urgent -n ml -o json",
            NODES_PODS,
            KUEUE,
            PRIORITY,
            WORKLOAD_PRIORITY
        ]
    );
    let v = json(&r.stdout);
    assert_eq!(v["preemption"]["priority"]["class"], "kueue-urgent");
    assert_eq!(v["preemption"]["priority"]["value"], 1000);
    let victims: Vec<&str> = v["preemption"]["plan"]["victims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["workload"].as_str().unwrap())
        .collect();
    assert_eq!(victims, ["Job/ml/eval-b", "PodGroup/ml/big"]);
    // A cluster without Kueue's CRD: a note, and the label names a class not read.
    let c = Cluster::new(
        "preempt-wpc-none",
        &[
            (
                "get job/wpc-urgent -n ml -o json",
                Some(
                    items
                        .iter()
                        .find(|i| i["metadata"]["name"] == "wpc-urgent")
                        .unwrap()
                        .clone(),
                ),
            ),
            (NODES_PODS, Some(of_kind(&["Node", "Pod"]))),
            (KUEUE, None),
            (PRIORITY, Some(of_kind(&["PriorityClass"]))),
            (WORKLOAD_PRIORITY, None),
        ],
    );
    let r = c.plugin(&["preempt", "job/wpc-urgent", "-n", "ml", "-o", "json"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let v = json(&r.stdout);
    assert_eq!(v["field"], "metadata.labels.kueue.x-k8s.io/priority-class");
    assert_eq!(v["value"], "kueue-urgent");
}

/// Every kubectl call carries `--request-timeout` (30 s unless given); a kubectl that
/// hangs anyway is killed (issue 25, item 5).
#[test]
fn kubectl_gets_a_request_timeout_and_a_hanging_kubectl_is_killed() {
    let c = racks_cluster("timeout");
    let r = c.plugin(&["topology", "--request-timeout", "7"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let raw = c.raw_calls();
    assert!(!raw.is_empty());
    assert!(
        raw.iter()
            .all(|l| l.starts_with("--request-timeout=7s get ")),
        "{raw:?}"
    );
    c.clear();
    let _ = c.plugin(&["topology"]);
    assert!(c
        .raw_calls()
        .iter()
        .all(|l| l.contains("--request-timeout=30s")));

    let h = Cluster::scripted("hang", "exec sleep 600");
    let r = h.plugin(&["topology", "--request-timeout", "1"]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(r.stderr.contains("killed"), "{}", r.stderr);
}

/// A kubectl printing without end is cut off at the input cap, not read until memory
/// runs out (issue 25, item 5).
#[test]
fn a_kubectl_printing_forever_is_cut_off() {
    let h = Cluster::scripted("yes", "exec yes");
    let mut c = Command::new(h.dir.join("kubectl-gang"));
    c.args(["topology"])
        .env("PATH", h.path_env())
        .env("GANG_MAX_INPUT_BYTES", "1000000");
    let r = output(c);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(r.stderr.contains("limit of 1000000 bytes"), "{}", r.stderr);
    assert!(r.stderr.contains("GANG_MAX_INPUT_BYTES"), "{}", r.stderr);
}

/// A kubectl that writes much to its standard error (warnings) before its answer is
/// read to its end: only the first 64 KiB of its standard error are kept, the rest is
/// drained. Before, gang stopped reading it at 64 KiB, kubectl blocked on the full pipe
/// and was killed at the deadline as if it hung (issue 25, item 5).
#[test]
fn a_kubectl_writing_much_to_standard_error_is_not_blocked() {
    let nodes = kube("racks.json");
    let h = Cluster::scripted(
        "stderr",
        &format!(
            "head -c 1000000 /dev/zero | tr '\\0' w >&2\ncat \"{}\"",
            std::fs::canonicalize(&nodes).unwrap().display()
        ),
    );
    let r = h.plugin(&["topology", "--levels", "topology.example.com/rack"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("a1"), "{}", r.stdout);
}
