//! Keys given twice in a JSON object: serde_json's `Value` keeps the last one silently
//! (`{"gpus": 1, "gpus": 2}` would mean 2), so traces and run documents are checked
//! for them first, and the repeated key is an error naming its path.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The first key given twice in `text`: its path as the other errors name fields
/// (`roles[0].requests.cpu`; a top-level key is its name) and the key itself. `None`
/// when every object's keys are distinct, and also when `text` is not JSON (the
/// caller's own parse reports that).
pub(crate) fn first_duplicate(text: &str) -> Option<(String, String)> {
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = Check {
        path: "",
        found: &found,
    }
    .deserialize(&mut de);
    found.into_inner()
}

/// Walks a value, remembering the first repeated key in `found` (and stopping there).
struct Check<'a> {
    path: &'a str,
    found: &'a RefCell<Option<(String, String)>>,
}

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let path = format!("{}[{i}]", self.path);
            let seed = Check {
                path: &path,
                found: self.found,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        // With serde_json's arbitrary_precision (gang-core turns it on), a number is
        // a map of one private key: it has no keys to repeat.
        while let Some(key) = map.next_key::<String>()? {
            if key.starts_with("$serde_json::private::") {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if !seen.insert(key.clone()) {
                *self.found.borrow_mut() = Some((path, key));
                return Err(de::Error::custom("duplicate key"));
            }
            map.next_value_seed(Check {
                path: &path,
                found: self.found,
            })?;
        }
        Ok(())
    }
}

/// A key or id as an error quotes it: at most 60 characters.
pub(crate) fn quoted(s: &str) -> String {
    if s.chars().count() <= 60 {
        format!("{s:?}")
    } else {
        let head: String = s.chars().take(57).collect();
        format!("{head:?}… ({} characters)", s.chars().count())
    }
}

#[cfg(test)]
mod tests {
    use super::first_duplicate;

    #[test]
    fn finds_the_first_repeated_key_with_its_path() {
        let d = first_duplicate;
        assert_eq!(d(r#"{"a": 1, "b": {"c": 2}}"#), None);
        assert_eq!(
            d(r#"{"id": "a", "gpus": 1, "gpus": 2}"#),
            Some(("gpus".into(), "gpus".into()))
        );
        assert_eq!(
            d(r#"{"roles": [{"name": "w"}, {"requests": {"cpu": 1, "cpu": 2.5}}]}"#),
            Some(("roles[1].requests.cpu".into(), "cpu".into()))
        );
        // The same key in two objects is not a repeat; numbers of any form are values.
        assert_eq!(
            d(r#"[{"a": 1e400}, {"a": 0.5}, {"a": 123456789012345678901234}]"#),
            None
        );
        // Not JSON: left to the caller's parse.
        assert_eq!(d(r#"{"a": 1, "b""#), None);
    }
}
