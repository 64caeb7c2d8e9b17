//! Kubernetes name syntax: label keys and values, resource names.

/// Well-known label of the node level: naming it as a level means "one node".
///
/// It is always addressable as a level, whether or not the topology lists it (it may
/// only be listed last), and needs no label on the nodes.
///
/// ```
/// use gang_core::{Gang, HOSTNAME_LEVEL, Inventory, NodeSpec, Role, Topology};
/// let inv = Inventory::builder(Topology::new(["rack"])?)
///     .node(NodeSpec::new("a1").label("rack", "a").capacity("nvidia.com/gpu", 8))
///     .node(NodeSpec::new("a2").label("rack", "a").capacity("nvidia.com/gpu", 8))
///     .build()?;
/// let gang = |n| Gang::new("g").role(Role::new("w", n).request("nvidia.com/gpu", 1));
/// let p = inv.place(&gang(8).required(HOSTNAME_LEVEL))?.placement().cloned().unwrap();
/// assert_eq!(p.level(), Some(HOSTNAME_LEVEL));
/// assert_eq!(p.domain_path(), "a/a1");
/// // Nine members never fit on one 8-GPU node.
/// assert!(!inv.place(&gang(9).required(HOSTNAME_LEVEL))?.is_placed());
/// // The node level can be named in a topology, but only last.
/// assert!(Topology::new(["rack", HOSTNAME_LEVEL]).is_ok());
/// assert!(Topology::new([HOSTNAME_LEVEL, "rack"]).is_err());
/// # Ok::<(), gang_core::Error>(())
/// ```
pub const HOSTNAME_LEVEL: &str = "kubernetes.io/hostname";

fn is_name_segment(s: &str, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.')
}

fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && !s.is_empty()
        && s.split('.').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        })
}

/// A qualified name (`[prefix/]name`), as used for label keys, taint keys and resource
/// names. Returns why not, if not.
pub(crate) fn check_qualified_name(s: &str) -> Result<(), &'static str> {
    let (prefix, name) = match s.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix {
        if !is_dns_subdomain(p) {
            return Err("prefix must be a lowercase DNS subdomain");
        }
    }
    if !is_name_segment(name, 63) {
        return Err(
            "name must be 1-63 characters [A-Za-z0-9-_.], starting and ending alphanumeric",
        );
    }
    Ok(())
}

/// A label value: empty, or a name segment of at most 63 characters.
pub(crate) fn check_label_value(s: &str) -> Result<(), &'static str> {
    if s.is_empty() || is_name_segment(s, 63) {
        Ok(())
    } else {
        Err("label value must be empty or 1-63 characters [A-Za-z0-9-_.], starting and ending alphanumeric")
    }
}

/// A node name, with Kubernetes' rule for node names (an RFC 1123 DNS subdomain):
/// lowercase letters, digits, `-` and `.`, at most 253 characters, each dot-separated
/// part starting and ending with a letter or digit. So a name in a diagnosis is the name
/// `kubectl get nodes` shows.
pub(crate) fn check_node_name(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        Err("must not be empty")
    } else if s.len() > 253 {
        Err("longer than 253 characters")
    } else if !is_dns_subdomain(s) {
        Err("a node name is a DNS subdomain: lowercase letters, digits, '-' and '.', each part starting and ending alphanumeric")
    } else {
        Ok(())
    }
}

/// A gang or role name: non-empty, at most 253 bytes, and nothing that displays as
/// something else: no whitespace, control, bidirectional-override or zero-width
/// characters (other letters are allowed: these names are the user's own, not
/// Kubernetes objects).
pub(crate) fn check_object_name(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        Err("must not be empty")
    } else if s.len() > 253 {
        Err("longer than 253 bytes")
    } else if s.chars().any(|c| c.is_control() || c.is_whitespace()) {
        Err("contains whitespace or control characters")
    } else if s.chars().any(is_invisible) {
        Err("contains a bidirectional-override or zero-width character")
    } else {
        Ok(())
    }
}

/// Characters that change how text around them displays, or display as nothing.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' // zero-width space, joiners, LRM, RLM
        | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
        | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
        | '\u{2066}'..='\u{2069}' // bidi isolates
        | '\u{061C}' // Arabic letter mark
        | '\u{FEFF}' // zero-width no-break space
    )
}

/// The short form of a level key for prose: `topology.example.com/rack` → `rack`.
pub(crate) fn short_level(key: &str) -> &str {
    if key == HOSTNAME_LEVEL {
        return "node";
    }
    key.rsplit('/').next().unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for ok in [
            "rack",
            "topology.example.com/rack",
            "nvidia.com/gpu",
            "kubernetes.io/hostname",
            "cpu",
            "a_b.c-d",
        ] {
            assert!(check_qualified_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/rack",
            "Example.com/rack",
            "a/b/c",
            "-rack",
            "rack-",
            "ra ck",
            &"x".repeat(64),
        ] {
            assert!(check_qualified_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn label_values_and_object_names() {
        assert!(check_label_value("").is_ok());
        assert!(check_label_value("H200").is_ok());
        assert!(check_label_value("b1.r-2_x").is_ok());
        assert!(check_label_value("a b").is_err());
        assert!(check_label_value("-a").is_err());
        assert!(check_object_name("node-1").is_ok());
        assert!(check_object_name("Worker_1").is_ok());
        assert!(check_object_name("").is_err());
        assert!(check_object_name("a b").is_err());
        assert!(check_object_name("a\u{202E}b").is_err());
        assert!(check_object_name("a\u{200B}b").is_err());
        assert!(check_object_name("worker\u{FEFF}").is_err());
        for ok in ["a1", "node-1", "n1.rack-a.example.com", &"a".repeat(253)] {
            assert!(check_node_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "A1",
            "a_1",
            "-a",
            "a-",
            "a..b",
            ".a",
            "emoji-\u{1F680}",
            "a\u{202E}b",
            "a b",
            &"a".repeat(254),
        ] {
            assert!(check_node_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(short_level("topology.example.com/block"), "block");
        assert_eq!(short_level("rack"), "rack");
        assert_eq!(short_level(HOSTNAME_LEVEL), "node");
    }
}
