//! The C ABI's argument conversion: sequences of `gang-ffi` calls (nodes, builders,
//! inventories from JSON, roles, gangs, placement, live changes) whose arguments are
//! arbitrary: strings that are NULL, empty, invalid UTF-8 or words the model knows;
//! enumeration values out of range; quantities as text or milli-units; handles that are
//! NULL or of another type.
//!
//! Checked on every call: no `GANG_INTERNAL_ERROR` (a panic caught at the boundary) or
//! `GANG_UNKNOWN_ERROR`; a NULL or wrong-type handle, a NULL required string or invalid
//! UTF-8 is never `GANG_OK`; a failed call writes no output, and its error object (when
//! asked for) has the same code and names a field; a successful one writes its outputs.
//! Every handle is freed at the end, so LeakSanitizer reports anything the library
//! leaks. Freed handles are not passed (a use after free is reported by AddressSanitizer
//! before the library could detect it).

#![no_main]

use std::ffi::{c_char, CString};
use std::ptr;

use arbitrary::Arbitrary;
use gang_ffi::*;
use libfuzzer_sys::fuzz_target;

/// Words the model gives meaning to, so calls get past argument checks often.
const WORDS: [&str; 24] = [
    "a1",
    "b1",
    "rack",
    "block",
    "kubernetes.io/hostname",
    "gpu",
    "nvidia.com/gpu",
    "cpu",
    "memory",
    "pods",
    "8",
    "1",
    "0",
    "500m",
    "1.5",
    "1Ti",
    "-1",
    "1e3",
    "x",
    "",
    "dedicated",
    "a",
    "r0",
    "18446744073709551616",
];

/// A string argument.
#[derive(Arbitrary, Debug)]
enum Text {
    Word(u8),
    Null,
    /// Cut at the first NUL; may be invalid UTF-8.
    Bytes(Vec<u8>),
}

/// A handle argument: one made earlier of the expected type, NULL, or one of another
/// type.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum H {
    Live(u8),
    Null,
    Other(u8),
}

#[derive(Arbitrary, Debug)]
enum Call {
    NodeNew(Text),
    NodeLabel(H, Text, Text),
    NodeCapacity(H, Text, Text),
    NodeCapacityMillis(H, Text, u64),
    NodeUsed(H, Text, Text),
    NodeTaint(H, Text, Text, u8),
    NodeSchedulable(H, bool),
    BuilderNew(Vec<Text>),
    BuilderAddNode(H, H),
    BuilderBuild(H),
    InventoryFromJson(Vec<u8>),
    RoleNew(Text, u32),
    RoleRequest(H, Text, Text),
    RoleSelector(H, Text, Text),
    RoleExpression(H, Text, u8, Vec<Text>),
    RoleToleration(H, Text, u8, Text, u8),
    RoleMinCount(H, u32),
    GangNew(Text),
    GangAddRole(H, H),
    GangRequired(H, Text),
    GangPreferred(H, Text),
    GangSlice(H, Text, u32),
    GangPolicy(H, u8),
    GangFromJson(Vec<u8>),
    Place(H, H),
    SetCapacity(H, Text, Text, Text),
    SetLabels(H, Text, Vec<(Text, Text)>),
}

/// A converted string argument: the C pointer, and whether it is acceptable at all
/// (not NULL, valid UTF-8).
struct CText {
    owned: Option<CString>,
    valid: bool,
}

impl CText {
    fn new(t: &Text) -> Self {
        match t {
            Text::Null => CText {
                owned: None,
                valid: false,
            },
            Text::Word(i) => CText {
                owned: Some(CString::new(WORDS[usize::from(*i) % WORDS.len()]).unwrap()),
                valid: true,
            },
            Text::Bytes(b) => {
                let cut = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                let valid = std::str::from_utf8(&b[..cut]).is_ok();
                CText {
                    owned: Some(CString::new(&b[..cut]).unwrap()),
                    valid,
                }
            }
        }
    }
    fn ptr(&self) -> *const c_char {
        self.owned.as_ref().map_or(ptr::null(), |c| c.as_ptr())
    }
}

/// Handles made so far, by type.
#[derive(Default)]
struct Handles {
    nodes: Vec<*mut gang_node>,
    builders: Vec<*mut gang_inventory_builder>,
    inventories: Vec<*mut gang_inventory>,
    roles: Vec<*mut gang_role>,
    gangs: Vec<*mut gang_gang>,
}

impl Handles {
    /// Every live handle of a type other than `not`, as untyped pointers.
    fn others(&self, not: usize) -> Vec<*mut u8> {
        let lists: [Vec<*mut u8>; 5] = [
            self.nodes.iter().map(|p| p.cast()).collect(),
            self.builders.iter().map(|p| p.cast()).collect(),
            self.inventories.iter().map(|p| p.cast()).collect(),
            self.roles.iter().map(|p| p.cast()).collect(),
            self.gangs.iter().map(|p| p.cast()).collect(),
        ];
        lists
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i != not)
            .flat_map(|(_, l)| l)
            .collect()
    }

    /// Resolves a handle argument of list `which` (0 nodes … 4 gangs); the flag says
    /// whether it is a live handle of the right type.
    fn pick<T>(&self, h: H, which: usize, list: &[*mut T]) -> (*mut T, bool) {
        match h {
            H::Live(i) if !list.is_empty() => (list[usize::from(i) % list.len()], true),
            H::Live(_) | H::Null => (ptr::null_mut(), false),
            H::Other(i) => {
                let o = self.others(which);
                if o.is_empty() {
                    (ptr::null_mut(), false)
                } else {
                    (o[usize::from(i) % o.len()].cast(), false)
                }
            }
        }
    }
}

/// An enumeration argument: mostly 0..=5 (valid and invalid values of every
/// enumeration), sometimes near `u32::MAX`.
fn enumeration(x: u8) -> u32 {
    if x >= 248 {
        u32::MAX - u32::from(x - 248)
    } else {
        u32::from(x % 6)
    }
}

/// The result of a call whose arguments were acceptable (`ok_args`) or not.
fn check(r: gang_result, ok_args: bool, what: &str) {
    assert!(
        r != gang_result::GANG_INTERNAL_ERROR && r != gang_result::GANG_UNKNOWN_ERROR,
        "{what}: {r:?}"
    );
    if !ok_args {
        assert!(r != gang_result::GANG_OK, "{what}: accepted a bad argument");
    }
}

/// Checks and frees the error object of a call that returned `r`.
unsafe fn check_error(r: gang_result, err: *mut gang_error, what: &str) {
    if r == gang_result::GANG_OK {
        assert!(err.is_null(), "{what}: an error object on success");
        return;
    }
    assert!(!err.is_null(), "{what}: {r:?} without an error object");
    let mut code = gang_result::GANG_OK;
    assert_eq!(gang_error_code(err, &mut code), gang_result::GANG_OK);
    assert_eq!(code, r, "{what}: the error object's code");
    let mut field = gang_str {
        data: ptr::null(),
        len: 0,
    };
    assert_eq!(gang_error_field(err, &mut field), gang_result::GANG_OK);
    let mut message = gang_str {
        data: ptr::null(),
        len: 0,
    };
    assert_eq!(gang_error_message(err, &mut message), gang_result::GANG_OK);
    let text = std::slice::from_raw_parts(message.data.cast::<u8>(), message.len);
    let text = std::str::from_utf8(text).expect("UTF-8 message");
    assert!(
        field.len > 0,
        "{what}: {r:?} names no field: {text}"
    );
    gang_error_free(err);
}

unsafe fn run(calls: &[Call]) {
    let mut h = Handles::default();
    for call in calls {
        match call {
            Call::NodeNew(name) => {
                let name = CText::new(name);
                let mut out = ptr::null_mut();
                let r = gang_node_new(name.ptr(), &mut out);
                check(r, name.valid, "gang_node_new");
                assert_eq!(r == gang_result::GANG_OK, !out.is_null());
                if !out.is_null() {
                    h.nodes.push(out);
                }
            }
            Call::NodeLabel(n, k, v)
            | Call::NodeCapacity(n, k, v)
            | Call::NodeUsed(n, k, v)
            | Call::NodeTaint(n, k, v, _) => {
                let (node, live) = h.pick(*n, 0, &h.nodes);
                let (k, v) = (CText::new(k), CText::new(v));
                let effect_ok = match call {
                    Call::NodeTaint(_, _, _, e) => (1..=3).contains(&enumeration(*e)),
                    _ => true,
                };
                let ok = live && k.valid && v.valid && effect_ok;
                let r = match call {
                    Call::NodeLabel(..) => gang_node_add_label(node, k.ptr(), v.ptr()),
                    Call::NodeCapacity(..) => gang_node_set_capacity(node, k.ptr(), v.ptr()),
                    Call::NodeUsed(..) => gang_node_set_used(node, k.ptr(), v.ptr()),
                    Call::NodeTaint(_, _, _, e) => {
                        gang_node_add_taint(node, k.ptr(), v.ptr(), enumeration(*e))
                    }
                    _ => unreachable!(),
                };
                check(r, ok, "gang_node_*");
            }
            Call::NodeCapacityMillis(n, res, m) => {
                let (node, live) = h.pick(*n, 0, &h.nodes);
                let res = CText::new(res);
                let r = gang_node_set_capacity_millis(node, res.ptr(), *m);
                check(r, live && res.valid, "gang_node_set_capacity_millis");
            }
            Call::NodeSchedulable(n, s) => {
                let (node, live) = h.pick(*n, 0, &h.nodes);
                check(
                    gang_node_set_schedulable(node, *s),
                    live,
                    "gang_node_set_schedulable",
                );
            }
            Call::BuilderNew(levels) => {
                let levels: Vec<CText> = levels.iter().take(8).map(CText::new).collect();
                let ptrs: Vec<*const c_char> = levels.iter().map(CText::ptr).collect();
                let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
                let r = gang_inventory_builder_new(ptrs.as_ptr(), ptrs.len(), &mut out, &mut err);
                check(
                    r,
                    levels.iter().all(|l| l.valid),
                    "gang_inventory_builder_new",
                );
                check_error(r, err, "gang_inventory_builder_new");
                assert_eq!(r == gang_result::GANG_OK, !out.is_null());
                if !out.is_null() {
                    h.builders.push(out);
                }
            }
            Call::BuilderAddNode(b, n) => {
                let (builder, live_b) = h.pick(*b, 1, &h.builders);
                let (node, live_n) = h.pick(*n, 0, &h.nodes);
                let r = gang_inventory_builder_add_node(builder, node);
                check(r, live_b && live_n, "gang_inventory_builder_add_node");
            }
            Call::BuilderBuild(b) => {
                let (builder, live) = h.pick(*b, 1, &h.builders);
                let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
                let r = gang_inventory_builder_build(builder, &mut out, &mut err);
                check(r, live, "gang_inventory_builder_build");
                check_error(r, err, "gang_inventory_builder_build");
                assert_eq!(r == gang_result::GANG_OK, !out.is_null());
                if !out.is_null() {
                    h.inventories.push(out);
                }
            }
            Call::InventoryFromJson(bytes) | Call::GangFromJson(bytes) => {
                let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
                let p = bytes.as_ptr().cast::<c_char>();
                if matches!(call, Call::InventoryFromJson(_)) {
                    let r = gang_inventory_from_json(p, bytes.len(), &mut out, &mut err);
                    check(r, true, "gang_inventory_from_json");
                    check_error(r, err, "gang_inventory_from_json");
                    if !out.is_null() {
                        h.inventories.push(out);
                    }
                } else {
                    let mut g = ptr::null_mut();
                    let r = gang_gang_from_json(p, bytes.len(), &mut g, &mut err);
                    check(r, true, "gang_gang_from_json");
                    check_error(r, err, "gang_gang_from_json");
                    if !g.is_null() {
                        h.gangs.push(g);
                    }
                }
            }
            Call::RoleNew(name, count) => {
                let name = CText::new(name);
                let mut out = ptr::null_mut();
                let r = gang_role_new(name.ptr(), *count, &mut out);
                check(r, name.valid, "gang_role_new");
                if !out.is_null() {
                    h.roles.push(out);
                }
            }
            Call::RoleRequest(ro, k, v) | Call::RoleSelector(ro, k, v) => {
                let (role, live) = h.pick(*ro, 3, &h.roles);
                let (k, v) = (CText::new(k), CText::new(v));
                let r = if matches!(call, Call::RoleRequest(..)) {
                    gang_role_set_request(role, k.ptr(), v.ptr())
                } else {
                    gang_role_add_selector(role, k.ptr(), v.ptr())
                };
                check(r, live && k.valid && v.valid, "gang_role_*");
            }
            Call::RoleExpression(ro, key, op, values) => {
                let (role, live) = h.pick(*ro, 3, &h.roles);
                let key = CText::new(key);
                let values: Vec<CText> = values.iter().take(4).map(CText::new).collect();
                let ptrs: Vec<*const c_char> = values.iter().map(CText::ptr).collect();
                let op = enumeration(*op);
                let r =
                    gang_role_add_match_expression(role, key.ptr(), op, ptrs.as_ptr(), ptrs.len());
                let ok =
                    live && key.valid && values.iter().all(|v| v.valid) && (1..=4).contains(&op);
                check(r, ok, "gang_role_add_match_expression");
            }
            Call::RoleToleration(ro, key, op, value, effect) => {
                let (role, live) = h.pick(*ro, 3, &h.roles);
                let (key, value) = (CText::new(key), CText::new(value));
                let (op, effect) = (enumeration(*op), enumeration(*effect));
                let r = gang_role_add_toleration(role, key.ptr(), op, value.ptr(), effect);
                let ok = live && key.valid && value.valid && (1..=2).contains(&op) && effect <= 3;
                check(r, ok, "gang_role_add_toleration");
            }
            Call::RoleMinCount(ro, m) => {
                let (role, live) = h.pick(*ro, 3, &h.roles);
                check(
                    gang_role_set_min_count(role, *m),
                    live,
                    "gang_role_set_min_count",
                );
            }
            Call::GangNew(name) => {
                let name = CText::new(name);
                let mut out = ptr::null_mut();
                let r = gang_gang_new(name.ptr(), &mut out);
                check(r, name.valid, "gang_gang_new");
                if !out.is_null() {
                    h.gangs.push(out);
                }
            }
            Call::GangAddRole(g, ro) => {
                let (gang, live_g) = h.pick(*g, 4, &h.gangs);
                let (role, live_r) = h.pick(*ro, 3, &h.roles);
                check(
                    gang_gang_add_role(gang, role),
                    live_g && live_r,
                    "gang_gang_add_role",
                );
            }
            Call::GangRequired(g, level) | Call::GangPreferred(g, level) => {
                let (gang, live) = h.pick(*g, 4, &h.gangs);
                let level = CText::new(level);
                let r = if matches!(call, Call::GangRequired(..)) {
                    gang_gang_set_required(gang, level.ptr())
                } else {
                    gang_gang_set_preferred(gang, level.ptr())
                };
                // NULL removes the level.
                check(
                    r,
                    live && (level.valid || level.owned.is_none()),
                    "gang_gang_set_*",
                );
            }
            Call::GangSlice(g, level, size) => {
                let (gang, live) = h.pick(*g, 4, &h.gangs);
                let level = CText::new(level);
                check(
                    gang_gang_add_slice(gang, level.ptr(), *size),
                    live && level.valid,
                    "gang_gang_add_slice",
                );
            }
            Call::GangPolicy(g, p) => {
                let (gang, live) = h.pick(*g, 4, &h.gangs);
                let p = enumeration(*p);
                check(
                    gang_gang_set_policy(gang, p),
                    live && (1..=3).contains(&p),
                    "gang_gang_set_policy",
                );
            }
            Call::Place(i, g) => {
                let (inv, live_i) = h.pick(*i, 2, &h.inventories);
                let (gang, live_g) = h.pick(*g, 4, &h.gangs);
                let mut status = gang_status::GANG_STATUS_PLACED;
                let (mut p, mut d, mut err) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
                let r = gang_inventory_place(inv, gang, &mut status, &mut p, &mut d, &mut err);
                check(r, live_i && live_g, "gang_inventory_place");
                check_error(r, err, "gang_inventory_place");
                if r == gang_result::GANG_OK {
                    assert!(p.is_null() != d.is_null(), "a placement or a diagnosis");
                } else {
                    assert!(p.is_null() && d.is_null(), "outputs written on failure");
                }
                if !p.is_null() {
                    let mut json = gang_str {
                        data: ptr::null(),
                        len: 0,
                    };
                    assert_eq!(gang_placement_json(p, &mut json), gang_result::GANG_OK);
                    let b = std::slice::from_raw_parts(json.data.cast::<u8>(), json.len);
                    assert!(std::str::from_utf8(b).is_ok_and(|s| s.starts_with('{')));
                    gang_placement_free(p);
                }
                gang_diagnosis_free(d);
            }
            Call::SetCapacity(i, node, res, q) => {
                let (inv, live) = h.pick(*i, 2, &h.inventories);
                let (node, res, q) = (CText::new(node), CText::new(res), CText::new(q));
                let (mut change, mut err) = (ptr::null_mut(), ptr::null_mut());
                let r = gang_inventory_set_capacity(
                    inv,
                    node.ptr(),
                    res.ptr(),
                    q.ptr(),
                    &mut change,
                    &mut err,
                );
                check(
                    r,
                    live && node.valid && res.valid && q.valid,
                    "gang_inventory_set_capacity",
                );
                check_error(r, err, "gang_inventory_set_capacity");
                gang_change_free(change);
            }
            Call::SetLabels(i, node, labels) => {
                let (inv, live) = h.pick(*i, 2, &h.inventories);
                let node = CText::new(node);
                let labels: Vec<(CText, CText)> = labels
                    .iter()
                    .take(4)
                    .map(|(k, v)| (CText::new(k), CText::new(v)))
                    .collect();
                let keys: Vec<*const c_char> = labels.iter().map(|l| l.0.ptr()).collect();
                let values: Vec<*const c_char> = labels.iter().map(|l| l.1.ptr()).collect();
                let (mut change, mut err) = (ptr::null_mut(), ptr::null_mut());
                let r = gang_inventory_set_labels(
                    inv,
                    node.ptr(),
                    keys.as_ptr(),
                    values.as_ptr(),
                    labels.len(),
                    &mut change,
                    &mut err,
                );
                let ok = live && node.valid && labels.iter().all(|(k, v)| k.valid && v.valid);
                check(r, ok, "gang_inventory_set_labels");
                check_error(r, err, "gang_inventory_set_labels");
                gang_change_free(change);
            }
        }
    }
    for p in h.nodes {
        gang_node_free(p);
    }
    for p in h.builders {
        gang_inventory_builder_free(p);
    }
    for p in h.inventories {
        gang_inventory_free(p);
    }
    for p in h.roles {
        gang_role_free(p);
    }
    for p in h.gangs {
        gang_gang_free(p);
    }
}

fuzz_target!(|calls: Vec<Call>| {
    // SAFETY: every pointer passed is NULL, a live handle (of the expected type or
    // not: the library checks type tags), or a NUL-terminated string or buffer that
    // outlives the call; nothing freed is passed.
    unsafe { run(&calls) }
});
