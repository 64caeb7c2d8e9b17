//! The README's console examples, run from the repository root: each ```console block
//! is `$ gang ARGS…` followed by exactly what it prints.

mod common;

#[test]
fn readme_console_blocks_are_what_gang_prints() {
    let readme = std::fs::read_to_string(common::crate_dir().join("README.md")).unwrap();
    let root = common::crate_dir().join("..");
    let mut blocks = 0;
    let mut rest = readme.as_str();
    while let Some(start) = rest.find("```console\n") {
        let body = &rest[start + "```console\n".len()..];
        let end = body.find("```\n").expect("closed block");
        let block = &body[..end];
        rest = &body[end..];
        let (cmd, expected) = block.split_once('\n').unwrap();
        let args: Vec<&str> = cmd
            .strip_prefix("$ gang ")
            .expect("$ gang …")
            .split(' ')
            .collect();
        let mut c = common::command(&args);
        c.current_dir(&root);
        let r = common::output(c);
        assert_eq!(
            r.stdout, expected,
            "README block `{cmd}` differs from what gang prints"
        );
        blocks += 1;
    }
    assert!(blocks >= 4, "{blocks} console blocks");
}

#[test]
fn readme_lists_the_exit_codes_of_help() {
    let readme = std::fs::read_to_string(common::crate_dir().join("README.md")).unwrap();
    assert!(readme.contains(gang_cli::EXIT_CODES));
}
