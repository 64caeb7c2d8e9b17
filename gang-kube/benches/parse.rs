//! Reading `kubectl get nodes,pods -o json` for 10k nodes and 100k pods.
//!
//!     cargo bench -p gang-kube --bench parse
//!
//! The snapshot is generated here: GKE-style nodes (8 GPUs, topology labels, a taint)
//! and pods shaped like `kubectl` prints them (labels, owner references, a sidecar on
//! every fourth pod, status with conditions and container statuses).

use std::fmt::Write;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use gang_kube::{Cluster, ClusterOptions, Objects};

#[allow(clippy::write_with_newline)] // one object per line, as kubectl prints them
fn snapshot(nodes: usize, pods: usize) -> String {
    let mut s = String::with_capacity(nodes * 1500 + pods * 2200);
    s.push_str("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n");
    for n in 0..nodes {
        let (b, sb, h) = (n / 1024, (n / 64) % 16, n % 64);
        write!(
            s,
            r#"        {{"apiVersion": "v1", "kind": "Node", "metadata": {{"annotations": {{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}}, "creationTimestamp": "2026-11-02T08:00:00Z", "labels": {{"beta.kubernetes.io/arch": "amd64", "cloud.google.com/gce-topology-block": "b{b}", "cloud.google.com/gce-topology-subblock": "s{sb}", "cloud.google.com/gce-topology-host": "h{b}-{sb}-{h}", "cloud.google.com/gke-nodepool": "a3mega", "kubernetes.io/hostname": "node-{n}", "node.kubernetes.io/instance-type": "a3-megagpu-8g", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "topology.kubernetes.io/zone": "us-central1-a"}}, "name": "node-{n}", "resourceVersion": "{n}", "uid": "00000000-0000-0000-0000-{n:012}"}}, "spec": {{"podCIDR": "10.0.0.0/24", "providerID": "gce://p/us-central1-a/node-{n}", "taints": [{{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}}]}}, "status": {{"addresses": [{{"address": "10.0.0.1", "type": "InternalIP"}}], "allocatable": {{"cpu": "206", "ephemeral-storage": "3000Gi", "memory": "1775Gi", "nvidia.com/gpu": "8", "pods": "110"}}, "capacity": {{"cpu": "208", "ephemeral-storage": "3100Gi", "memory": "1800Gi", "nvidia.com/gpu": "8", "pods": "110"}}, "conditions": [{{"lastHeartbeatTime": "2026-12-01T08:00:00Z", "lastTransitionTime": "2026-11-02T08:00:00Z", "message": "kubelet has sufficient memory available", "reason": "KubeletHasSufficientMemory", "status": "False", "type": "MemoryPressure"}}, {{"lastHeartbeatTime": "2026-12-01T08:00:00Z", "lastTransitionTime": "2026-11-02T08:00:00Z", "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True", "type": "Ready"}}], "nodeInfo": {{"architecture": "amd64", "containerRuntimeVersion": "containerd://2.1.0", "kernelVersion": "6.6.0", "kubeletVersion": "v1.37.0", "osImage": "Container-Optimized OS"}}}}}},
"#
        )
        .unwrap();
    }
    for p in 0..pods {
        let node = p % nodes;
        let sidecar = if p % 4 == 0 {
            r#""initContainers": [{"image": "registry.example/log-agent:1", "name": "log-agent", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}, "restartPolicy": "Always"}], "#
        } else {
            ""
        };
        write!(
            s,
            r#"        {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"annotations": {{"kubectl.kubernetes.io/default-container": "main"}}, "creationTimestamp": "2026-11-30T10:00:00Z", "generateName": "job-{j}-", "labels": {{"app": "job-{j}", "batch.kubernetes.io/job-name": "job-{j}", "controller-uid": "c-{j}"}}, "name": "job-{j}-{p}", "namespace": "team-{t}", "ownerReferences": [{{"apiVersion": "batch/v1", "blockOwnerDeletion": true, "controller": true, "kind": "Job", "name": "job-{j}", "uid": "u-{j}"}}], "resourceVersion": "{p}", "uid": "11111111-0000-0000-0000-{p:012}"}}, "spec": {{"containers": [{{"env": [{{"name": "RANK", "value": "{p}"}}], "image": "registry.example/train:1", "imagePullPolicy": "IfNotPresent", "name": "main", "resources": {{"limits": {{"nvidia.com/gpu": "1"}}, "requests": {{"cpu": "2", "memory": "16Gi", "nvidia.com/gpu": "1"}}}}, "terminationMessagePath": "/dev/termination-log", "volumeMounts": [{{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access", "readOnly": true}}]}}], {sidecar}"dnsPolicy": "ClusterFirst", "nodeName": "node-{node}", "priority": 0, "restartPolicy": "Never", "schedulerName": "default-scheduler", "serviceAccountName": "default", "tolerations": [{{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}}, {{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300}}]}}, "status": {{"conditions": [{{"lastProbeTime": null, "lastTransitionTime": "2026-11-30T10:00:05Z", "status": "True", "type": "Ready"}}, {{"lastProbeTime": null, "lastTransitionTime": "2026-11-30T10:00:01Z", "status": "True", "type": "PodScheduled"}}], "containerStatuses": [{{"containerID": "containerd://abc{p}", "image": "registry.example/train:1", "imageID": "sha256:0", "lastState": {{}}, "name": "main", "ready": true, "restartCount": 0, "started": true, "state": {{"running": {{"startedAt": "2026-11-30T10:00:04Z"}}}}}}], "hostIP": "10.0.0.1", "phase": "{phase}", "podIP": "10.1.0.1", "qosClass": "Burstable", "startTime": "2026-11-30T10:00:01Z"}}}},
"#,
            j = p / 8,
            t = p % 50,
            phase = if p % 10 == 9 { "Succeeded" } else { "Running" },
        )
        .unwrap();
    }
    // Replace the last comma.
    if s.ends_with(",\n") {
        s.truncate(s.len() - 2);
        s.push('\n');
    }
    s.push_str(
        "    ],\n    \"kind\": \"List\",\n    \"metadata\": {\"resourceVersion\": \"\"}\n}\n",
    );
    s
}

fn bench(c: &mut Criterion) {
    let text = snapshot(10_000, 100_000);
    eprintln!(
        "snapshot: 10000 nodes, 100000 pods, {:.1} MB of JSON",
        text.len() as f64 / 1e6
    );
    let mut g = c.benchmark_group("kubectl-10k-nodes-100k-pods");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("parse", |b| {
        b.iter(|| Objects::parse("snapshot.json", black_box(&text)).unwrap())
    });
    let objects = Objects::parse("snapshot.json", &text).unwrap();
    g.bench_function("cluster", |b| {
        b.iter(|| Cluster::from_objects(black_box(&objects), &ClusterOptions::new()).unwrap())
    });
    let cluster = Cluster::from_objects(&objects, &ClusterOptions::new()).unwrap();
    g.bench_function("inventory", |b| {
        b.iter(|| black_box(&cluster).inventory().unwrap())
    });
    g.bench_function("parse+cluster+inventory", |b| {
        b.iter(|| {
            let o = Objects::parse("snapshot.json", black_box(&text)).unwrap();
            Cluster::from_objects(&o, &ClusterOptions::new())
                .unwrap()
                .inventory()
                .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
