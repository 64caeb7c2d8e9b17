//! The trace importers under hostile rows (issue 25, items 4 and 12): times are range
//! checked (no `i64` wrap), counts must be whole, what cannot be read is refused naming
//! the row and column, and what was skipped or rounded is reported.

use gang_sim::import::{openb_nodes, openb_pods, parse_time, philly, sacct, MAX_SECONDS};

const SACCT: &str = "job_id,node_num,gpu_num,submit_time,duration\n";

fn sacct_err(row: &str) -> (usize, String, String) {
    match sacct(&format!("{SACCT}{row}\n")) {
        Err(gang_sim::SimError::Trace {
            line,
            field,
            message,
            ..
        }) => (line, field, message),
        other => panic!("{row}: expected a trace error, got {other:?}"),
    }
}

#[test]
fn sacct_times_are_range_checked() {
    let (line, field, msg) = sacct_err("a,1,1,0,1e300");
    assert_eq!((line, field.as_str()), (2, "duration"), "{msg}");
    for t in ["1e300", "-1e300", "999999999999999-01-01 00:00:00"] {
        let (_, field, msg) = sacct_err(&format!("a,1,1,{t},60"));
        assert_eq!(field, "submit_time", "{t}: {msg}");
        assert!(msg.contains("not a time"), "{msg}");
    }
    // The largest accepted: fine; one more: refused.
    assert!(sacct(&format!("{SACCT}a,1,1,0,{MAX_SECONDS}\n")).is_ok());
    assert_eq!(
        parse_time("9999-12-31 23:59:59").map(|t| t > 0.0),
        Some(true)
    );
    assert_eq!(parse_time("10000-01-01 00:00:00"), None);
}

#[test]
fn impossible_dates_are_not_times() {
    assert_eq!(parse_time("2020-02-31 00:00:00"), None);
    assert_eq!(parse_time("2021-02-29 00:00:00"), None);
    assert!(parse_time("2020-02-29 00:00:00").is_some());
    assert_eq!(parse_time("2020-04-31 00:00:00"), None);
    let (_, field, _) = sacct_err("a,1,1,2020-02-31 00:00:00,60");
    assert_eq!(field, "submit_time");
}

#[test]
fn counts_must_be_whole() {
    let (_, field, msg) = sacct_err("a,2.5,1,0,60");
    assert_eq!(field, "node_num", "{msg}");
    let (_, field, msg) = sacct_err("a,1e10,1,0,60");
    assert_eq!(field, "node_num", "{msg}");
    let (_, field, _) = sacct_err("a,1,0.5,0,60");
    assert_eq!(field, "gpu_num");
    let pods = "name,num_gpu,gpu_milli,creation_time,scheduled_time,deletion_time\n";
    let e = openb_pods(&format!("{pods}p,0.5,1000,0,0,60\n")).unwrap_err();
    assert_eq!(e.field(), "num_gpu", "{e}");
    let e = openb_pods(&format!("{pods}p,1,5000,0,0,60\n")).unwrap_err();
    assert_eq!(e.field(), "gpu_milli", "{e}");
    let e = openb_pods(&format!("{pods}p,1,500,0,0,1e300\n")).unwrap_err();
    assert_eq!(e.field(), "deletion_time", "{e}");
    let e = openb_nodes("sn,gpu\nn1,8.7\n", None).err().unwrap();
    assert_eq!(e.field(), "gpu", "{e}");
}

#[test]
fn philly_refuses_what_it_cannot_read() {
    let job = |attempt: &str| {
        format!(
            r#"[{{"jobid": "a", "vc": "v", "submitted_time": "2017-10-07 01:11:39",
                "attempts": [{attempt}]}}]"#
        )
    };
    let e = philly(&job(
        r#"{"start_time": "2017-10-07 01:12:09", "end_time": "1e300", "detail": []}"#,
    ))
    .unwrap_err();
    assert_eq!(e.field(), "attempts[].end_time", "{e}");
    let e = philly(&job(
        r#"{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 02:12:09", "detail": "oops"}"#,
    ))
    .unwrap_err();
    assert_eq!(e.field(), "attempts[].detail", "{e}");
    assert!(e.to_string().contains("oops"), "{e}");
}

#[test]
fn skipped_and_rounded_rows_are_reported_and_an_all_skipped_file_is_refused() {
    let out = sacct(&format!("{SACCT}a,4,30,0,60\nb,1,1,0,0\n")).unwrap();
    assert_eq!(out.trace.jobs.len(), 1);
    assert_eq!(out.skipped.len(), 1);
    assert_eq!(out.skipped[0].line, 3);
    assert_eq!(out.rounded.len(), 1);
    assert_eq!((out.rounded[0].line, out.rounded[0].id.as_str()), (2, "a"));
    assert!(
        out.rounded[0].reason.contains("gpu_num 30 over 4"),
        "{:?}",
        out.rounded
    );
    let e = sacct(&format!("{SACCT}a,1,1,0,0\nb,1,1,0,\n")).unwrap_err();
    assert!(
        e.to_string().contains("every row was skipped (2 rows"),
        "{e}"
    );
}

#[test]
fn long_values_are_cut_in_messages() {
    let long = "9".repeat(100_000) + "x";
    let (_, field, msg) = sacct_err(&format!("a,1,1,{long},60"));
    assert_eq!(field, "submit_time");
    assert!(msg.len() < 300, "{} bytes", msg.len());
}
