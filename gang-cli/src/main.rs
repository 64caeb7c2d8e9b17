//! `gang`: the command. All of it is in the library ([`gang_cli::run`]).

use std::io::IsTerminal;

/// mimalloc, not the system allocator: reading a large snapshot makes millions of small
/// allocations (100,000 pods' names, lists and strings), which it makes faster.
#[global_allocator]
static ALLOCATOR: Mi = Mi;

/// `mimalloc::MiMalloc`, but asking `mi_malloc` (not `mi_malloc_aligned`, 5 % of the
/// instructions of reading a large snapshot) when the alignment is one every block
/// already has, as the standard library's `System` does: at most 16 and at most the size.
struct Mi;

/// The alignment every mimalloc block of at least this size has (`MI_MAX_ALIGN_SIZE`).
const MIN_ALIGN: usize = 16;

fn plain(layout: std::alloc::Layout) -> bool {
    layout.align() <= MIN_ALIGN && layout.align() <= layout.size()
}

// SAFETY: every call forwards to mimalloc as `mimalloc::MiMalloc` does; `mi_malloc`,
// `mi_zalloc` and `mi_realloc` return blocks aligned to `MIN_ALIGN` (or to their size
// when smaller), so they are used only for layouts that ask no more.
unsafe impl std::alloc::GlobalAlloc for Mi {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if plain(layout) {
            // SAFETY: as the impl says.
            unsafe { libmimalloc_sys::mi_malloc(layout.size()).cast() }
        } else {
            // SAFETY: forwarded as is.
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if plain(layout) {
            // SAFETY: as the impl says.
            unsafe { libmimalloc_sys::mi_zalloc(layout.size()).cast() }
        } else {
            // SAFETY: forwarded as is.
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded as is (mimalloc frees any of its blocks by pointer).
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MIN_ALIGN && layout.align() <= new_size {
            // SAFETY: as the impl says; the new size keeps the alignment plain.
            unsafe { libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast() }
        } else {
            // SAFETY: forwarded as is.
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

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
