//! The one HTML table builder of gang-py: notebooks' `_repr_html_` of inventories,
//! placements, diagnoses and preemption plans, and `gang.sim`'s HTML report (through
//! the private `_html_table`), so every table is escaped and laid out the same way.

use pyo3::prelude::*;

/// Escapes text for HTML (element content and quoted attribute values).
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A table's optional parts: a caption, a `class` on the table, and a `class` per
/// column (on its heading and each of its cells; missing or empty: none).
#[derive(Default)]
pub struct Table<'a> {
    pub caption: Option<&'a str>,
    pub class: Option<&'a str>,
    pub column_classes: &'a [String],
}

impl Table<'_> {
    /// The table of `head` (column headings) and `rows` (cell texts), everything
    /// escaped.
    pub fn render(&self, head: &[&str], rows: &[Vec<String>]) -> String {
        let class = |c: Option<&str>| match c.filter(|c| !c.is_empty()) {
            Some(c) => format!(" class=\"{}\"", escape(c)),
            None => String::new(),
        };
        let col = |i: usize| class(self.column_classes.get(i).map(String::as_str));
        let mut s = format!("<table{}>", class(self.class));
        if let Some(c) = self.caption {
            s.push_str(&format!("<caption>{}</caption>", escape(c)));
        }
        s.push_str("<thead><tr>");
        for (i, h) in head.iter().enumerate() {
            s.push_str(&format!("<th{}>{}</th>", col(i), escape(h)));
        }
        s.push_str("</tr></thead><tbody>");
        for r in rows {
            s.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                s.push_str(&format!("<td{}>{}</td>", col(i), escape(c)));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table>");
        s
    }
}

/// A small HTML table with a caption: column names, rows.
pub fn table(caption: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    Table {
        caption: Some(caption),
        ..Table::default()
    }
    .render(head, rows)
}

/// An HTML table (the builder `_repr_html_` uses): `head` the column headings, `rows`
/// the cells as text (escaped here), `caption`, `css_class` on the table and
/// `column_classes` (one per column) optional.
///
/// Private: `gang.sim.report` builds its tables with it.
#[pyfunction]
#[pyo3(signature = (head, rows, *, caption = None, css_class = None, column_classes = None))]
pub fn _html_table(
    head: Vec<String>,
    rows: Vec<Vec<String>>,
    caption: Option<String>,
    css_class: Option<String>,
    column_classes: Option<Vec<String>>,
) -> String {
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let classes = column_classes.unwrap_or_default();
    Table {
        caption: caption.as_deref(),
        class: css_class.as_deref(),
        column_classes: &classes,
    }
    .render(&head, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_lays_out_classes() {
        let classes = ["text".to_owned(), String::new()];
        let t = Table {
            caption: None,
            class: Some("jobs"),
            column_classes: &classes,
        };
        assert_eq!(
            t.render(&["a<b", "n"], &[vec!["x & \"y\"".into(), "1".into()]]),
            "<table class=\"jobs\"><thead><tr><th class=\"text\">a&lt;b</th><th>n</th></tr></thead>\
             <tbody><tr><td class=\"text\">x &amp; &quot;y&quot;</td><td>1</td></tr></tbody></table>"
        );
        assert_eq!(
            table("c", &["h"], &[]),
            "<table><caption>c</caption><thead><tr><th>h</th></tr></thead><tbody></tbody></table>"
        );
    }
}
