//! Hostile input to the command line (issue 25): inputs are read with a cap and
//! checked as UTF-8 while they stream in; an answer that cannot be written is not
//! exit 0.

mod common;

use std::process::Stdio;

use common::{command, gang, gang_stdin, kube, output};

fn with_cap(args: &[&str], cap: &str) -> common::Run {
    let mut c = command(args);
    c.env("GANG_MAX_INPUT_BYTES", cap);
    output(c)
}

#[test]
fn an_endless_file_stops_at_the_cap() {
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    for args in [
        &["place", "/dev/zero"][..],
        &["topology", "/dev/zero"],
        &["simulate", "/dev/zero"],
    ] {
        let r = with_cap(args, "1000000");
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("/dev/zero"), "{}", r.stderr);
        assert!(r.stderr.contains("limit of 1000000 bytes"), "{}", r.stderr);
        assert!(r.stderr.contains("GANG_MAX_INPUT_BYTES"), "{}", r.stderr);
    }
}

#[test]
fn the_default_cap_is_overridable_and_applies_to_standard_input() {
    let text = std::fs::read_to_string(kube("training-workers.yaml")).unwrap();
    // The same file passes under the default cap and fails under a smaller one.
    let r = gang(&["place", &kube("racks.json"), &kube("training-workers.yaml")]);
    assert_ne!(r.code, 2, "{}", r.stderr);
    let r = with_cap(
        &["place", &kube("racks.json"), &kube("training-workers.yaml")],
        "100",
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let mut c = command(&["place", &kube("racks.json"), "-"]);
    c.env("GANG_MAX_INPUT_BYTES", "100");
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("limit of 100 bytes"));
    for bad in ["abc", "0", "-5"] {
        let r = with_cap(&["place", &kube("racks.json")], bad);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("GANG_MAX_INPUT_BYTES"), "{}", r.stderr);
    }
}

#[test]
fn bytes_that_are_not_utf8_are_refused_where_they_start() {
    let r = gang_stdin(&["place", "-"], "apiVersion: v1\nkind: Node\n\u{0}");
    assert_eq!(r.code, 2, "{}", r.stderr); // NUL is UTF-8: refused by the YAML reader
    let mut c = command(&["place", "-"]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(b"kind: Node\n\xff\xfe rest");
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not UTF-8") && err.contains("offset 11"),
        "{err}"
    );
    if std::path::Path::new("/dev/urandom").exists() {
        // Read to the first bad byte, not to the end (there is none).
        let r = gang(&["place", "/dev/urandom"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("not UTF-8"), "{}", r.stderr);
    }
}

/// `gang place -o json … > /dev/full` was exit 0 (issue 25, item 7).
#[test]
fn an_answer_that_cannot_be_written_is_exit_6() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let args = ["place", &kube("racks.json"), &kube("training-workers.yaml")];
    for format in ["json", "text"] {
        let mut c = command(&[&args[..], &["-o", format]].concat());
        c.stdout(full.try_clone().unwrap()).stderr(Stdio::piped());
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(6), "{format}: {err}");
        assert!(err.contains("cannot write the answer"), "{err}");
    }
    // An error document that cannot be written is exit 6 as well.
    let mut c = command(&["place", "nope.yaml", "-o", "json"]);
    c.stdout(full).stderr(Stdio::piped());
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(6));
}

/// `topology` drew a node whose name gang-core refuses; it is refused as `place`
/// refuses it, naming the file, the Node and the value (issue 25, item 9).
#[test]
fn topology_refuses_a_bad_node_name() {
    let dir = std::env::temp_dir().join(format!("gang-cli-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("nodes.yaml");
    std::fs::write(
        &f,
        "apiVersion: v1\nkind: Node\nmetadata: {name: ok-1}\nstatus: {allocatable: {cpu: \"8\"}}\n---\n\
         apiVersion: v1\nkind: Node\nmetadata: {name: Bad_Name}\nstatus: {allocatable: {cpu: \"8\"}}\n",
    )
    .unwrap();
    let r = gang(&["topology", f.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("Node/Bad_Name"), "{}", r.stderr);
    assert!(r.stderr.contains("metadata.name"), "{}", r.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Names with ESC, control or bidi characters were printed raw by `place` and on
/// standard error; text output escapes them, JSON stays exact (issue 25, item 11).
#[test]
fn terminal_control_characters_are_escaped_in_text_but_exact_in_json() {
    let dir = std::env::temp_dir().join(format!("gang-cli-esc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A file name with an escape sequence: the error names it, escaped.
    let bad = dir.join("nope\u{1b}]0;pwned\u{7}\u{202e}.yaml");
    let r = gang(&["place", bad.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        !r.stderr.contains('\u{1b}') && !r.stderr.contains('\u{202e}'),
        "{:?}",
        r.stderr
    );
    assert!(
        r.stderr.contains("\\u{1b}]0;pwned\\u{7}\\u{202e}"),
        "{}",
        r.stderr
    );
    // A PodGroup in a namespace with an escape sequence.
    let pg = dir.join("pg.yaml");
    std::fs::write(
        &pg,
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n\
         metadata: {name: \"train\\e[2J\", namespace: \"ml\\e]0;x\\a\"}\nspec: {minMember: 1}\n",
    )
    .unwrap();
    let args = ["place", &kube("racks.json"), pg.to_str().unwrap()];
    let r = gang(&args);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "{all:?}");
    assert!(all.contains("\\u{1b}"), "{all}");
    let r = gang(&[&args[..], &["-o", "json"]].concat());
    assert!(
        r.stdout.contains("\\u001b"),
        "JSON keeps the name exact: {}",
        r.stdout
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A name holding a colour code identical to one gang writes (`ESC [ 32 m`) passed
/// the escaping of coloured text, which kept gang's own codes by their spelling: the
/// input is now escaped before gang puts its colours in, so the name's code shows as
/// `\u{1b}[32m` while gang's own colours stay (issue 25, item 11).
#[test]
fn a_colour_code_in_a_name_is_escaped_even_when_gang_colours_the_text() {
    let dir = std::env::temp_dir().join(format!("gang-cli-colour-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pg = dir.join("pg.yaml");
    write_workers_in(&pg, "\"ml\\e[32mok\\e[0m\"");
    for sub in ["place", "explain"] {
        let args = [
            sub,
            "--color",
            "always",
            &kube("racks.json"),
            pg.to_str().unwrap(),
        ];
        let r = gang(&args);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains("ml\\u{1b}[32mok\\u{1b}[0m"), "{sub}: {all}");
        assert!(!all.contains("ml\u{1b}[32m"), "{sub}: {all:?}");
        // gang's own colours are still there, and only they are raw escapes.
        assert!(r.stdout.contains("\u{1b}[1m"), "{sub}: {:?}", r.stdout);
        let raw = r.stdout.matches('\u{1b}').count();
        let ours = ["[0m", "[1m", "[2m", "[31m", "[32m", "[33m"]
            .iter()
            .map(|c| r.stdout.matches(&format!("\u{1b}{c}")).count())
            .sum::<usize>();
        assert_eq!(raw, ours, "{sub}: {:?}", r.stdout);
        assert!(
            !all.contains('\u{fdd0}'),
            "{sub}: the mark never shows: {all:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Text whose own characters are gang's colour mark (a noncharacter) followed by a
/// colour code is shown uncoloured with every mark escaped: the input can neither
/// colour the text nor hide a part of itself.
#[test]
fn the_colour_mark_in_the_input_turns_colour_off_rather_than_being_taken_for_gang_s() {
    let dir = std::env::temp_dir().join(format!("gang-cli-mark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pg = dir.join("pg.yaml");
    write_workers_in(&pg, "\"ml\u{fdd0}[31m\"");
    let args = [
        "place",
        "--color",
        "always",
        &kube("racks.json"),
        pg.to_str().unwrap(),
    ];
    let r = gang(&args);
    assert!(!r.stdout.contains('\u{1b}'), "{:?}", r.stdout);
    assert!(!r.stdout.contains('\u{fdd0}'), "{:?}", r.stdout);
    assert!(r.stdout.contains("ml\\u{fdd0}[31m"), "{}", r.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The guide's PodGroup of four workers and their pods (`training-workers.yaml`), in
/// namespace `ns` (as YAML writes it) instead of `ml-team`.
fn write_workers_in(path: &std::path::Path, ns: &str) {
    let text = std::fs::read_to_string(kube("training-workers.yaml")).unwrap();
    assert!(text.contains("namespace: ml-team"));
    std::fs::write(
        path,
        text.replace("namespace: ml-team", &format!("namespace: {ns}")),
    )
    .unwrap();
}

/// `/dev/zero` stops at the cap and `/dev/urandom` at its first bad byte on every read
/// path of the CLI: `place`, `explain`, `preempt`, `topology`, `simulate`'s document,
/// and the cluster and trace files a `simulate` document names (capped by its own
/// `limits.max_input_bytes`) (issue 25, item 5).
#[test]
fn endless_devices_stop_on_every_read_path() {
    let (zero, random) = ("/dev/zero", "/dev/urandom");
    if !std::path::Path::new(zero).exists() || !std::path::Path::new(random).exists() {
        return;
    }
    for cmd in ["place", "explain", "preempt", "topology", "simulate"] {
        let r = with_cap(&[cmd, zero], "1000000");
        assert_eq!(r.code, 2, "{cmd} {zero}: {}", r.stderr);
        assert!(
            r.stderr.contains(zero) && r.stderr.contains("limit of 1000000 bytes"),
            "{cmd}: {}",
            r.stderr
        );
        let r = gang(&[cmd, random]);
        assert_eq!(r.code, 2, "{cmd} {random}: {}", r.stderr);
        assert!(
            r.stderr.contains(random) && r.stderr.contains("not UTF-8"),
            "{cmd}: {}",
            r.stderr
        );
    }
    let dir = std::env::temp_dir().join(format!("gang-cli-devices-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = r#"{"generate": {"racks": 1}}"#;
    let trace = r#"{"generate": {"jobs": 2}}"#;
    let limits = r#"{"limits": {"max_input_bytes": 1000000}}"#;
    for (what, doc) in [
        (
            "trace",
            format!(
                r#"{{"cluster": {cluster}, "trace": {{"file": {{"path": "DEV"}}}}, "config": {limits}}}"#
            ),
        ),
        (
            "cluster",
            format!(r#"{{"cluster": {{"file": "DEV"}}, "trace": {trace}, "config": {limits}}}"#),
        ),
    ] {
        for (dev, says) in [(zero, "limits.max_input_bytes"), (random, "not UTF-8")] {
            let f = dir.join(format!("{what}.json"));
            std::fs::write(&f, doc.replace("DEV", dev)).unwrap();
            let r = gang(&["simulate", f.to_str().unwrap()]);
            assert_eq!(r.code, 2, "{what} {dev}: {}", r.stderr);
            assert!(
                r.stderr.contains(dev) && r.stderr.contains(says),
                "{what} {dev}: {}",
                r.stderr
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file that is not a regular file (a device, a pipe) says nothing of its length: it
/// is streamed and checked as UTF-8 as it comes, so its first bad byte ends the read.
/// Before, such a file was read whole (up to the cap, 256 MiB of `/dev/urandom`)
/// before the check: here a pipe whose writer sends a bad byte and then waits (never
/// closing it) is refused at once instead of gang waiting for the rest (issue 25,
/// item 5). The pipe is closed after a minute whatever happens, so the test cannot hang.
#[test]
fn a_pipe_is_refused_at_its_first_bad_byte_not_at_its_end() {
    let dir = std::env::temp_dir().join(format!("gang-cli-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("nodes.yaml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return;
    }
    let path = fifo.to_str().unwrap().to_owned();
    let mut c = command(&["place", &path]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            let _ = w.write_all(b"kind: Node\n\xff rest");
            let _ = w.flush();
            // Keep the pipe open until gang has answered (or a minute has passed).
            let answered = rx.recv_timeout(std::time::Duration::from_secs(60)).is_ok();
            drop(w);
            answered
        })
    };
    let out = child.wait_with_output().unwrap();
    tx.send(()).ok();
    let answered_while_open = writer.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not UTF-8") && err.contains("offset 11"),
        "{err}"
    );
    assert!(
        answered_while_open,
        "gang read on to the end of the pipe instead of stopping at its bad byte"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the user gave is cut in a message when it is huge: a `--workload` argument, a
/// quantity, a simulation's policy (issue 25, item 9: "every refusal names … the value,
/// cut to a readable length").
#[test]
fn a_huge_argument_or_value_is_cut_in_the_message() {
    let x = "x".repeat(100_000);
    let workload = format!("podgroup/{x}");
    let r = gang(&[
        "place",
        &kube("racks.json"),
        &kube("training-workers.yaml"),
        "-w",
        &workload,
    ]);
    assert_eq!(r.code, 2, "{}", &r.stderr[..300.min(r.stderr.len())]);
    assert!(r.stderr.len() < 1500, "{} bytes", r.stderr.len());
    assert!(r.stderr.contains("bytes)"), "{}", r.stderr);
    let dir = std::env::temp_dir().join(format!("gang-cli-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let q = dir.join("q.yaml");
    std::fs::write(
        &q,
        format!("apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {{cpu: \"{}x\"}}}}\n", "9".repeat(100_000)),
    )
    .unwrap();
    let kind = dir.join("kind.yaml");
    std::fs::write(
        &kind,
        format!("apiVersion: v1\nkind: {x}\nmetadata: {{name: n1}}\n"),
    )
    .unwrap();
    let sim = dir.join("sim.json");
    std::fs::write(
        &sim,
        format!(
            r#"{{"cluster": {{"generate": {{"racks": 1}}}}, "trace": {{"inline": [{{"id": "a", "submit": 0, "duration": 60, "members": 1}}]}}, "config": {{"policy": "{x}"}}}}"#
        ),
    )
    .unwrap();
    for args in [
        vec!["topology", q.to_str().unwrap()],
        vec!["topology", kind.to_str().unwrap()],
        vec!["simulate", sim.to_str().unwrap()],
    ] {
        let r = gang(&args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.len() < 1500, "{args:?}: {} bytes", r.stderr.len());
        assert!(r.stderr.contains("bytes)"), "{args:?}: {}", r.stderr);
        let r = gang(&[&args[..], &["-o", "json"]].concat());
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let message = doc["message"].as_str().unwrap();
        assert!(message.len() < 1500, "{args:?}: {} bytes", message.len());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
