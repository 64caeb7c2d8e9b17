//! Text as a message shows it: a value of any length quoted in an error stays readable.

/// The longest word (a run without spaces) a message shows whole.
const LONGEST_WORD: usize = 300;

/// The longest text one part of a message (a field, a reason) shows whole.
const LONGEST_TEXT: usize = 1_000;

/// `text` as a message shows it: each word longer than 300 characters (a valid
/// Kubernetes name is at most 253; a 1 MB name, key, kind or quantity quoted in a
/// message is not) cut to its first 80, its length in bytes after it (a quoted word
/// keeps its closing quote, the punctuation after it stays), and a text of many words
/// cut after 1,000 characters. The error types of gang-kube and gang-sim, and the CLI,
/// pass their messages through it; their accessors keep the text whole.
///
/// ```
/// let long = format!("unknown policy {:?}", "x".repeat(1000));
/// let shown = gang_core::cut_words(&long);
/// assert!(shown.starts_with("unknown policy \"xxx") && shown.ends_with("…\" (1002 bytes)"));
/// assert_eq!(gang_core::cut_words("short words stay"), "short words stay");
/// ```
pub fn cut_words(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= LONGEST_WORD {
        return text.into();
    }
    let mut out = String::new();
    let mut changed = false;
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if word.chars().count() > LONGEST_WORD {
            changed = true;
            // `"xxx…xxx",` shows as `"xxx…" (N bytes),`: the quote closed, the
            // punctuation after the word kept.
            let quotes = ['"', '`', '\''];
            let mut tail: Vec<char> = word
                .chars()
                .rev()
                .take_while(|c| !c.is_alphanumeric())
                .take(4)
                .collect();
            tail.reverse();
            let tail: String = tail.into_iter().collect();
            out.extend(word.chars().take(80));
            out.push('…');
            if let Some(q) = word.chars().next().filter(|c| quotes.contains(c)) {
                out.push(q);
            }
            out.push_str(&format!(" ({} bytes)", word.len()));
            out.push_str(tail.trim_start_matches(quotes));
        } else {
            out.push_str(word);
        }
    }
    // Many words (a long value with spaces): the first LONGEST_TEXT characters.
    if out.chars().count() > LONGEST_TEXT {
        let head: String = out.chars().take(LONGEST_TEXT).collect();
        return format!("{head}… ({} bytes in all)", text.len()).into();
    }
    if changed {
        out.into()
    } else {
        text.into()
    }
}
