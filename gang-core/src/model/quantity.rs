//! Kubernetes resource quantities as exact integer milli-units.

use std::fmt;

use crate::model::Error;

/// An exact, non-negative resource amount in milli-units.
///
/// Follows Kubernetes quantity syntax: a decimal number (`"8"`, `"1.5"`) with an optional
/// decimal SI suffix (`n u m k M G T P E`), binary SI suffix (`Ki Mi Gi Ti Pi Ei`) or
/// decimal exponent (`"1e3"`). `cpu: "1.5"` is 1500 milli-units, `memory: "16Gi"` is
/// 16 × 2³⁰ × 1000 milli-units. Arithmetic is integer only; there are no floats.
///
/// Amounts finer than one milli-unit (`"1n"`) and amounts above `u64::MAX` milli-units
/// are rejected rather than rounded, so capacity is never over- or under-stated.
///
/// ```
/// use gang_core::Quantity;
/// assert_eq!(Quantity::parse("1.5")?.millis(), 1500);
/// assert_eq!(Quantity::parse("16Gi")?, Quantity::from_units(16 << 30));
/// assert_eq!(Quantity::parse("500m")?.to_string(), "500m");
/// assert_eq!(Quantity::from_millis(1500).to_string(), "1500m");
/// assert_eq!(Quantity::from_units(8).to_string(), "8");
/// assert_eq!(Quantity::parse("0")?, Quantity::ZERO);
/// assert!(Quantity::parse("-1").is_err());
/// assert!(Quantity::parse("12 GB").is_err());
/// assert!(Quantity::parse("1n").is_err()); // finer than 1m: rejected, not rounded
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Quantity(u64);

impl Quantity {
    /// Zero. See [`Quantity`].
    pub const ZERO: Quantity = Quantity(0);

    /// A quantity of `millis` milli-units. See [`Quantity`].
    pub const fn from_millis(millis: u64) -> Self {
        Quantity(millis)
    }

    /// A quantity of whole units, saturating at the largest representable amount.
    /// See [`Quantity`].
    pub const fn from_units(units: u64) -> Self {
        Quantity(units.saturating_mul(1000))
    }

    /// The amount in milli-units. See [`Quantity`].
    pub const fn millis(self) -> u64 {
        self.0
    }

    /// Parses a Kubernetes quantity string.
    ///
    /// ```
    /// use gang_core::{ErrorKind, Quantity};
    /// assert_eq!(Quantity::parse("1Ki")?.millis(), 1_024_000);
    /// assert_eq!(Quantity::parse("2e3")?, Quantity::from_units(2000));
    /// let err = Quantity::parse("1.5x").unwrap_err();
    /// assert_eq!((err.kind(), err.field()), (ErrorKind::InvalidQuantity, "quantity"));
    /// # Ok::<(), gang_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidQuantity`] (field `quantity`) when the text is not a quantity, is
    /// negative, is finer than one milli-unit, or overflows.
    pub fn parse(text: &str) -> Result<Self, Error> {
        parse_millis(text)
            .map(Quantity)
            .map_err(|reason| Error::invalid_quantity("quantity", text, reason))
    }
}

impl Quantity {
    /// The amount as people read it for `resource`, the way kubectl shows it: binary
    /// units for bytes-like resources (`memory`, `ephemeral-storage`, `hugepages-*`:
    /// `16Gi`, `1.5Ti`, rounded to a tenth), else as [`Display`](fmt::Display) writes it
    /// (`500m`, `8`). Every face words amounts with this one function.
    ///
    /// ```
    /// use gang_core::Quantity;
    /// let q = |s| Quantity::parse(s).unwrap();
    /// assert_eq!(q("8Gi").human("memory"), "8Gi");
    /// assert_eq!(q("8589934592").human("memory"), "8Gi");
    /// assert_eq!(q("1536Mi").human("memory"), "1.5Gi");
    /// assert_eq!(q("1Ti").human("hugepages-1Gi"), "1Ti");
    /// assert_eq!(q("100").human("ephemeral-storage"), "100");
    /// assert_eq!(q("500m").human("memory"), "500m"); // not whole bytes: as written
    /// assert_eq!(q("500m").human("cpu"), "500m");
    /// assert_eq!(q("8").human("nvidia.com/gpu"), "8");
    /// ```
    pub fn human(self, resource: &str) -> String {
        let bytes = resource == "memory"
            || resource == "ephemeral-storage"
            || resource.starts_with("hugepages-");
        if !bytes || self.0 % 1000 != 0 {
            return self.to_string();
        }
        let b = u128::from(self.0 / 1000);
        for (unit, shift) in [
            ("Ei", 60),
            ("Pi", 50),
            ("Ti", 40),
            ("Gi", 30),
            ("Mi", 20),
            ("Ki", 10),
        ] {
            let u = 1u128 << shift;
            if b < u {
                continue;
            }
            if b % u == 0 {
                return format!("{}{unit}", b / u);
            }
            let tenths = (b * 10 + u / 2) / u;
            return if tenths % 10 == 0 {
                format!("{}{unit}", tenths / 10)
            } else {
                format!("{}.{}{unit}", tenths / 10, tenths % 10)
            };
        }
        b.to_string()
    }
}

impl fmt::Display for Quantity {
    /// Whole units print as a plain integer, anything else in milli-units (`"1500m"`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 % 1000 == 0 {
            write!(f, "{}", self.0 / 1000)
        } else {
            write!(f, "{}m", self.0)
        }
    }
}

/// An amount as a caller wrote it: an integer number of units, a quantity string, or an
/// already parsed [`Quantity`]. Converted (and validated) when the inventory or request
/// is built, so the error can name the field it came from.
///
/// Builder methods such as [`NodeSpec::capacity`](crate::NodeSpec::capacity) and
/// [`Role::request`](crate::Role::request) take `impl Into<QuantitySpec>`, so integers, strings
/// and quantities all work:
///
/// ```
/// use gang_core::Quantity;
/// use gang_core::request::QuantitySpec;
/// assert_eq!(QuantitySpec::from(8), QuantitySpec::Units(8));
/// assert_eq!(QuantitySpec::from("500m"), QuantitySpec::Text("500m".into()));
/// assert_eq!(QuantitySpec::from(Quantity::from_units(2)), QuantitySpec::Exact(Quantity::from_units(2)));
/// assert_eq!(QuantitySpec::from("16Gi").resolve("capacity.memory")?.millis(), (16u64 << 30) * 1000);
/// // Beyond u64 milli-units is an error, never a clamped amount.
/// assert!(QuantitySpec::from(u64::MAX).resolve("capacity.cpu").is_err());
/// let err = QuantitySpec::from(-1).resolve("nodes[a1].capacity.nvidia.com/gpu").unwrap_err();
/// assert_eq!(err.field(), "nodes[a1].capacity.nvidia.com/gpu");
/// # Ok::<(), gang_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum QuantitySpec {
    /// Whole units, possibly negative (rejected at build time).
    Units(i64),
    /// Kubernetes quantity text.
    Text(String),
    /// Already exact.
    Exact(Quantity),
}

impl QuantitySpec {
    /// Resolves to a [`Quantity`], naming `field` in any error. See [`QuantitySpec`].
    ///
    /// # Errors
    /// [`Error::InvalidQuantity`] naming `field` when the amount is negative, malformed or
    /// overflows.
    pub fn resolve(&self, field: &str) -> Result<Quantity, Error> {
        self.resolve_at(|| field.to_owned())
    }

    /// [`QuantitySpec::resolve`] with the field named only if there is an error.
    pub(crate) fn resolve_at(&self, field: impl FnOnce() -> String) -> Result<Quantity, Error> {
        match self {
            QuantitySpec::Units(n) if *n < 0 => Err(Error::invalid_quantity(
                &field(),
                &n.to_string(),
                "negative quantity",
            )),
            QuantitySpec::Units(n) => (*n as u64)
                .checked_mul(1000)
                .map(Quantity)
                .ok_or_else(|| Error::invalid_quantity(&field(), &n.to_string(), "overflows")),
            QuantitySpec::Text(t) => parse_millis(t)
                .map(Quantity)
                .map_err(|reason| Error::invalid_quantity(&field(), t, reason)),
            QuantitySpec::Exact(q) => Ok(*q),
        }
    }
}

macro_rules! quantity_spec_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for QuantitySpec {
            /// Whole units; a number beyond `i64` keeps its digits as text, so it is
            /// reported as overflowing rather than clamped.
            fn from(v: $t) -> Self {
                match i64::try_from(v) {
                    Ok(n) => QuantitySpec::Units(n),
                    Err(_) => QuantitySpec::Text(v.to_string()),
                }
            }
        }
    )*};
}
quantity_spec_from_int!(i32, i64, u32, u64, usize);

impl From<&str> for QuantitySpec {
    fn from(v: &str) -> Self {
        QuantitySpec::Text(v.to_owned())
    }
}
impl From<String> for QuantitySpec {
    fn from(v: String) -> Self {
        QuantitySpec::Text(v)
    }
}
impl From<Quantity> for QuantitySpec {
    fn from(v: Quantity) -> Self {
        QuantitySpec::Exact(v)
    }
}

/// Parses `text` into milli-units, or says why not.
fn parse_millis(text: &str) -> Result<u64, &'static str> {
    let s = text.trim();
    if s.is_empty() {
        return Err("empty quantity");
    }
    let s = match s.as_bytes()[0] {
        b'+' => &s[1..],
        b'-' => {
            // "-0" is still negative syntax; Kubernetes would accept it, but no capacity or
            // request is ever negative, so the sign alone is a mistake worth reporting.
            return Err("negative quantity");
        }
        _ => s,
    };
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut mantissa: u128 = 0;
    let mut frac_digits: u32 = 0;
    let mut digits = 0usize;
    let mut seen_dot = false;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_digit() {
            digits += 1;
            if digits > 30 {
                return Err("too many digits");
            }
            mantissa = mantissa * 10 + u128::from(c - b'0');
            if seen_dot {
                frac_digits += 1;
            }
        } else if c == b'.' && !seen_dot {
            seen_dot = true;
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return Err("not a number");
    }
    let suffix = &s[i..];
    // value = mantissa / 10^frac_digits * num / 10^den_exp, in units; times 1000 for milli.
    let (num, den_exp): (u128, u32) = match suffix {
        "" => (1, 0),
        "n" => (1, 9),
        "u" => (1, 6),
        "m" => (1, 3),
        "k" => (1_000, 0),
        "M" => (1_000_000, 0),
        "G" => (1_000_000_000, 0),
        "T" => (1_000_000_000_000, 0),
        "P" => (1_000_000_000_000_000, 0),
        "E" => (1_000_000_000_000_000_000, 0),
        "Ki" => (1 << 10, 0),
        "Mi" => (1 << 20, 0),
        "Gi" => (1 << 30, 0),
        "Ti" => (1 << 40, 0),
        "Pi" => (1 << 50, 0),
        "Ei" => (1 << 60, 0),
        _ => parse_exponent(suffix)?,
    };
    let numerator = mantissa
        .checked_mul(num)
        .and_then(|v| v.checked_mul(1000))
        .ok_or("overflows")?;
    let den = 10u128
        .checked_pow(frac_digits + den_exp)
        .ok_or("too many fractional digits")?;
    if numerator % den != 0 {
        return Err("finer than one milli-unit");
    }
    u64::try_from(numerator / den).map_err(|_| "overflows")
}

/// `e3`, `E-2`, `e+6`: returns (multiplier, divisor exponent).
fn parse_exponent(suffix: &str) -> Result<(u128, u32), &'static str> {
    let rest = suffix
        .strip_prefix('e')
        .or_else(|| suffix.strip_prefix('E'))
        .ok_or("unknown suffix")?;
    let (neg, digits) = match rest.as_bytes().first() {
        Some(b'-') => (true, &rest[1..]),
        Some(b'+') => (false, &rest[1..]),
        _ => (false, rest),
    };
    if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("unknown suffix");
    }
    let e: u32 = digits.parse().map_err(|_| "unknown suffix")?;
    if e > 30 {
        return Err(if neg {
            "finer than one milli-unit"
        } else {
            "overflows"
        });
    }
    if neg {
        Ok((1, e))
    } else {
        Ok((10u128.pow(e), 0))
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::{Quantity, QuantitySpec};
    use serde::de::{self, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::fmt;

    impl Serialize for Quantity {
        /// Whole units as a JSON integer, anything else as a string such as `"1500m"`.
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            if self.0 % 1000 == 0 {
                s.serialize_u64(self.0 / 1000)
            } else {
                s.serialize_str(&self.to_string())
            }
        }
    }

    impl<'de> Deserialize<'de> for Quantity {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let a = QuantitySpec::deserialize(d)?;
            a.resolve("quantity").map_err(de::Error::custom)
        }
    }

    impl Serialize for QuantitySpec {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self {
                QuantitySpec::Units(n) => s.serialize_i64(*n),
                QuantitySpec::Text(t) => s.serialize_str(t),
                QuantitySpec::Exact(q) => q.serialize(s),
            }
        }
    }

    impl<'de> Deserialize<'de> for QuantitySpec {
        /// Accepts a JSON integer, a JSON number with a fraction (its text as written,
        /// so `1.5` is exactly 1500m and `18446744073709551616` is quoted back as that,
        /// not through a float) or a quantity string.
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = QuantitySpec;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a quantity: an integer, a number or a string like \"16Gi\"")
                }
                fn visit_i64<E: de::Error>(self, v: i64) -> Result<QuantitySpec, E> {
                    Ok(QuantitySpec::Units(v))
                }
                fn visit_u64<E: de::Error>(self, v: u64) -> Result<QuantitySpec, E> {
                    match i64::try_from(v) {
                        Ok(v) => Ok(QuantitySpec::Units(v)),
                        Err(_) => Ok(QuantitySpec::Text(v.to_string())),
                    }
                }
                fn visit_f64<E: de::Error>(self, v: f64) -> Result<QuantitySpec, E> {
                    if !v.is_finite() {
                        return Err(E::custom("quantity is not a finite number"));
                    }
                    // Checked when resolved, so the error names the field.
                    Ok(QuantitySpec::Text(format!("{v}")))
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<QuantitySpec, E> {
                    Ok(QuantitySpec::Text(v.to_owned()))
                }
                /// serde_json (with `arbitrary_precision`) hands a number over as a
                /// one-entry map holding its text.
                fn visit_map<A: de::MapAccess<'de>>(
                    self,
                    map: A,
                ) -> Result<QuantitySpec, A::Error> {
                    let n = serde_json::Number::deserialize(
                        de::value::MapAccessDeserializer::new(map),
                    )?;
                    let text = n.to_string();
                    Ok(match text.parse::<i64>() {
                        Ok(units) => QuantitySpec::Units(units),
                        Err(_) => QuantitySpec::Text(text),
                    })
                }
            }
            d.deserialize_any(V)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> u64 {
        Quantity::parse(s).unwrap().millis()
    }

    #[test]
    fn kubernetes_forms() {
        assert_eq!(m("8"), 8000);
        assert_eq!(m("+8"), 8000);
        assert_eq!(m("1.5"), 1500);
        assert_eq!(m("0.5"), 500);
        assert_eq!(m(".5"), 500);
        assert_eq!(m("500m"), 500);
        assert_eq!(m("1k"), 1_000_000);
        assert_eq!(m("1Ki"), 1_024_000);
        assert_eq!(m("16Gi"), 16 * (1 << 30) * 1000);
        assert_eq!(m("1Ti"), (1u64 << 40) * 1000);
        assert_eq!(m("2M"), 2_000_000_000);
        assert_eq!(m("1e3"), 1_000_000);
        assert_eq!(m("1E3"), 1_000_000);
        assert_eq!(m("15e-1"), 1500);
        assert_eq!(m("1000000u"), 1000);
        assert_eq!(m("1000000000n"), 1000);
        assert_eq!(m("0"), 0);
        assert_eq!(m("1.25Ki"), 1280 * 1000);
    }

    #[test]
    fn rejects_bad_text() {
        for bad in [
            "", " ", "-1", "-0", "abc", "1.2.3", "1x", "1 Gi", "Gi", "1e", "1e-", "1ee3", "1KiB",
            "1.", "..", "1m5",
        ] {
            let r = Quantity::parse(bad);
            // "1." is accepted by Kubernetes; we accept it too (digits before the dot).
            if bad == "1." {
                assert_eq!(r.unwrap().millis(), 1000);
                continue;
            }
            assert!(r.is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn rejects_sub_milli_and_overflow() {
        let e = Quantity::parse("1n").unwrap_err();
        assert!(e.to_string().contains("finer than one milli-unit"), "{e}");
        assert!(Quantity::parse("0.0001").is_err());
        let e = Quantity::parse("100Ei").unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
        assert!(Quantity::parse("1e40").is_err());
        assert!(Quantity::parse("99999999999999999999999999999999999").is_err());
        // The largest value still fits.
        assert_eq!(m("18446744073709551615m"), u64::MAX);
        assert!(Quantity::parse("18446744073709551616m").is_err());
    }

    #[test]
    fn amounts_resolve_with_field() {
        assert_eq!(
            QuantitySpec::from(8).resolve("f").unwrap(),
            Quantity::from_units(8)
        );
        let e = QuantitySpec::from(-2)
            .resolve("nodes[a].capacity.cpu")
            .unwrap_err();
        assert!(e.to_string().contains("nodes[a].capacity.cpu"), "{e}");
        assert!(e.to_string().contains("-2"), "{e}");
        let e = QuantitySpec::from("lots").resolve("x.y").unwrap_err();
        assert!(e.to_string().contains("\"lots\""), "{e}");
        assert!(QuantitySpec::from(i64::MAX).resolve("f").is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in ["8", "1500m", "0", "1", "250m"] {
            let q = Quantity::parse(s).unwrap();
            assert_eq!(q.to_string(), s);
            assert_eq!(Quantity::parse(&q.to_string()).unwrap(), q);
        }
    }
}
