//! `gang`: the command. All of it is in the library ([`gang_cli::run`]).

use std::io::IsTerminal;

/// mimalloc, not the system allocator: reading a large snapshot makes millions of small
/// allocations (100,000 pods' names, lists and strings), which it makes faster.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let mut stdin = stdin.lock();
    let mut stdout = stdout.lock();
    let mut stderr = stderr.lock();
    let is_terminal = std::io::stdout().is_terminal();
    let mut env = gang_cli::Env::new(&mut stdin, &mut stdout, &mut stderr);
    env.stdout_is_terminal = is_terminal;
    env.no_color = std::env::var("NO_COLOR").ok();
    env.leak = true;
    if let Some(v) = std::env::var_os("GANG_MAX_INPUT_BYTES") {
        match v.to_str().and_then(|v| v.trim().parse::<u64>().ok()) {
            Some(n) if n > 0 => env.max_input_bytes = n,
            _ => {
                eprintln!(
                    "gang: error: GANG_MAX_INPUT_BYTES={}: not a positive number of bytes",
                    v.to_string_lossy().chars().take(40).collect::<String>()
                );
                std::process::exit(gang_cli::Exit::Invalid.code());
            }
        }
    }
    let code = gang_cli::run(std::env::args_os(), &mut env);
    drop(env);
    std::process::exit(code);
}
