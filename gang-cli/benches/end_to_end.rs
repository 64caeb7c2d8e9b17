//! `gang place` and `gang explain` end to end on a 10,000-node / 100,000-pod snapshot:
//! the real binary run as a process (hyperfine-style), so reading the file, parsing,
//! the cluster, the inventory, placing, rendering and exiting all count.
//!
//!     cargo bench -p gang-cli --bench end_to_end
//!
//! Targets (issue 12): `gang place` ≤ 1.5 s, `gang explain` ≤ 2 s. Measured, never
//! asserted. `GANG_BENCH_RUNS` sets the runs per command (default 5).
//!
//! The snapshot is generated here, shaped like `kubectl get nodes,pods -A -o json`:
//! GKE-style nodes (8 GPUs; blocks of 1,024 nodes, subblocks of 64, one host label
//! per node; a GPU taint), 100,000 pods (10 per node, 10% finished, a sidecar on every
//! fourth; node n runs n mod 5 one-GPU pods). The workloads are Kueue-annotated Jobs
//! that tolerate the taint: `fits` (32 pods of 4 GPUs in one subblock: placed) and
//! `short` (80 pods of 8 GPUs in one subblock of 64 nodes: does not fit; a block does).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const NODES: usize = 10_000;
const PODS: usize = 100_000;

#[allow(clippy::write_with_newline)]
fn snapshot() -> String {
    let mut s = String::with_capacity(NODES * 1500 + PODS * 2200);
    s.push_str("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n");
    for n in 0..NODES {
        let (b, sb) = (n / 1024, (n / 64) % 16);
        write!(
            s,
            r#"        {{"apiVersion": "v1", "kind": "Node", "metadata": {{"annotations": {{"node.alpha.kubernetes.io/ttl": "0"}}, "creationTimestamp": "2026-11-02T08:00:00Z", "labels": {{"beta.kubernetes.io/arch": "amd64", "cloud.google.com/gce-topology-block": "b{b}", "cloud.google.com/gce-topology-subblock": "s{sb}", "cloud.google.com/gce-topology-host": "h{n}", "cloud.google.com/gke-nodepool": "a3mega", "kubernetes.io/hostname": "node-{n}", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "topology.kubernetes.io/zone": "us-central1-a"}}, "name": "node-{n}", "resourceVersion": "{n}", "uid": "00000000-0000-0000-0000-{n:012}"}}, "spec": {{"podCIDR": "10.0.0.0/24", "providerID": "gce://p/us-central1-a/node-{n}", "taints": [{{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}}]}}, "status": {{"addresses": [{{"address": "10.0.0.1", "type": "InternalIP"}}], "allocatable": {{"cpu": "206", "ephemeral-storage": "3000Gi", "memory": "1775Gi", "nvidia.com/gpu": "8", "pods": "110"}}, "capacity": {{"cpu": "208", "ephemeral-storage": "3100Gi", "memory": "1800Gi", "nvidia.com/gpu": "8", "pods": "110"}}, "conditions": [{{"lastHeartbeatTime": "2026-12-01T08:00:00Z", "message": "kubelet has sufficient memory available", "reason": "KubeletHasSufficientMemory", "status": "False", "type": "MemoryPressure"}}, {{"lastHeartbeatTime": "2026-12-01T08:00:00Z", "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True", "type": "Ready"}}], "nodeInfo": {{"architecture": "amd64", "containerRuntimeVersion": "containerd://2.1.0", "kubeletVersion": "v1.37.0"}}}}}},
"#
        )
        .unwrap();
    }
    for p in 0..PODS {
        let (node, k) = (p % NODES, p / NODES);
        let gpu = if k < node % 5 { "1" } else { "0" };
        let sidecar = if p % 4 == 0 {
            r#""initContainers": [{"image": "registry.example/log-agent:1", "name": "log-agent", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}, "restartPolicy": "Always"}], "#
        } else {
            ""
        };
        // Finished pods hold nothing: only those without a GPU finish, so the GPU
        // usage per node stays n mod 5.
        let phase = if p % 10 == 9 && gpu == "0" {
            "Succeeded"
        } else {
            "Running"
        };
        write!(
            s,
            r#"        {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"annotations": {{"kubectl.kubernetes.io/default-container": "main"}}, "creationTimestamp": "2026-11-30T10:00:00Z", "generateName": "job-{j}-", "labels": {{"app": "job-{j}", "batch.kubernetes.io/job-name": "job-{j}"}}, "name": "job-{j}-{p}", "namespace": "team-{t}", "ownerReferences": [{{"apiVersion": "batch/v1", "controller": true, "kind": "Job", "name": "job-{j}", "uid": "u-{j}"}}], "uid": "11111111-0000-0000-0000-{p:012}"}}, "spec": {{"containers": [{{"env": [{{"name": "RANK", "value": "{p}"}}], "image": "registry.example/train:1", "name": "main", "resources": {{"limits": {{"nvidia.com/gpu": "{gpu}"}}, "requests": {{"cpu": "2", "memory": "16Gi", "nvidia.com/gpu": "{gpu}"}}}}}}], {sidecar}"nodeName": "node-{node}", "restartPolicy": "Never", "schedulerName": "default-scheduler", "tolerations": [{{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}}]}}, "status": {{"conditions": [{{"status": "True", "type": "Ready"}}, {{"status": "True", "type": "PodScheduled"}}], "containerStatuses": [{{"name": "main", "ready": true, "restartCount": 0, "state": {{"running": {{"startedAt": "2026-11-30T10:00:04Z"}}}}}}], "phase": "{phase}", "podIP": "10.1.0.1", "qosClass": "Burstable"}}}},
"#,
            j = p / 8,
            t = p % 50,
        )
        .unwrap();
    }
    s.truncate(s.len() - 2);
    s.push_str(
        "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\"resourceVersion\": \"\"}\n}\n",
    );
    s
}

fn job(name: &str, pods: u32, gpus: u32) -> String {
    format!(
        r#"apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: ml, labels: {{kueue.x-k8s.io/queue-name: q}}}}
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    metadata:
      annotations:
        kueue.x-k8s.io/podset-required-topology: cloud.google.com/gce-topology-subblock
    spec:
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      containers:
        - name: train
          resources:
            requests: {{cpu: "8", memory: 64Gi}}
            limits: {{nvidia.com/gpu: "{gpus}"}}
"#
    )
}

fn target_dir() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_gang"));
    exe.parent().unwrap().join("gang-cli-bench")
}

fn time(args: &[&Path], cmd: &str, expect: i32, runs: usize) -> Vec<Duration> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_gang"))
            .arg(cmd)
            .args(args)
            .output()
            .expect("run gang");
        let t = start.elapsed();
        assert_eq!(
            out.status.code(),
            Some(expect),
            "gang {cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        times.push(t);
    }
    times.sort();
    times
}

fn report(name: &str, target: f64, t: &[Duration]) {
    let s = |d: Duration| d.as_secs_f64();
    println!(
        "{name:<28} min {:.3} s  median {:.3} s  max {:.3} s  ({} runs; target ≤ {target} s)",
        s(t[0]),
        s(t[t.len() / 2]),
        s(t[t.len() - 1]),
        t.len()
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing to run.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runs: usize = std::env::var("GANG_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let dir = target_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let snap = dir.join("snapshot-10k-nodes-100k-pods.json");
    if !snap.exists() {
        let text = snapshot();
        std::fs::write(&snap, &text).unwrap();
    }
    let fits = dir.join("fits.yaml");
    std::fs::write(&fits, job("fits", 32, 4)).unwrap();
    let short = dir.join("short.yaml");
    std::fs::write(&short, job("short", 80, 8)).unwrap();
    let mb = std::fs::metadata(&snap).unwrap().len() as f64 / 1e6;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "snapshot: {NODES} nodes, {PODS} pods, {mb:.0} MB of JSON; load average {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    report(
        "gang place (placed)",
        1.5,
        &time(&[&snap, &fits], "place", 0, runs),
    );
    report(
        "gang place (does not fit)",
        1.5,
        &time(&[&snap, &short], "place", 1, runs),
    );
    report(
        "gang explain (placed)",
        2.0,
        &time(&[&snap, &fits], "explain", 0, runs),
    );
    report(
        "gang explain (does not fit)",
        2.0,
        &time(&[&snap, &short], "explain", 1, runs),
    );
    report("gang topology", 2.0, &time(&[&snap], "topology", 0, runs));
}
