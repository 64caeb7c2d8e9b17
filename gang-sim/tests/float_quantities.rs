//! A float where a quantity goes (issue 25 item 8, gang-sim's path): `gang.sim` hands
//! a Python dict over as `json.dumps` writes it, so `{"cpu": 0.5}` arrives as the JSON
//! number `0.5`, `2.0` as `2.0`, `0.00001` as `1e-05`. Each is read by the rules of
//! the quantity string it stands for, in a trace's requests and in a cluster's
//! capacity alike: the same run, or the same refusal.

use gang_sim::run_json;

/// A run of one job asking `request` CPUs per member (3 members) on two nodes of
/// `capacity` CPUs each: its jobs and summary as JSON, or the error's field and message.
fn run(request: &str, capacity: &str) -> Result<serde_json::Value, (String, String)> {
    let doc = format!(
        r#"{{"cluster": {{"inline": {{"topology": {{"levels": []}}, "nodes": [
              {{"name": "a", "capacity": {{"cpu": {capacity}}}}},
              {{"name": "b", "capacity": {{"cpu": {capacity}}}}}]}}}},
            "trace": {{"inline": [{{"id": "j", "submit": 0, "duration": 60, "members": 3,
                                   "requests": {{"cpu": {request}}}}}]}},
            "config": {{"readiness": {{"init_time": 0}}, "gpu_resource": "cpu"}}}}"#
    );
    match run_json(&doc) {
        Ok(out) => {
            let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
            v.as_object_mut().unwrap().remove("timeline");
            Ok(v)
        }
        Err(e) => Err((e.field().to_owned(), e.to_string())),
    }
}

#[test]
fn python_floats_are_read_as_the_quantity_strings_they_stand_for() {
    // (as json.dumps writes a Python float, the same amount as a quantity string)
    for (request, as_text) in [
        ("0.5", r#""500m""#),
        ("2.0", r#""2""#),
        ("1.5", r#""1500m""#),
        ("0.25", r#""250m""#),
        ("1e-05", r#""1e-05""#),
        ("1e+21", r#""1e+21""#),
    ] {
        // Read and run; refused either way: 1e+21 CPUs (past what a quantity holds)
        // and 1e-05 (finer than one milli-CPU), naming the field.
        let r = run(request, "1e+12");
        let refused = ["1e+21", "1e-05"].contains(&request);
        assert_eq!(r.is_ok(), !refused, "{request}: {r:?}");
        if let Err((field, _)) = r {
            assert_eq!(field, "roles[worker].requests.cpu");
        }
        for capacity in [r#""1""#, "1.0", r#""4""#, "4.0", "1e+12", "1e+22"] {
            assert_eq!(
                run(request, capacity),
                run(as_text, capacity),
                "request {request} vs {as_text} on capacity {capacity}"
            );
        }
    }
    // The numbers are read, not refused (so the equalities above compare runs): three
    // members of 0.5 CPU fit two 1-CPU nodes (2 + 1), of 2.0 two 4-CPU nodes, and
    // never two 1-CPU nodes.
    let out = run("0.5", "1.0").unwrap();
    assert_eq!(out["jobs"][0]["state"], "completed", "{out}");
    let out = run("2.0", "4.0").unwrap();
    assert_eq!(out["jobs"][0]["state"], "completed", "{out}");
    let out = run("2.0", "1.0").unwrap();
    assert_eq!(out["jobs"][0]["state"], "never_fits", "{out}");
}

#[test]
fn a_negative_float_quantity_is_refused_as_the_string_is() {
    let num = run("-0.5", "1.0").unwrap_err();
    let text = run(r#""-0.5""#, "1.0").unwrap_err();
    assert_eq!(num, text);
    assert!(num.1.contains("-0.5"), "{num:?}");
}

/// Reading a line from its text (so that numbers keep their text) names the trace's
/// line, not serde_json's position in it.
#[test]
fn messages_of_a_line_read_from_text_have_no_position() {
    let e = gang_sim::Trace::from_jsonl(
        "\n\n{\"id\": \"a\", \"submit\": 0, \"duration\": 1, \"members\": 1.5}",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "trace line 3, field members: 1.5 is not a whole number"
    );
}

/// A number in a trace's requests is quoted back as written, in JSON Lines and in a CSV
/// cell holding JSON alike (it went through a float: `1000000000000000000000`).
#[test]
fn a_quantity_number_is_quoted_as_written_in_jsonl_and_csv() {
    let jsonl = |q: &str| {
        let line = format!(
            r#"{{"id": "a", "submit": 0, "duration": 1, "members": 1, "requests": {{"cpu": {q}}}}}"#
        );
        gang_sim::Trace::from_jsonl(&line).unwrap().jobs[0].roles[0].clone()
    };
    let csv = |q: &str| {
        let text =
            format!("id,submit,duration,members,requests\na,0,1,1,\"{{\"\"cpu\"\": {q}}}\"\n");
        gang_sim::Trace::from_csv(&text).unwrap().jobs[0].roles[0].clone()
    };
    for (num, text) in [
        ("1e+21", r#""1e+21""#),
        ("2.0", r#""2.0""#),
        ("0.5", r#""0.5""#),
    ] {
        assert_eq!(jsonl(num), jsonl(text), "{num}");
        assert_eq!(csv(num), jsonl(text), "{num}");
    }
}
