//! Nesting depth of YAML text, measured in one linear pass before the YAML parser sees
//! it: deeply flow-nested text (`[[[[…`) makes the parser slow before it reaches its
//! recursion limit (issue 25: 26 s at 200 KB), and Kubernetes objects are shallow.

/// The deepest flow nesting (`[` / `{`) allowed; a Kubernetes object written in flow
/// style stays far below it.
pub(crate) const MAX_FLOW_DEPTH: usize = 64;

/// The 1-based line where flow nesting first goes deeper than `max`, or `None`. Quoted
/// scalars, comments and block scalars (`|`, `>`) are skipped; a quote opens a scalar
/// only where a scalar can start (`it's` in a plain scalar is not a quote).
pub(crate) fn too_deep(text: &str, max: usize) -> Option<usize> {
    let mut depth = 0usize;
    // (quote char) while inside a quoted scalar, which may span lines.
    let mut quote: Option<char> = None;
    // Indentation of the line that opened a block scalar: deeper lines belong to it.
    let mut block: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(b) = block {
            if line.trim().is_empty() || indent > b {
                continue;
            }
            block = None;
        }
        let mut prev = ' ';
        let mut chars = line.chars().peekable();
        let mut code = String::new();
        while let Some(c) = chars.next() {
            match quote {
                Some('"') => match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => quote = None,
                    _ => {}
                },
                Some(_) => {
                    if c == '\'' {
                        if chars.peek() == Some(&'\'') {
                            chars.next();
                        } else {
                            quote = None;
                        }
                    }
                }
                None => {
                    match c {
                        '#' if prev == ' ' || prev == '\t' => break,
                        '"' | '\''
                            if matches!(prev, ' ' | '\t' | ':' | '-' | '[' | '{' | ',' | '?') =>
                        {
                            quote = Some(c)
                        }
                        '[' | '{' => {
                            depth += 1;
                            if depth > max {
                                return Some(n + 1);
                            }
                        }
                        ']' | '}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    code.push(c);
                }
            }
            prev = c;
        }
        // A block scalar indicator ends the line: `key: |`, `- >-`, `|2+`.
        let t = code.trim_end();
        let ind = t.trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
        if quote.is_none() && (ind.ends_with('|') || ind.ends_with('>')) && {
            let before = ind[..ind.len() - 1].trim_end();
            before.is_empty() || before.ends_with(':') || before.ends_with('-')
        } {
            block = Some(indent);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_nesting_past_the_limit_is_found_with_its_line() {
        let deep = format!("a: 1\nb: {}{}\n", "[".repeat(65), "]".repeat(65));
        assert_eq!(too_deep(&deep, 64), Some(2));
        let ok = format!("b: {}{}\n", "[".repeat(64), "]".repeat(64));
        assert_eq!(too_deep(&ok, 64), None);
        // Siblings do not add up.
        let wide = "x: [".to_owned() + &"[1], ".repeat(1000) + "]\n";
        assert_eq!(too_deep(&wide, 3), None);
    }

    #[test]
    fn brackets_in_quotes_comments_and_block_scalars_do_not_count() {
        let text = "a: \"[[[[\"\nb: '{{{{ it''s'\nc: x # [[[[\nd: |\n  [[[[[\n  {{{{\ne: don't [x]\nf: >-\n  [[[\n";
        assert_eq!(too_deep(text, 2), None);
        // A quote inside a plain scalar does not open a string that hides brackets.
        let text = "a: it's\nb: [[[\n";
        assert_eq!(too_deep(text, 2), Some(2));
    }

    #[test]
    fn linear_on_large_input() {
        let big = "[".repeat(2_000_000);
        assert_eq!(too_deep(&big, 64), Some(1));
        let flat = "- {a: 1, b: [1, 2]}\n".repeat(100_000);
        assert_eq!(too_deep(&flat, 64), None);
    }
}
