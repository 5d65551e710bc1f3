//! The headless pick file: a JSON array whose entries are, in any mix, `[x, y]` (a point),
//! `{"point": [x, y], "radius": r, "snap": "nearest" | "thin"}` (a hit within r pixels, by
//! the snapping rule) and
//! `{"rect": [x0, y0, x1, y1], "mode": "visible" | "all"}` (a half-open rectangle). A file
//! that is not a JSON array is refused; a malformed entry becomes an entry with an error, so
//! its record says what is wrong and the others still run.

use crate::ViewerError;
use picking_vk::{RectMode, Snap};
use serde_json::Value;
use std::path::Path;

/// One entry of the pick file.
#[derive(Clone, Debug, PartialEq)]
pub enum PickEntry {
    Point {
        x: i64,
        y: i64,
    },
    Radius {
        x: i64,
        y: i64,
        radius: i64,
        snap: Snap,
    },
    Rect {
        rect: [i64; 4],
        mode: RectMode,
    },
    /// Why the entry could not be read.
    Malformed(String),
}

/// A whole number: `8` or `8.0` (JSON writers differ), never `8.5`.
fn whole(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15).map(|f| f as i64))
}

fn integers<const N: usize>(v: &Value) -> Option<[i64; N]> {
    let list = v.as_array().filter(|a| a.len() == N)?;
    let mut out = [0; N];
    for (o, x) in out.iter_mut().zip(list) {
        *o = whole(x)?;
    }
    Some(out)
}

/// Reads one entry; anything else is `Malformed` with the reason.
pub fn parse_entry(v: &Value) -> PickEntry {
    if let Some([x, y]) = integers::<2>(v) {
        return PickEntry::Point { x, y };
    }
    let Some(object) = v.as_object() else {
        return PickEntry::Malformed(format!(
            "expected [x, y], {{\"point\": [x, y], \"radius\": r}} or {{\"rect\": [x0, y0, x1, y1], \"mode\": ...}}, got {}",
            echo(v)
        ));
    };
    // A key the entry's kind does not take (a typo such as "raduis", or "point" and "rect"
    // together) makes it malformed: read as a plain point, it would answer another question.
    let keys: Option<&[&str]> = match (object.contains_key("point"), object.contains_key("rect")) {
        (true, _) => Some(&["point", "radius", "snap"]),
        (false, true) => Some(&["rect", "mode"]),
        (false, false) => None,
    };
    if let Some((keys, key)) = keys.and_then(|keys| object.keys().find(|k| !keys.contains(&k.as_str())).map(|k| (keys, k))) {
        return PickEntry::Malformed(format!("an entry with \"{}\" takes only {keys:?}, not {}", keys[0], echo(&Value::String(key.clone()))));
    }
    if let Some(point) = object.get("point") {
        let Some([x, y]) = integers::<2>(point) else { return PickEntry::Malformed(format!("\"point\" must be [x, y] whole numbers, got {}", echo(point))) };
        let snap = match object.get("snap") {
            None => Snap::Nearest,
            Some(v) if v == "nearest" => Snap::Nearest,
            Some(v) if v == "thin" => Snap::Thin,
            Some(v) => return PickEntry::Malformed(format!("\"snap\" must be \"nearest\" or \"thin\", got {}", echo(v))),
        };
        return match object.get("radius").map(whole) {
            None if object.contains_key("snap") => PickEntry::Malformed("\"snap\" chooses among the hits of a \"radius\", and the entry has none".into()),
            None => PickEntry::Point { x, y },
            Some(Some(radius)) => PickEntry::Radius { x, y, radius, snap },
            Some(None) => PickEntry::Malformed(format!("\"radius\" must be a whole number, got {}", echo(&object["radius"]))),
        };
    }
    if let Some(rect) = object.get("rect") {
        let Some(rect) = integers::<4>(rect) else {
            return PickEntry::Malformed(format!("\"rect\" must be [x0, y0, x1, y1] whole numbers, got {}", echo(rect)));
        };
        let mode = match object.get("mode").map(|m| m.as_str()) {
            None | Some(Some("visible")) => RectMode::Visible,
            Some(Some("all")) => RectMode::All,
            Some(_) => return PickEntry::Malformed(format!("\"mode\" must be \"visible\" or \"all\", got {}", echo(&object["mode"]))),
        };
        return PickEntry::Rect { rect, mode };
    }
    PickEntry::Malformed(format!("an entry object needs \"point\" or \"rect\", got {}", echo(v)))
}

/// The largest pick file read, in bytes (about 5 million points; parsed, a byte of the file
/// takes up to 18 in memory): it may be a pipe or a device that never ends.
pub const MAX_PICK_FILE_BYTES: u64 = 64 << 20;

/// The most of a malformed entry its error record repeats, in bytes.
const MAX_ECHO_BYTES: usize = 200;

/// `v` as JSON text, cut to [`MAX_ECHO_BYTES`] at a character boundary (marked `…`).
fn echo(v: &Value) -> String {
    let text = v.to_string();
    if text.len() <= MAX_ECHO_BYTES {
        return text;
    }
    let cut = (0..=MAX_ECHO_BYTES).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    format!("{}…", &text[..cut])
}

/// Reads the pick file. An array of `[x, y]` pairs (the common case, possibly a million
/// long) is parsed straight into pairs; other files once as a JSON tree.
pub fn read_pick_file(path: &Path) -> Result<Vec<PickEntry>, ViewerError> {
    read_capped(path, MAX_PICK_FILE_BYTES)
}

fn read_capped(path: &Path, cap: u64) -> Result<Vec<PickEntry>, ViewerError> {
    let text = crate::capped_read::read_text(path, cap, "pick file")?;
    if let Ok(pairs) = serde_json::from_str::<Vec<(i64, i64)>>(&text) {
        return Ok(pairs.into_iter().map(|(x, y)| PickEntry::Point { x, y }).collect());
    }
    // Entries are split as text first, so one that is valid JSON but not a value this reader
    // holds (a number past f64, such as 1e400) gets its own error record.
    let not_json = |e: serde_json::Error| ViewerError::Input(format!("pick file {} is not JSON: {e}", path.display()));
    let Ok(list) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(&text) else {
        serde_json::from_str::<&serde_json::value::RawValue>(&text).map_err(not_json)?;
        return Err(ViewerError::Input(format!("pick file {}: expected a JSON array of entries", path.display())));
    };
    Ok(list
        .iter()
        .map(|raw| match serde_json::from_str::<Value>(raw.get()) {
            Ok(v) => match repeated_key(raw.get()) {
                Some(key) => PickEntry::Malformed(format!("an entry names {} twice", echo(&Value::String(key)))),
                None => parse_entry(&v),
            },
            Err(e) => PickEntry::Malformed(format!("an entry this reader cannot hold ({e}): {}", echo(&Value::String(raw.get().to_string())))),
        })
        .collect())
}

/// The first key an entry object names twice: JSON readers keep one of the two values, so
/// `{"point": [1, 2], "point": [3, 4]}` would quietly answer only one of its questions.
fn repeated_key(entry: &str) -> Option<String> {
    struct Repeated(Option<String>);
    impl<'de> serde::Deserialize<'de> for Repeated {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Keys;
            impl<'de> serde::de::Visitor<'de> for Keys {
                type Value = Repeated;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an entry")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Repeated, A::Error> {
                    let mut seen = std::collections::HashSet::new();
                    let mut repeated = None;
                    while let Some(key) = map.next_key::<String>()? {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        if !seen.insert(key.clone()) && repeated.is_none() {
                            repeated = Some(key);
                        }
                    }
                    Ok(Repeated(repeated))
                }
            }
            d.deserialize_map(Keys)
        }
    }
    if !entry.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Repeated>(entry).ok().and_then(|r| r.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_of_every_kind_and_their_faults() {
        assert_eq!(parse_entry(&json!([3, 4])), PickEntry::Point { x: 3, y: 4 });
        assert_eq!(parse_entry(&json!({"point": [3, 4], "radius": 5})), PickEntry::Radius { x: 3, y: 4, radius: 5, snap: Snap::Nearest });
        assert_eq!(parse_entry(&json!({"point": [3, 4], "radius": 5, "snap": "thin"})), PickEntry::Radius { x: 3, y: 4, radius: 5, snap: Snap::Thin });
        assert!(matches!(parse_entry(&json!({"point": [3, 4], "radius": 5, "snap": "fewest"})), PickEntry::Malformed(m) if m.contains("\"thin\"")));
        assert!(matches!(parse_entry(&json!({"point": [3, 4], "snap": "thin"})), PickEntry::Malformed(m) if m.contains("radius")));
        assert_eq!(parse_entry(&json!({"point": [3, 4]})), PickEntry::Point { x: 3, y: 4 });
        assert_eq!(parse_entry(&json!({"rect": [1, 2, 3, 4], "mode": "all"})), PickEntry::Rect { rect: [1, 2, 3, 4], mode: RectMode::All });
        assert_eq!(parse_entry(&json!({"rect": [1, 2, 3, 4]})), PickEntry::Rect { rect: [1, 2, 3, 4], mode: RectMode::Visible });
        // Whole numbers written as floats are whole numbers.
        assert_eq!(parse_entry(&json!({"point": [3.0, 4], "radius": 8.0})), PickEntry::Radius { x: 3, y: 4, radius: 8, snap: Snap::Nearest });
        assert_eq!(parse_entry(&json!([3.0, -4.0])), PickEntry::Point { x: 3, y: -4 });
        assert_eq!(parse_entry(&json!({"rect": [1.0, 2, 3, 4e0]})), PickEntry::Rect { rect: [1, 2, 3, 4], mode: RectMode::Visible });
        for bad in [
            json!([3]),
            json!("x"),
            json!({"point": [1.5, 2]}),
            json!({"point": [1, 2], "radius": 2.5}),
            json!([1e300, 2]),
            json!({"point": [1, 2], "radius": "4"}),
            json!({"rect": [1, 2, 3]}),
            json!({"rect": [0, 0, 1, 1], "mode": "some"}),
            json!({}),
            json!({"point": [1, 2], "raduis": 4}),
            json!({"point": [1, 2], "rect": [0, 0, 4, 4]}),
            json!({"rect": [0, 0, 4, 4], "radius": 2}),
            json!({"rect": [0, 0, 4, 4], "mode": "all", "extra": 1}),
        ] {
            assert!(matches!(parse_entry(&bad), PickEntry::Malformed(_)), "{bad}");
        }
    }

    #[test]
    fn a_malformed_entry_is_echoed_cut_and_an_endless_file_is_refused() {
        let huge = Value::Array(vec![json!(1e15); 100_000]);
        let PickEntry::Malformed(reason) = parse_entry(&huge) else { panic!("an array of 100,000 numbers is no point") };
        assert!(reason.len() < 400 && reason.ends_with('…'), "{} bytes", reason.len());
        // A device that never ends is read only up to the cap.
        let err = read_capped(Path::new("/dev/zero"), 1 << 16).map(|_| ()).unwrap_err();
        assert!(err.to_string().contains("larger than 65536 bytes"), "{err}");
    }

    #[test]
    fn an_entry_json_allows_but_f64_cannot_hold_is_one_error_record() {
        let path = std::env::temp_dir().join(format!("viewer-pick-file-{}.json", std::process::id()));
        std::fs::write(&path, "[[1, 2], [1e400, 0], {\"point\": [3, 4]}]").unwrap();
        let entries = read_pick_file(&path).unwrap();
        assert_eq!(entries[0], PickEntry::Point { x: 1, y: 2 });
        assert!(matches!(&entries[1], PickEntry::Malformed(m) if m.contains("1e400")), "{:?}", entries[1]);
        assert_eq!(entries[2], PickEntry::Point { x: 3, y: 4 });
        // A key named twice would keep one value: refused, the rest still read.
        std::fs::write(&path, r#"[{"point": [1, 2], "point": [3, 4]}, {"rect": [0, 0, 2, 2], "mode": "all", "mode": "visible"}, {"point": [5, 6]}]"#).unwrap();
        let entries = read_pick_file(&path).unwrap();
        assert!(matches!(&entries[0], PickEntry::Malformed(m) if m.contains("names \"point\" twice")), "{:?}", entries[0]);
        assert!(matches!(&entries[1], PickEntry::Malformed(m) if m.contains("names \"mode\" twice")), "{:?}", entries[1]);
        assert_eq!(entries[2], PickEntry::Point { x: 5, y: 6 });
        std::fs::write(&path, "{\"point\": [3, 4]}").unwrap();
        assert!(read_pick_file(&path).unwrap_err().to_string().contains("expected a JSON array"));
        std::fs::write(&path, "[[1, 2]").unwrap();
        assert!(read_pick_file(&path).unwrap_err().to_string().contains("not JSON"));
        std::fs::remove_file(&path).unwrap();
    }
}
