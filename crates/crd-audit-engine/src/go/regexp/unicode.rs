//! The Unicode tables behind `\p{Name}` (Go's `unicodeTable` in `src/regexp/syntax/parse.go`
//! over the tables of `src/unicode/tables.go`), answered from `regex-syntax`'s tables.

use regex_syntax::hir::{Class, ClassUnicode, HirKind};

use super::syntax::{MAX_RUNE, range_class};

/// Go 1.25+'s `canonicalName`: first letter upper case, the rest lower case, without `_`,
/// `-` and spaces.
pub(super) fn canonical_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '_' | '-' | ' ') {
            continue;
        }
        if out.is_empty() {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// General categories Go knows, with their (canonicalised) long aliases.
pub(super) const CATEGORIES: &[(&str, &[&str])] = &[
    ("C", &["Other"]),
    ("Cc", &["Control", "Cntrl"]),
    ("Cf", &["Format"]),
    ("Cn", &["Unassigned"]),
    ("Co", &["Privateuse"]),
    ("Cs", &["Surrogate"]),
    ("L", &["Letter"]),
    ("Lc", &["Casedletter"]),
    ("Ll", &["Lowercaseletter"]),
    ("Lm", &["Modifierletter"]),
    ("Lo", &["Otherletter"]),
    ("Lt", &["Titlecaseletter"]),
    ("Lu", &["Uppercaseletter"]),
    ("M", &["Mark", "Combiningmark"]),
    ("Mc", &["Spacingmark"]),
    ("Me", &["Enclosingmark"]),
    ("Mn", &["Nonspacingmark"]),
    ("N", &["Number"]),
    ("Nd", &["Decimalnumber", "Digit"]),
    ("Nl", &["Letternumber"]),
    ("No", &["Othernumber"]),
    ("P", &["Punctuation", "Punct"]),
    ("Pc", &["Connectorpunctuation"]),
    ("Pd", &["Dashpunctuation"]),
    ("Pe", &["Closepunctuation"]),
    ("Pf", &["Finalpunctuation"]),
    ("Pi", &["Initialpunctuation"]),
    ("Po", &["Otherpunctuation"]),
    ("Ps", &["Openpunctuation"]),
    ("S", &["Symbol"]),
    ("Sc", &["Currencysymbol"]),
    ("Sk", &["Modifiersymbol"]),
    ("Sm", &["Mathsymbol"]),
    ("So", &["Othersymbol"]),
    ("Z", &["Separator"]),
    ("Zl", &["Lineseparator"]),
    ("Zp", &["Paragraphseparator"]),
    ("Zs", &["Spaceseparator"]),
];

/// Scripts in Go's `unicode.Scripts` (Unicode 15.0).
pub(super) const SCRIPTS: &[&str] = &[
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

/// Looks up a `\p{...}` name the way Go does. Returns the positive class and whether Go's
/// table is inverted ("Assigned" is "not Cn").
pub(super) fn unicode_table(name: &str) -> Option<(ClassUnicode, bool)> {
    let canon = canonical_name(name);
    match canon.as_str() {
        "Any" => return Some((range_class(0, MAX_RUNE), false)),
        "Assigned" => return Some((property("gc=Cn")?, true)),
        "Ascii" => return Some((range_class(0, 0x7F), false)),
        _ => {}
    }
    if let Some((abbr, _)) = CATEGORIES.iter().find(|(abbr, _)| *abbr == canon) {
        return Some((property(&format!("gc={abbr}"))?, false));
    }
    if let Some(script) = SCRIPTS.iter().find(|s| canonical_name(s) == canon) {
        return Some((property(&format!("sc={script}"))?, false));
    }
    let (abbr, _) = CATEGORIES
        .iter()
        .find(|(_, aliases)| aliases.contains(&canon.as_str()))?;
    Some((property(&format!("gc={abbr}"))?, false))
}

/// A Unicode property class from `regex-syntax`'s tables.
pub(super) fn property(query: &str) -> Option<ClassUnicode> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&format!("\\p{{{query}}}"))
        .ok()?;
    match hir.into_kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class),
        _ => None,
    }
}
