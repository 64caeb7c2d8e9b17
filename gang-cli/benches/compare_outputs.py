#!/usr/bin/env python3
"""Runs two `gang` binaries over every fixture combination and compares exit code,
stdout and stderr byte for byte (branch cliparse, issue 23: a faster read must answer
exactly as before).

usage: compare_outputs.py BASE_BIN NEW_BIN REPO [SNAPSHOT_DIR]

`place`, `explain -o json` and `topology` over gang-kube's node fixtures × the workload
fixtures of gang-kube and gang-cli (as written, converted to JSON `List`s, and merged
node + workload lists, so the JSON fast path reads every kind); with SNAPSHOT_DIR (the
`end_to_end` bench's snapshot-10k-nodes-100k-pods.json, fits.yaml, short.yaml) also the
large snapshot. Needs PyYAML."""
import glob, json, os, subprocess, sys, yaml, itertools
import tempfile
base, new, repo = sys.argv[1:4]
snap = sys.argv[4] if len(sys.argv) > 4 else None
tmp = tempfile.mkdtemp(prefix="gang-compare-")
kf = f"{repo}/gang-kube/tests/fixtures"; cf = f"{repo}/gang-cli/tests/fixtures"
nodes = sorted(glob.glob(f"{kf}/*.json")) + [f"{kf}/users/nodes-racks.yaml"]
works = sorted(glob.glob(f"{kf}/*.yaml") + glob.glob(f"{kf}/corpus/*.yaml") + glob.glob(f"{kf}/users/*.yaml")
               + glob.glob(f"{cf}/*.yaml") + glob.glob(f"{cf}/bad/*"))
# JSON List copies of the YAML workloads (the fast path), and node+workload merged lists.
extra = []
for w in works:
    try:
        docs = [d for d in yaml.safe_load_all(open(w)) if d is not None]
        lst = {"apiVersion": "v1", "kind": "List", "items": docs}
        p = f"{tmp}/{os.path.basename(w)}.json"; json.dump(lst, open(p, "w"), default=str); extra.append(p)
        for n in nodes[:4]:
            nd = json.load(open(n))
            m = {"kind": "List", "apiVersion": "v1", "items": nd["items"] + docs}
            p2 = f"{tmp}/{os.path.basename(n)}+{os.path.basename(w)}.json"; json.dump(m, open(p2, "w"), default=str)
            extra.append(p2)
    except Exception:
        pass
runs = []
for n in nodes:
    runs.append(["topology", n]); runs.append(["topology", "-o", "json", n])
    for w in works + [e for e in extra if "+" not in e]:
        runs.append(["place", n, w]); runs.append(["explain", "-o", "json", n, w])
for e in extra:
    if "+" in e:
        runs.append(["place", e]); runs.append(["explain", "-o", "json", e]); runs.append(["place", "-o", "json", e])
for f in works + extra:
    runs.append(["topology", f])
for w in (["fits.yaml", "short.yaml"] if snap else []):
    runs.append(["place", f"{snap}/snapshot-10k-nodes-100k-pods.json", f"{snap}/{w}"])
    runs.append(["explain", "-o", "json", f"{snap}/snapshot-10k-nodes-100k-pods.json", f"{snap}/{w}"])
# Large lists (read on several threads, branch jsonscan): a 1,000-node / 10,000-pod cut
# of the snapshot, as written and with one fault each, most of them in its second half:
# every refusal must read as before.
if snap:
    lines = open(f"{snap}/snapshot-10k-nodes-100k-pods.json").read().split("\n")
    keep = [l for l in lines if not l.startswith("        {")
            or (('"kind": "Node"' in l and int(l.split('"name": "node-')[1].split('"')[0]) < 1000)
                or ('"kind": "Pod"' in l and int(l.split('"nodeName": "node-')[1].split('"')[0]) < 1000))]
    items = [i for i, l in enumerate(keep) if l.startswith("        {")]
    for i in items[:-1]:
        keep[i] = keep[i].rstrip(",") + ","
    keep[items[-1]] = keep[items[-1]].rstrip(",")
    cut = "\n".join(keep)
    late = items[len(items) * 3 // 4]
    def fault(name, edit):
        ls = list(keep)
        ls[late] = edit(ls[late])
        p = f"{tmp}/cut-{name}.json"; open(p, "w").write("\n".join(ls)); return p
    large = [f"{tmp}/cut.json"]
    open(large[0], "w").write(cut)
    large += [
        fault("quantity", lambda l: l.replace('"cpu": "2"', '"cpu": "-2"')),
        fault("duplicate", lambda l: l.replace('"nodeName"', '"nodeName": "node-1", "nodeName"')),
        fault("string", lambda l: '        "not an object",'),
        fault("control", lambda l: l.replace('/default-container": "main"', '/default-container": "ma\x01in"')),
        fault("escape", lambda l: l.replace('/default-container": "main"', '/default-container": "ma\\qin"')),
        fault("comma", lambda l: l.replace('"Burstable"}},', '"Burstable"}},,')),
        fault("unclosed", lambda l: l.replace('"Burstable"}},', '"Burstable"},')),
    ]
    p = f"{tmp}/cut-trailing.json"; open(p, "w").write(cut.replace("}}\n    ],", "}},\n    ],")); large.append(p)
    p = f"{tmp}/cut-truncated.json"; open(p, "w").write(cut[: len(cut) * 4 // 5]); large.append(p)
    p = f"{tmp}/cut-notalist.json"; open(p, "w").write(cut.replace('"kind": "List"', '"kind": "Lost"')); large.append(p)
    for f in large:
        runs.append(["place", f, f"{snap}/fits.yaml"])
    runs.append(["explain", "-o", "json", large[0], f"{snap}/short.yaml"])
diff = 0
for args in runs:
    a = subprocess.run([base] + args, capture_output=True, env={**os.environ, "NO_COLOR": "1"})
    b = subprocess.run([new] + args, capture_output=True, env={**os.environ, "NO_COLOR": "1"})
    if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
        diff += 1
        print("DIFF", args, a.returncode, b.returncode)
        if diff < 5:
            print(a.stdout[:300], a.stderr[:300]); print(b.stdout[:300], b.stderr[:300])
print(f"{len(runs)} comparisons, {diff} differ")
sys.exit(1 if diff else 0)
