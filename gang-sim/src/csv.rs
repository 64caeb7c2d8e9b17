//! A small RFC 4180 reader and writer: comma-separated, `"` quotes (doubled inside),
//! records on one or more lines (quoted fields may hold newlines and commas).

/// One record: its first line (1-based) and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub line: usize,
    pub fields: Vec<String>,
}

/// Splits `text` into records. Blank lines are skipped. A quote opened and never closed
/// is an error naming the line where the record began.
pub(crate) fn read(text: &str) -> Result<Vec<Record>, (usize, String)> {
    let mut out = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut line = 1usize;
    let mut start = 1usize;
    let mut quoted = false;
    let mut was_quoted = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    cur.push('"');
                }
                '"' => quoted = false,
                '\n' => {
                    line += 1;
                    cur.push('\n');
                }
                _ => cur.push(c),
            }
            continue;
        }
        match c {
            '"' if cur.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
                any = true;
            }
            '"' => return Err((line, "a quote inside an unquoted field".into())),
            ',' => {
                fields.push(std::mem::take(&mut cur));
                was_quoted = false;
                any = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                if any || !cur.is_empty() {
                    fields.push(std::mem::take(&mut cur));
                    out.push(Record {
                        line: start,
                        fields: std::mem::take(&mut fields),
                    });
                }
                was_quoted = false;
                any = false;
                line += 1;
                start = line;
            }
            _ => {
                if was_quoted {
                    return Err((line, "text after a closing quote".into()));
                }
                cur.push(c);
                any = true;
            }
        }
    }
    if quoted {
        return Err((start, "a quoted field is never closed".into()));
    }
    if any || !cur.is_empty() {
        fields.push(cur);
        out.push(Record {
            line: start,
            fields,
        });
    }
    Ok(out)
}

/// One field, quoted when it must be.
pub(crate) fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// One line of fields.
pub(crate) fn line<I: IntoIterator<Item = S>, S: AsRef<str>>(fields: I) -> String {
    let mut s = fields
        .into_iter()
        .map(|f| field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_commas_and_newlines() {
        let text = "a,b,c\n1,\"x,y\",\"say \"\"hi\"\"\"\n\n2,\"two\nlines\",\r\n";
        let r = read(text).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].fields, ["a", "b", "c"]);
        assert_eq!(
            (r[1].line, r[1].fields.clone()),
            (2, vec!["1".into(), "x,y".into(), "say \"hi\"".into()])
        );
        assert_eq!(
            (r[2].line, r[2].fields.clone()),
            (4, vec!["2".into(), "two\nlines".into(), String::new()])
        );
        assert_eq!(read("x\n\"open").unwrap_err().0, 2);
        assert!(read("a\"b\n").is_err());
        assert!(read("\"a\"b\n").is_err());
    }

    #[test]
    fn writes_what_it_reads() {
        let fields = ["plain", "with,comma", "with \"quote\"", "two\nlines", ""];
        let text = line(fields);
        assert_eq!(read(&text).unwrap()[0].fields, fields);
    }
}
