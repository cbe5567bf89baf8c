//! The CEL environment of a Kubernetes release: which libraries, macros, syntax, AST
//! validators and checker behaviours are present.
//!
//! Upstream (`k8s.io/apiserver/pkg/cel/environment`, `base.go`) lists the options of the base
//! environment, each with the version that introduced it (and, for the strings extension's
//! version 0, the version that removed it), and builds two environments from them:
//!
//! - the **new expressions** environment holds the options introduced at or before a
//!   *compatibility version*; a kube-apiserver of release 1.N uses 1.(N-1) (its
//!   `MinCompatibilityVersion`), so that a rule it accepts still compiles after a rollback by
//!   one release. CRD create validation compiles rules there.
//! - the **stored expressions** environment holds every option the binary knows; the custom
//!   resource strategy compiles the rules of stored CRDs there (and CRD update validation, for
//!   a rule already present in the old CRD).
//!
//! Both are an [`Env`] here: the set of [`Feature`]s introduced at or before a version
//! ([`Env::new_expressions`] for release 1.N is version 1.(N-1), [`Env::stored`] is 1.N, as a
//! 1.N binary knows the options introduced up to its own release).
//!
//! The declarations of [`super::decls`] are tagged with the feature that declares them; the
//! parser (optional syntax, extension macros), the checker (functions, type names,
//! cross-type numeric comparisons, keywords as field names) and the AST validators ask the
//! environment which features are present.

/// The newest Kubernetes minor release the engine models.
pub const NEWEST_RELEASE: u32 = 36;

/// A library, macro set, syntax or behaviour of the Kubernetes CEL environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// cel-go's standard functions and macros (`has`, `all`, `exists`, `exists_one`, `map`,
    /// `filter`), and the homogeneous aggregate literal validator.
    Standard,
    /// Kubernetes' URL library (`url`, `isURL`, `getHost`...).
    Urls,
    /// Kubernetes' regex library (`find`, `findAll`).
    Regex,
    /// Kubernetes' list library (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`).
    KubernetesLists,
    /// The strings extension's functions of its version 0 (`charAt`, `indexOf`, `join`,
    /// `lowerAscii`, `replace`, `split`, `substring`, `trim`, `upperAscii`...), in every
    /// release (version 0 until 1.29, version 2 since).
    Strings,
    /// Kubernetes' authorizer library (`path`, `group`, `check`, `allowed`...).
    Authz,
    /// cel-go's cross-type numeric comparisons (`1 < 2.0`, `1u > 0`).
    CrossTypeNumericComparisons,
    /// Optional types: the `optional_type` type, `optional.*` functions, `.?`, `[?`, `?`
    /// entries in list and map literals, `optMap`/`optFlatMap`, `first`/`last`.
    OptionalTypes,
    /// Kubernetes' quantity library.
    Quantity,
    /// The AST validators of duration, timestamp and regex literals.
    LiteralValidators,
    /// The strings extension's version 2 additions: `format` (with its validator of literal
    /// format strings) and `strings.quote`.
    StringsV2,
    /// The sets extension (`sets.contains`, `sets.equivalent`, `sets.intersects`).
    Sets,
    /// Kubernetes' IP library (`ip`, `isIP`, `net.IP`...).
    Ip,
    /// Kubernetes' CIDR library (`cidr`, `isCIDR`, `net.CIDR`...).
    Cidr,
    /// Kubernetes' named formats (`format.dns1123Label()`, `format.named`, `validate`).
    Format,
    /// The authorizer's field and label selectors (behind the `AuthorizeWithSelectors`
    /// gate, on by default from 1.32, which is when a server's new expressions get it).
    AuthzSelectors,
    /// Reserved words name the fields they escape (`self.namespace` for the property
    /// `namespace`, besides `self.__namespace__`).
    KeywordFieldNames,
    /// The two-variable comprehension macros (`all`, `exists`, `existsOne`/`exists_one` with
    /// two variables, `transformList`, `transformMap`, `transformMapEntry`).
    TwoVarComprehensions,
    /// Kubernetes' semver library.
    Semver,
    /// The lists extension, version 3 (`slice`, `flatten`, `distinct`, `reverse`, `sort`,
    /// `sortBy`, `lists.range`).
    Lists,
}

impl Feature {
    /// The minor version of Kubernetes 1.x that introduced the feature into the base
    /// environment (0: always present in the releases modelled).
    pub const fn introduced(self) -> u32 {
        match self {
            Feature::Standard
            | Feature::Urls
            | Feature::Regex
            | Feature::KubernetesLists
            | Feature::Strings => 0,
            Feature::Authz => 27,
            Feature::CrossTypeNumericComparisons | Feature::OptionalTypes | Feature::Quantity => 28,
            Feature::LiteralValidators | Feature::StringsV2 | Feature::Sets => 29,
            Feature::Ip | Feature::Cidr => 30,
            Feature::Format | Feature::AuthzSelectors | Feature::KeywordFieldNames => 31,
            Feature::TwoVarComprehensions => 32,
            Feature::Semver => 33,
            Feature::Lists => 34,
        }
    }

    /// The feature of a tag of the declaration table.
    pub(crate) fn from_tag(tag: &str) -> Option<Feature> {
        Some(match tag {
            "std" => Feature::Standard,
            "xnum" => Feature::CrossTypeNumericComparisons,
            "url" => Feature::Urls,
            "regex" => Feature::Regex,
            "k8s-lists" => Feature::KubernetesLists,
            "strings" => Feature::Strings,
            "strings-v2" => Feature::StringsV2,
            "authz" => Feature::Authz,
            "authz-selectors" => Feature::AuthzSelectors,
            "optional" => Feature::OptionalTypes,
            "quantity" => Feature::Quantity,
            "sets" => Feature::Sets,
            "ip" => Feature::Ip,
            "cidr" => Feature::Cidr,
            "format" => Feature::Format,
            "two-var" => Feature::TwoVarComprehensions,
            "semver" => Feature::Semver,
            "lists" => Feature::Lists,
            _ => return None,
        })
    }
}

/// A CEL environment: the features introduced at or before its compatibility version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Env {
    /// The minor version of Kubernetes 1.x whose features are present.
    compatibility: u32,
}

impl Default for Env {
    fn default() -> Self {
        Env::LATEST
    }
}

impl Env {
    /// Every feature: the environment of the newest release modelled (its new and stored
    /// expressions environments are the same).
    pub const LATEST: Env = Env {
        compatibility: NEWEST_RELEASE,
    };

    /// The environment of the features introduced at or before 1.`compatibility`.
    pub const fn at(compatibility: u32) -> Env {
        Env { compatibility }
    }

    /// The environment a kube-apiserver of release 1.`release` compiles new rules in (CRD
    /// create, and CRD update for rules the old CRD did not have): its compatibility version,
    /// 1.(`release` - 1).
    pub const fn new_expressions(release: u32) -> Env {
        Env::at(release.saturating_sub(1))
    }

    /// The environment a kube-apiserver of release 1.`release` compiles stored rules in (the
    /// custom resource strategy's validation of objects).
    pub const fn stored(release: u32) -> Env {
        Env::at(release)
    }

    /// The compatibility version (the minor of 1.x).
    pub const fn compatibility(self) -> u32 {
        self.compatibility
    }

    /// Whether the feature is present.
    pub const fn has(self, f: Feature) -> bool {
        f.introduced() <= self.compatibility
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_compile_new_rules_one_version_back() {
        assert!(!Env::new_expressions(30).has(Feature::Ip));
        assert!(Env::stored(30).has(Feature::Ip));
        assert!(Env::new_expressions(31).has(Feature::Ip));
        assert!(Env::new_expressions(27).has(Feature::Strings));
        assert!(!Env::new_expressions(27).has(Feature::Authz));
        assert!(Env::new_expressions(35).has(Feature::Lists));
        assert_eq!(Env::default(), Env::LATEST);
    }

    /// Compiles `rule` with `self` an object of a string `s`, an integer `i` and a string
    /// list `l`, in `env`: the error, if any.
    fn compile_error(rule: &str, env: Env) -> Option<String> {
        let schema = serde_json::json!({"type": "object", "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "l": {"type": "array", "items": {"type": "string"}},
            "namespace": {"type": "string"},
        }});
        let props = crate::schema::Props::from_value("", &schema).unwrap();
        let types = crate::cel::types::DeclTypes::new(&props);
        crate::cel::compile::compile_in(rule, &types, types.root(), false, false, env)
            .err()
            .map(|e| e.rule_detail())
    }

    #[test]
    fn rules_compile_from_the_release_after_their_library() {
        for (rule, release) in [
            ("self.i < 2.5", 29),
            ("self.?s.hasValue()", 29),
            ("[?optional.none()].size() == 0", 29),
            ("optional.of(1).optMap(x, x).hasValue()", 29),
            ("quantity(self.s).isInteger()", 29),
            ("'%s'.format([self.s]) != ''", 30),
            ("sets.contains(self.l, ['a'])", 30),
            ("isIP(self.s) && type(self.s) != net.IP", 31),
            ("format.dns1123Label().validate(self.s).hasValue()", 32),
            ("self.namespace == 'a'", 32),
            ("self.l.all(i, v, i >= 0)", 33),
            ("self.l.transformList(i, v, v).size() > 0", 33),
            ("isSemver(self.s)", 34),
            ("self.l.sortBy(e, e).size() > 0", 35),
            ("lists.range(2).size() == 2", 35),
        ] {
            let before = Env::new_expressions(release - 1);
            assert!(
                compile_error(rule, before).is_some(),
                "{rule} in 1.{}",
                release - 1
            );
            assert_eq!(
                compile_error(rule, Env::new_expressions(release)),
                None,
                "{rule}"
            );
            // Stored rules compile in the release that brought the library.
            assert_eq!(
                compile_error(rule, Env::stored(release - 1)),
                None,
                "{rule}"
            );
        }
    }

    #[test]
    fn missing_syntax_and_validators_say_so() {
        let old = Env::new_expressions(27);
        let e = compile_error("self.?s.hasValue()", old).unwrap();
        assert!(e.contains("1:5: unsupported syntax '.?'"), "{e}");
        let e = compile_error("self.l[?0].hasValue()", old).unwrap();
        assert!(e.contains("1:7: unsupported syntax '[?'"), "{e}");
        let e = compile_error("{?'a': 1}.size() == 1", old).unwrap();
        assert!(e.contains("1:2: unsupported syntax '?'"), "{e}");
        let e = compile_error("self.i < 2.5", old).unwrap();
        assert!(e.contains("found no matching overload for '_<_' applied to '(int, double)'"));
        let e = compile_error("self.l.all(i, v, true)", old).unwrap();
        assert!(e.contains("undeclared reference to 'all'"), "{e}");
        // Without the literal validators, a bad literal fails when the program is made.
        let e = compile_error("duration('1x') > duration('1s')", Env::new_expressions(29));
        assert!(e.unwrap().starts_with("program instantiation failed: "));
        let e = compile_error("duration('1x') > duration('1s')", Env::new_expressions(30));
        assert!(e.unwrap().contains("invalid duration argument"));
        // Homogeneous aggregate literals are checked in every release.
        assert!(compile_error("[1, 'a'].size() == 2", old).is_some());
    }

    #[test]
    fn every_tag_names_a_feature() {
        for tag in [
            "std",
            "xnum",
            "url",
            "regex",
            "k8s-lists",
            "strings",
            "strings-v2",
            "authz",
            "authz-selectors",
            "optional",
            "quantity",
            "sets",
            "ip",
            "cidr",
            "format",
            "two-var",
            "semver",
            "lists",
        ] {
            assert!(Feature::from_tag(tag).is_some(), "{tag}");
        }
        assert_eq!(
            Feature::from_tag("xnum"),
            Some(Feature::CrossTypeNumericComparisons)
        );
        assert_eq!(Feature::from_tag("nope"), None);
    }
}
