//! Names the lab has retired and the names that replaced them (`csrc/renames.toml`, which
//! `scripts/sass-diff.py` reads too). Stored results keep the names they were written with;
//! reading maps them here, so one variant is one name across a rename.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The table's text, built into every binary: results written before a rename are read the same
/// wherever the binary runs.
const TABLE: &str = include_str!("../../../csrc/renames.toml");

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    families: BTreeMap<String, String>,
    variants: BTreeMap<String, String>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| toml::from_str(TABLE).expect("csrc/renames.toml parses (tests/renames.rs)"))
}

/// The current name of the family stored as `name` (itself where it was never renamed).
pub fn family(name: &str) -> &str {
    table().families.get(name).map_or(name, String::as_str)
}

/// The current name of the variant stored as `name` (itself where it was never renamed, a
/// baseline's name included).
pub fn variant(name: &str) -> &str {
    table().variants.get(name).map_or(name, String::as_str)
}

/// The rung of the variant that replaced `old` (its name's NN, `<family>_NN_<technique>`); None
/// where `old` was never renamed.
pub fn rung(old: &str) -> Option<u32> {
    let new = table().variants.get(old)?;
    new.split('_').find(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit())).and_then(|p| p.parse().ok())
}

/// The old name a variant had, where it was renamed.
pub fn former(name: &str) -> Option<&'static str> {
    table().variants.iter().find(|(_, new)| *new == name).map(|(old, _)| old.as_str())
}

/// Every (old, new) pair of variant names.
pub fn variants() -> impl Iterator<Item = (&'static str, &'static str)> {
    table().variants.iter().map(|(o, n)| (o.as_str(), n.as_str()))
}

/// Every (old, new) pair of family names.
pub fn families() -> impl Iterator<Item = (&'static str, &'static str)> {
    table().families.iter().map(|(o, n)| (o.as_str(), n.as_str()))
}

/// A note's text with old names written as the current ones: every variant's, and the family's
/// where it is the note's first word ("tensor 4096x4096x4096: cuBLASLt best …"; "tensor" elsewhere
/// is a plain word).
pub fn note(text: &str) -> String {
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    for (i, piece) in text.split_inclusive(|c: char| !word_char(c)).enumerate() {
        let split = piece.char_indices().last().filter(|(_, c)| !word_char(*c)).map_or(piece.len(), |(at, _)| at);
        let (word, sep) = piece.split_at(split);
        out.push_str(variant(if i == 0 { family(word) } else { word }));
        out.push_str(sep);
    }
    out
}
