use super::*;

fn err(pattern: &str) -> String {
    match compile(pattern) {
        Ok(re) => panic!("{pattern:?} compiled to {:?}", re.translated()),
        Err(e) => e.0,
    }
}

fn matches(pattern: &str, s: &str) -> bool {
    compile(pattern)
        .unwrap_or_else(|e| panic!("{pattern:?}: {e}"))
        .is_match(s)
}

/// Every invalid-pattern message in the conformance corpus (API server output), plus the
/// examples of the brief.
#[test]
fn corpus_error_texts() {
    let cases: &[(&str, &str)] = &[
        ("(abc", "missing closing ): `(abc`"),
        ("[a-z", "missing closing ]: `[a-z`"),
        (
            "^(?=.*[0-9]).+$",
            "invalid or unsupported Perl syntax: `(?=`",
        ),
        (r"^(a)\1$", r"invalid escape sequence: `\1`"),
        ("a**", "invalid nested repetition operator: `**`"),
        ("^a{1001}$", "invalid repeat count: `{1001}`"),
        (
            r"\p{NoSuchClass}",
            r"invalid character class range: `\p{NoSuchClass}`",
        ),
        ("a++", "invalid nested repetition operator: `++`"),
        ("*a", "missing argument to repetition operator: `*`"),
        ("[unclosed", "missing closing ]: `[unclosed`"),
        ("(a", "missing closing ): `(a`"),
        ("a)", "unexpected ): `a)`"),
        ("**", "missing argument to repetition operator: `*`"),
        ("[z-a]", "invalid character class range: `z-a`"),
        ("a{1001}", "invalid repeat count: `{1001}`"),
        ("(?<", "invalid or unsupported Perl syntax: `(?<`"),
    ];
    for (pattern, want) in cases {
        assert_eq!(
            err(pattern),
            format!("error parsing regexp: {want}"),
            "{pattern}"
        );
    }
}

#[test]
fn more_go_error_texts() {
    let cases: &[(&str, &str)] = &[
        (r"\", "trailing backslash at end of expression: ``"),
        (r"a\", "trailing backslash at end of expression: ``"),
        (r"\8", r"invalid escape sequence: `\8`"),
        (r"\C", r"invalid escape sequence: `\C`"),
        (r"\Z", r"invalid escape sequence: `\Z`"),
        (r"\e", r"invalid escape sequence: `\e`"),
        (r"\é", r"invalid escape sequence: `\é`"),
        (r"\xZ1", r"invalid escape sequence: `\xZ1`"),
        (r"\xA", r"invalid escape sequence: `\xA`"),
        (r"\x", r"invalid escape sequence: `\x`"),
        (r"\x{", r"invalid escape sequence: `\x{`"),
        (r"\x{}", r"invalid escape sequence: `\x{}`"),
        (r"\x{12", r"invalid escape sequence: `\x{12`"),
        (r"\x{G}", r"invalid escape sequence: `\x{G`"),
        (r"\x{110000}", r"invalid escape sequence: `\x{110000`"),
        (r"[\b]", r"invalid escape sequence: `\b`"),
        (r"[\Q]", r"invalid escape sequence: `\Q`"),
        (r"[a-\d]", r"invalid escape sequence: `\d`"),
        ("[]", "missing closing ]: `[]`"),
        ("[^]", "missing closing ]: `[^]`"),
        ("x[a-", "missing closing ]: `[a-`"),
        ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
        ("[[:a]b:]]", "invalid character class range: `[:a]b:]`"),
        (r"\p", r"invalid character class range: `\p`"),
        (r"\pX", r"invalid character class range: `\pX`"),
        (r"\p{Greek", r"invalid character class range: `\p{Greek`"),
        (r"[\p{Foo}]", r"invalid character class range: `\p{Foo}`"),
        ("(?P<name", "invalid named capture: `(?P<name`"),
        ("(?P<n-m>x)", "invalid named capture: `(?P<n-m>`"),
        ("(?<>x)", "invalid named capture: `(?<>`"),
        ("(?P=name)", "invalid or unsupported Perl syntax: `(?P`"),
        ("(?!a)", "invalid or unsupported Perl syntax: `(?!`"),
        ("(?<=a)b", "invalid named capture: `(?<=a)b`"),
        ("(?<=a>)b", "invalid named capture: `(?<=a>`"),
        ("(?", "invalid or unsupported Perl syntax: `(?`"),
        ("(?i", "invalid or unsupported Perl syntax: `(?i`"),
        ("(?i-)", "invalid or unsupported Perl syntax: `(?i-)`"),
        ("(?-)", "invalid or unsupported Perl syntax: `(?-)`"),
        ("(?i--s)", "invalid or unsupported Perl syntax: `(?i--`"),
        ("(?x)", "invalid or unsupported Perl syntax: `(?x`"),
        ("a*?*", "invalid nested repetition operator: `*?*`"),
        ("a{2}{3}", "invalid nested repetition operator: `{2}{3}`"),
        ("a{2}*", "invalid nested repetition operator: `{2}*`"),
        ("a?+", "invalid nested repetition operator: `?+`"),
        ("(|*)", "missing argument to repetition operator: `*`"),
        ("a|+", "missing argument to repetition operator: `+`"),
        ("(*)", "missing argument to repetition operator: `*`"),
        ("{2}", "missing argument to repetition operator: `{2}`"),
        ("x{2,1}", "invalid repeat count: `{2,1}`"),
        ("x{0,1001}", "invalid repeat count: `{0,1001}`"),
        ("x{1001,}", "invalid repeat count: `{1001,}`"),
        ("x{99999999999}", "invalid repeat count: `{99999999999}`"),
        ("(a{10}){101}", "invalid repeat count: `{101}`"),
        ("((a{2}){2}){251}", "invalid repeat count: `{251}`"),
        ("(?:(?:a{10}){10}){11}", "invalid repeat count: `{11}`"),
        ("())", "unexpected ): `())`"),
        (")", "unexpected ): `)`"),
        ("((a)", "missing closing ): `((a)`"),
        ("(?i:a", "missing closing ): `(?i:a`"),
    ];
    for (pattern, want) in cases {
        assert_eq!(
            err(pattern),
            format!("error parsing regexp: {want}"),
            "{pattern}"
        );
    }
}

#[test]
fn size_and_depth_limits() {
    let deep = format!("{}a{}", "(".repeat(1001), ")".repeat(1001));
    assert_eq!(
        err(&deep),
        format!("error parsing regexp: expression nests too deeply: `{deep}`")
    );
    let ok = format!("{}a{}", "(".repeat(900), ")".repeat(900));
    assert!(matches(&ok, "xa"));
    // Non-capturing groups do not nest in Go's tree.
    let flat = format!("{}a{}", "(?:".repeat(3000), ")".repeat(3000));
    assert!(matches(&flat, "a"));
    let big = format!("(?:{}){{1000}}", "a".repeat(3400));
    assert_eq!(
        err(&big),
        format!("error parsing regexp: expression too large: `{big}`")
    );
}

#[test]
fn nested_repeats_within_limits() {
    assert!(matches("^(?:a{10}){100}$", &"a".repeat(1000)));
    assert!(!matches("^(?:a{10}){100}$", &"a".repeat(999)));
    assert!(matches("^(a{2}){500}$", &"a".repeat(1000)));
    assert!(matches("^a{1000}$", &"a".repeat(1000)));
    assert!(matches("^(a{0}){1000}b$", "b"));
    assert!(matches("^(?:a*){1000}$", "aaa"));
    assert!(matches(r"^\pL{1000}$", &"é".repeat(1000)));
    // `{` that is not a repeat is a literal, also with leading zeros.
    assert!(matches("^a{01}$", "a{01}"));
    assert!(matches("^a{,2}$", "a{,2}"));
    assert!(matches("^a{1$", "a{1"));
    assert!(matches("^{$", "{"));
}

#[test]
fn ascii_perl_classes() {
    assert!(!matches(r"^\d+$", "٣"));
    assert!(matches(r"^\d+$", "0123456789"));
    assert!(!matches(r"^\w+$", "é"));
    assert!(matches(r"^\w+$", "az_AZ09"));
    assert!(!matches(r"^\s$", "\u{a0}"));
    assert!(!matches(r"^\s$", "\x0b"));
    assert!(matches(r"^\s+$", "\t\n\x0c\r "));
    assert!(matches(r"^\D$", "٣"));
    assert!(matches(r"^\W$", "é"));
    assert!(matches(r"^[[:alpha:]]+$", "abcXYZ"));
    assert!(!matches(r"^[[:alpha:]]$", "é"));
    assert!(matches(r"^[[:^digit:]]$", "x"));
    assert!(matches(r"^[[:space:]]$", "\x0b"));
    assert!(matches(r"^[[:punct:]]+$", "!/:@[`{~"));
    // \b and \B are ASCII word boundaries.
    assert!(!matches(r"\bé", "é"));
    assert!(matches(r"\Bé", "é"));
    assert!(matches(r"a\bé", "aé"));
    assert!(!matches(r"a\Bé", "aé"));
    assert!(matches(r"x\b", "xé"));
    assert!(matches(r"\Bb", "ab"));
    assert!(!matches(r"\bb", "ab"));
    assert!(!matches(r"\B", "aéb"));
    assert!(matches(r"\B", "aé"));
    // Case folding keeps Go's order: fold, then negate.
    assert!(matches(r"(?i)\W", "é"));
    assert!(!matches(r"(?i)^\W$", "\u{212a}"));
    assert!(matches(r"(?i)^k$", "\u{212a}"));
    assert!(matches(r"(?i)^[a-c]+$", "AbC"));
    assert!(!matches(r"(?i)^[^a]$", "A"));
    assert!(matches(r"(?i)^\p{Lu}$", "a"));
}

#[test]
fn unicode_classes() {
    assert!(matches(r"^\p{L}+$", "émile"));
    assert!(!matches(r"^\p{L}+$", "a1"));
    assert!(matches(r"^\pL\pN$", "a٣"));
    assert!(matches(r"^\p{Greek}+$", "αβγ"));
    assert!(matches(r"^\P{Greek}$", "a"));
    assert!(matches(r"^\p{^Greek}$", "a"));
    assert!(!matches(r"^\P{^Greek}$", "a"));
    assert!(matches(r"^\p{Letter}$", "a"));
    assert!(matches(r"^\p{lu}$", "A"));
    assert!(matches(r"^\p{Any}$", "\n"));
    assert!(matches(r"^\p{ASCII}$", "\x7f"));
    assert!(matches(r"^[\p{Han}\d]+$", "中3"));
    assert!(matches(r"^\p{Old_Italic}$", "\u{10300}"));
    assert!(!matches(r"^\p{Assigned}$", "\u{378}"));
    assert!(err(r"\p{Grek}").contains("invalid character class range"));
    assert!(err(r"\p{Alphabetic}").contains("invalid character class range"));
}

#[test]
fn escapes_quoting_and_literals() {
    assert!(matches(r"^\Qa.b*c\E$", "a.b*c"));
    assert!(!matches(r"^\Qa.b\E$", "axb"));
    assert!(matches(r"^\Qa.b$", "a.b$"));
    assert!(matches(r"^\Q\E*$", ""));
    assert!(matches(r"^\101\x42\x{43}\0$", "ABC\0"));
    assert!(matches(r"^\12$", "\n"));
    assert!(matches(r"^\1234$", "S4"));
    assert!(matches(r"^\08$", "\08"));
    assert!(matches(r"^[\101-\103]+$", "ABC"));
    assert!(matches(r"^\x{10FFFF}$", "\u{10ffff}"));
    assert!(!matches(r"\x{D800}", "\u{fffd}"));
    assert!(matches(r"^[\x{D000}-\x{E000}]$", "\u{e000}"));
    assert!(matches(r"^\a\f\n\r\t\v$", "\x07\x0c\n\r\t\x0b"));
    assert!(matches(r"^\_\-\.\#$", "_-.#"));
    assert!(matches(r"^[]a]+$", "]a"));
    assert!(matches(r"^[a-]+$", "-a"));
    assert!(matches(r"^[^]a]$", "b"));
    assert!(matches(r"^\A\z$", ""));
}

#[test]
fn flags_groups_and_anchors() {
    assert!(matches("(?i)abc", "xABCx"));
    assert!(matches("^(?i:a)b$", "Ab"));
    assert!(!matches("^(?i:a)b$", "AB"));
    assert!(matches("^(?i)a|b$", "B"));
    assert!(matches("^(?s).$", "\n"));
    assert!(!matches("^.$", "\n"));
    assert!(matches("(?m)^b$", "a\nb\nc"));
    assert!(!matches("^b$", "a\nb\nc"));
    assert!(!matches("^a$", "a\n"));
    assert!(matches("(?U)a+", "aa"));
    assert!(matches("(?i-i:a)", "a"));
    assert!(matches("^(?P<x>a)(?P<x>b)$", "ab"));
    assert!(matches("^(?<y>a)$", "a"));
    assert!(matches("^a(?i)*$", "aaa"));
    assert!(matches("^(?)a$", "a"));
    assert!(matches("^a|$", "x"));
    assert!(matches("^()$", ""));
    assert!(matches("^(|a)+$", "aa"));
    assert!(matches("^*?$", "") || err("^*?").contains("missing"));
    assert!(matches("^$*x", "x"));
}

#[test]
fn corpus_patterns_compile() {
    let patterns: &[&str] = &[
        r###"(^$|^[a-f0-9]{64}$)"###,
        r###"(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$"###,
        r###"(^\*$)|(^(http(s)?):\/\/(((\*\.)?([a-zA-Z0-9\-]+\.)*[a-zA-Z0-9-]+|\*)(:([0-9]{1,5}))?)$)"###,
        r###"[0-9]"###,
        r###"^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"###,
        r###"^((([01][0-9])|(2[0-3])):[0-5][0-9])$|(^24:00$)"###,
        r###"^((?i)january|february|march|april|may|june|july|august|september|october|november|december|1[0-2]|[1-9])(?:((:((?i)january|february|march|april|may|june|july|august|september|october|november|december|1[0-2]|[1-9]))$)|$)"###,
        r###"^((?i)sun|mon|tues|wednes|thurs|fri|satur)day(?:((:(sun|mon|tues|wednes|thurs|fri|satur)day)$)|$)"###,
        r###"^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$"###,
        r###"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"###,
        r###"^(([^:/?#]+):)(//([^/?#]*))([^?#]*)(\?([^#]*))?(#(.*))?"###,
        r###"^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"###,
        r###"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"###,
        r###"^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$"###,
        r###"^(?i)(abort|warn)?$"###,
        r###"^(System|([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]))$"###,
        r###"^([0-9]+(\.[0-9]+)?(ms|s|m))+$"###,
        r###"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"###,
        r###"^([0-9]+(\.[0-9]+)?(s|m|h))+$"###,
        r###"^([0-9]{1,5}(h|m|s|ms)){1,4}$"###,
        r###"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"###,
        r###"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"###,
        r###"^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+$"###,
        r###"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"###,
        r###"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"###,
        r###"^(http|https)://.*$"###,
        r###"^(http|https)://.+$"###,
        r###"^(http|https|oci)://.*$"###,
        r###"^(http|https|socks5)://.+$"###,
        r###"^(http|https|ssh)://.*$"###,
        r###"^.{2,}|[^./]$"###,
        r###"^2\d{3}(?::2\d{3}|$)"###,
        r###"^Hostname|IPAddress|NamedAddress|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$"###,
        r###"^[!-~]+([\t ]?[!-~]+)*$"###,
        r###"^[-_A-Za-z0-9]+$"###,
        r###"^[0-9]+%$"###,
        r###"^[0-9]+%?$"###,
        r###"^[0-9a-zA-Z-.]+$"###,
        r###"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$"###,
        r###"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"###,
        r###"^[\-._a-zA-Z0-9]+$"###,
        r###"^[\w\s:/.\\-]+$"###,
        r###"^[^*]*(\*[^/]*)?\.(json|yml|yaml|JSON|YML|YAML)$"###,
        r###"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"###,
        r###"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"###,
        r###"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$"###,
        r###"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[a-z]([-a-z0-9]*[a-z0-9])?$"###,
        r###"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$"###,
        r###"^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]+$"###,
        r###"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"###,
        r###"^[a-zA-Z][a-zA-Z0-9+.-]*://.+$"###,
        r###"^[a-z]*$"###,
        r###"^[a-z]+$"###,
        r###"^[a-z][a-z0-9-]*$"###,
        r###"^\[[0-9]+-[0-9]+\]$"###,
        r###"^\p{Lu}\p{Ll}+$"###,
        r###"^\p{L}+$"###,
        r###"^https?://.+$"###,
        r###"^oci://.*$"###,
        r###"b"###,
    ];
    for p in patterns {
        compile(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
}

/// Patterns whose objects the API server rejected with "should match": the bad value must
/// not match, and the other listed values must.
#[test]
fn corpus_should_match() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (r"^\p{L}+$", &["a1"], &["émile"]),
        ("b", &["x"], &["abc"]),
        (
            r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
            &["bad>", "*.gateway.networking.k8s.io"],
            &["gateway.networking.k8s.io"],
        ),
        (
            r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$",
            &["example", "{GATEWAY_CONTROLLER_NAME}"],
            &["example.com/gateway-controller"],
        ),
        (r"^[0-9]+%?$", &["5x"], &["5", "50%"]),
        (
            r"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$",
            &["magic/"],
            &["ma`gic"],
        ),
        (
            r"^[!-~]+([\t ]?[!-~]+)*$",
            &["this\nis\rinvalid\r\nvalue"],
            &["a b\tc"],
        ),
        ("^[a-z][a-z0-9-]*$", &["Abc", "abc\n"], &["abc-1"]),
        ("[0-9]", &["abc"], &["a1"]),
        (r"^\p{Lu}\p{Ll}+$", &["émile"], &["Émile"]),
        ("^[-_A-Za-z0-9]+$", &[":authority", "**"], &["x-y_z"]),
        ("(^$|^[a-f0-9]{64}$)", &["foo"], &["", &"a".repeat(64)]),
        ("^[0-9]+%$", &["50", "x%"], &["50%"]),
    ];
    for (pattern, bad, good) in cases {
        for s in *bad {
            assert!(!matches(pattern, s), "{pattern:?} must not match {s:?}");
        }
        for s in *good {
            assert!(matches(pattern, s), "{pattern:?} must match {s:?}");
        }
    }
}

#[test]
fn cache_is_shared() {
    let a = compile_cached("^x+$").unwrap();
    let b = compile_cached("^x+$").unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert!(a.is_match("xx"));
    assert_eq!(compile_cached("(").unwrap_err(), compile("(").unwrap_err());
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// ASCII-only patterns built from constructs that mean the same in Go and in the
    /// `regex` crate (no \d \w \s \b, no flags): the translation must agree with the crate
    /// reading the pattern directly.
    fn pattern() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("a".to_string()),
            Just("b".to_string()),
            Just(".".to_string()),
            Just("[ab]".to_string()),
            Just("[^a]".to_string()),
            Just("^".to_string()),
            Just("$".to_string()),
            Just(r"\.".to_string()),
            Just(" ".to_string()),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a}|{b}")),
                inner.clone().prop_map(|a| format!("({a})")),
                inner.clone().prop_map(|a| format!("(?:{a})*")),
                inner.clone().prop_map(|a| format!("({a})+?")),
                inner.clone().prop_map(|a| format!("(?:{a})?")),
                inner.prop_map(|a| format!("(?:{a}){{1,3}}")),
            ]
        })
    }

    proptest! {
        #[test]
        fn agrees_with_regex_crate(p in pattern(), s in "[ab. \n]{0,8}") {
            let want = regex::Regex::new(&p).unwrap().is_match(&s);
            prop_assert_eq!(matches(&p, &s), want, "pattern {:?} on {:?}", p, s);
        }
    }
}
