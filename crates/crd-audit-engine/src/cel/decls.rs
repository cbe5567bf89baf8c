//! The CEL types of the type checker and the function declarations of the Kubernetes CEL
//! environment (cel-go's standard library, the strings (v2), sets, lists (v3), optional
//! and two-variable comprehension extensions, and the Kubernetes libraries), each tagged with
//! the [`Feature`] that declares it: [`functions_in`] gives those of an environment.

use super::env::{Env, Feature, NEWEST_RELEASE};
use super::types::TypeId;
use std::collections::HashMap;
use std::sync::Arc as Rc;
use std::sync::OnceLock;

/// A CEL type as cel-go's checker sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CelType {
    Dyn,
    Error,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<CelType>),
    Map(Box<CelType>, Box<CelType>),
    /// `type`, or `type(T)`.
    Type(Option<Box<CelType>>),
    /// An opaque type: `optional_type(T)`, `net.IP`, `net.CIDR`, `function(...)`.
    Opaque(Rc<str>, Vec<CelType>),
    /// An object type: a library type (`kubernetes.Quantity`...) or a schema object (with its
    /// node), by name.
    Struct(Rc<str>, Option<TypeId>),
    /// A type parameter (`A`, `_var0`).
    Param(Rc<str>),
}

pub const OPTIONAL: &str = "optional_type";

impl CelType {
    pub fn list(t: CelType) -> CelType {
        CelType::List(Box::new(t))
    }

    pub fn map(k: CelType, v: CelType) -> CelType {
        CelType::Map(Box::new(k), Box::new(v))
    }

    pub fn optional(t: CelType) -> CelType {
        CelType::Opaque(OPTIONAL.into(), vec![t])
    }

    pub fn type_of(t: CelType) -> CelType {
        CelType::Type(Some(Box::new(t)))
    }

    /// The optional type's parameter, or `None`.
    pub fn unwrap_optional(&self) -> Option<&CelType> {
        match self {
            CelType::Opaque(n, p) if &**n == OPTIONAL => p.first(),
            _ => None,
        }
    }

    pub fn params(&self) -> Vec<&CelType> {
        match self {
            CelType::List(e) => vec![e],
            CelType::Map(k, v) => vec![k, v],
            CelType::Type(Some(t)) => vec![t],
            CelType::Opaque(_, p) => p.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The kind, as cel-go compares kinds.
    pub fn kind(&self) -> u8 {
        match self {
            CelType::Dyn => 1,
            CelType::Error => 2,
            CelType::Null => 3,
            CelType::Bool => 4,
            CelType::Int => 5,
            CelType::Uint => 6,
            CelType::Double => 7,
            CelType::String => 8,
            CelType::Bytes => 9,
            CelType::Duration => 10,
            CelType::Timestamp => 11,
            CelType::List(_) => 12,
            CelType::Map(..) => 13,
            CelType::Type(_) => 14,
            CelType::Opaque(..) => 15,
            CelType::Struct(..) => 16,
            CelType::Param(_) => 17,
        }
    }

    /// The runtime type name (`TypeName`).
    pub fn type_name(&self) -> String {
        match self {
            CelType::Dyn => "dyn".into(),
            CelType::Error => "error".into(),
            CelType::Null => "null_type".into(),
            CelType::Bool => "bool".into(),
            CelType::Int => "int".into(),
            CelType::Uint => "uint".into(),
            CelType::Double => "double".into(),
            CelType::String => "string".into(),
            CelType::Bytes => "bytes".into(),
            CelType::Duration => "google.protobuf.Duration".into(),
            CelType::Timestamp => "google.protobuf.Timestamp".into(),
            CelType::List(_) => "list".into(),
            CelType::Map(..) => "map".into(),
            CelType::Type(_) => "type".into(),
            CelType::Opaque(n, _) | CelType::Struct(n, _) | CelType::Param(n) => n.to_string(),
        }
    }

    /// cel-go's `FormatCELType` (the rendering in checker messages).
    pub fn format(&self) -> String {
        match self {
            CelType::Dyn => "dyn".into(),
            CelType::Error => "!error!".into(),
            CelType::Null => "null".into(),
            CelType::Duration => "duration".into(),
            CelType::Timestamp => "timestamp".into(),
            CelType::Param(n) => n.to_string(),
            CelType::Opaque(n, p) if &**n == "function" => {
                let args: Vec<String> = p[1..].iter().map(CelType::format).collect();
                format!("({}) -> {}", args.join(", "), p[0].format())
            }
            _ => {
                let params = self.params();
                if params.is_empty() {
                    self.type_name()
                } else {
                    let ps: Vec<String> = params.iter().map(|p| p.format()).collect();
                    format!("{}({})", self.type_name(), ps.join(", "))
                }
            }
        }
    }
}

/// One overload of a function.
#[derive(Debug)]
pub struct Overload {
    pub id: &'static str,
    /// The library (or checker feature) that declares it.
    pub feature: Feature,
    pub member: bool,
    pub args: Vec<CelType>,
    pub result: CelType,
    /// The type parameters of the signature.
    pub params: Vec<Rc<str>>,
}

/// Every declaration of the newest environment, by function name, overloads in declaration
/// order.
pub fn functions() -> &'static HashMap<&'static str, Vec<Overload>> {
    static TABLE: OnceLock<HashMap<&'static str, Vec<Overload>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map: HashMap<&'static str, Vec<Overload>> = HashMap::new();
        for line in DECLARATIONS.lines() {
            let (tag, line) = line.split_once(' ').unwrap_or((line, ""));
            let feature = Feature::from_tag(tag)
                .unwrap_or_else(|| panic!("declaration table: unknown library tag {tag:?}"));
            let line = line.trim_start();
            let (name, rest) = line.split_once(' ').unwrap_or((line, ""));
            let (id, sig) = rest.split_once(' ').unwrap_or((rest, ""));
            let member = sig.starts_with('.');
            let sig = sig.trim_start_matches('.');
            let close = sig.rfind(") ").unwrap_or(sig.len());
            let args_text = &sig[1.min(sig.len())..close];
            let result_text = sig.get(close + 2..).unwrap_or("dyn");
            let mut params = Vec::new();
            let args = split_top(args_text)
                .into_iter()
                .map(|a| parse_type(a, &mut params))
                .collect();
            let result = parse_type(result_text, &mut params);
            map.entry(name).or_default().push(Overload {
                id,
                feature,
                member,
                args,
                result,
                params,
            });
        }
        map
    })
}

/// The functions of an environment: each function's overloads that the environment
/// declares, in declaration order (a function without any is not there).
pub fn functions_in(env: Env) -> &'static HashMap<&'static str, Vec<&'static Overload>> {
    // One table per compatibility version up to the newest release (later ones are the
    // newest's).
    const VERSIONS: usize = NEWEST_RELEASE as usize + 1;
    static TABLES: [OnceLock<HashMap<&'static str, Vec<&'static Overload>>>; VERSIONS] =
        [const { OnceLock::new() }; VERSIONS];
    let version = (env.compatibility() as usize).min(VERSIONS - 1);
    TABLES[version].get_or_init(|| {
        let env = Env::at(version as u32);
        functions()
            .iter()
            .filter_map(|(&name, overloads)| {
                let present: Vec<&'static Overload> =
                    overloads.iter().filter(|o| env.has(o.feature)).collect();
                (!present.is_empty()).then_some((name, present))
            })
            .collect()
    })
}

/// Splits `a, list(b, c), d` at top-level commas.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

/// Library object types (struct kind in cel-go).
pub const STRUCT_TYPES: [&str; 9] = [
    "kubernetes.Quantity",
    "kubernetes.URL",
    "kubernetes.Semver",
    "kubernetes.NamedFormat",
    "kubernetes.authorization.Authorizer",
    "kubernetes.authorization.PathCheck",
    "kubernetes.authorization.GroupCheck",
    "kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.Decision",
];

/// A type of the declarations' notation (`list(<A>)`, `map(string, int)`, `net.IP`...).
pub fn parse_type(s: &str, params: &mut Vec<Rc<str>>) -> CelType {
    let s = s.trim();
    if let Some(p) = s.strip_prefix('<').and_then(|p| p.strip_suffix('>')) {
        let name: Rc<str> = p.into();
        if !params.contains(&name) {
            params.push(name.clone());
        }
        return CelType::Param(name);
    }
    if let Some(open) = s.find('(') {
        let name = &s[..open];
        let inner: Vec<CelType> = split_top(&s[open + 1..s.len() - 1])
            .into_iter()
            .map(|a| parse_type(a, params))
            .collect();
        let mut it = inner.into_iter();
        return match name {
            "list" => CelType::list(it.next().unwrap_or(CelType::Dyn)),
            "map" => {
                let k = it.next().unwrap_or(CelType::Dyn);
                CelType::map(k, it.next().unwrap_or(CelType::Dyn))
            }
            "type" => CelType::type_of(it.next().unwrap_or(CelType::Dyn)),
            other => CelType::Opaque(other.into(), it.collect()),
        };
    }
    match s {
        "dyn" => CelType::Dyn,
        "null_type" => CelType::Null,
        "bool" => CelType::Bool,
        "int" => CelType::Int,
        "uint" => CelType::Uint,
        "double" => CelType::Double,
        "string" => CelType::String,
        "bytes" => CelType::Bytes,
        "google.protobuf.Duration" => CelType::Duration,
        "google.protobuf.Timestamp" => CelType::Timestamp,
        "type" => CelType::Type(None),
        n if STRUCT_TYPES.contains(&n) => CelType::Struct(n.into(), None),
        n => CelType::Opaque(n.into(), Vec::new()),
    }
}

/// Every overload of the newest environment, one a line: `library function overload_id
/// [.](arg types) result type` (`.` marks receiver-style overloads, whose first type is the
/// receiver's), in cel-go's declaration order. The library tag names the [`Feature`] that
/// declares the overload ([`Feature::from_tag`]): `std` cel-go's standard library, `xnum` its
/// cross-type numeric comparisons (a checker option filtering standard overloads),
/// `optional` the optional types library, `strings` and `strings-v2` the strings extension
/// (version 0, and what version 2 adds), `sets`, `lists` (version 3) and `two-var` the other
/// cel-go extensions, and `url`, `regex`, `k8s-lists`, `authz`, `authz-selectors`,
/// `quantity`, `ip`, `cidr`, `format`, `semver` the Kubernetes libraries.
const DECLARATIONS: &str = "std             !_ logical_not (bool) bool
std             -_ negate_double (double) double
std             -_ negate_int64 (int) int
std             @in in_list (<A>, list(<A>)) bool
std             @in in_map (<A>, map(<A>, <B>)) bool
std             @not_strictly_false not_strictly_false (bool) bool
lists           @sortByAssociatedKeys list_int_sortByAssociatedKeys .(list(<T>), list(int)) list(<T>)
lists           @sortByAssociatedKeys list_uint_sortByAssociatedKeys .(list(<T>), list(uint)) list(<T>)
lists           @sortByAssociatedKeys list_double_sortByAssociatedKeys .(list(<T>), list(double)) list(<T>)
lists           @sortByAssociatedKeys list_bool_sortByAssociatedKeys .(list(<T>), list(bool)) list(<T>)
lists           @sortByAssociatedKeys list_google.protobuf.Duration_sortByAssociatedKeys .(list(<T>), list(google.protobuf.Duration)) list(<T>)
lists           @sortByAssociatedKeys list_google.protobuf.Timestamp_sortByAssociatedKeys .(list(<T>), list(google.protobuf.Timestamp)) list(<T>)
lists           @sortByAssociatedKeys list_string_sortByAssociatedKeys .(list(<T>), list(string)) list(<T>)
lists           @sortByAssociatedKeys list_bytes_sortByAssociatedKeys .(list(<T>), list(bytes)) list(<T>)
std             _!=_ not_equals (<A>, <A>) bool
std             _%_ modulo_int64 (int, int) int
std             _%_ modulo_uint64 (uint, uint) uint
std             _&&_ logical_and (bool, bool) bool
std             _*_ multiply_double (double, double) double
std             _*_ multiply_int64 (int, int) int
std             _*_ multiply_uint64 (uint, uint) uint
std             _+_ add_bytes (bytes, bytes) bytes
std             _+_ add_double (double, double) double
std             _+_ add_duration_duration (google.protobuf.Duration, google.protobuf.Duration) google.protobuf.Duration
std             _+_ add_duration_timestamp (google.protobuf.Duration, google.protobuf.Timestamp) google.protobuf.Timestamp
std             _+_ add_timestamp_duration (google.protobuf.Timestamp, google.protobuf.Duration) google.protobuf.Timestamp
std             _+_ add_int64 (int, int) int
std             _+_ add_list (list(<A>), list(<A>)) list(<A>)
std             _+_ add_string (string, string) string
std             _+_ add_uint64 (uint, uint) uint
std             _-_ subtract_double (double, double) double
std             _-_ subtract_duration_duration (google.protobuf.Duration, google.protobuf.Duration) google.protobuf.Duration
std             _-_ subtract_int64 (int, int) int
std             _-_ subtract_timestamp_duration (google.protobuf.Timestamp, google.protobuf.Duration) google.protobuf.Timestamp
std             _-_ subtract_timestamp_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) google.protobuf.Duration
std             _-_ subtract_uint64 (uint, uint) uint
std             _/_ divide_double (double, double) double
std             _/_ divide_int64 (int, int) int
std             _/_ divide_uint64 (uint, uint) uint
std             _<=_ less_equals_bool (bool, bool) bool
std             _<=_ less_equals_int64 (int, int) bool
xnum            _<=_ less_equals_int64_double (int, double) bool
xnum            _<=_ less_equals_int64_uint64 (int, uint) bool
std             _<=_ less_equals_uint64 (uint, uint) bool
xnum            _<=_ less_equals_uint64_double (uint, double) bool
xnum            _<=_ less_equals_uint64_int64 (uint, int) bool
std             _<=_ less_equals_double (double, double) bool
xnum            _<=_ less_equals_double_int64 (double, int) bool
xnum            _<=_ less_equals_double_uint64 (double, uint) bool
std             _<=_ less_equals_string (string, string) bool
std             _<=_ less_equals_bytes (bytes, bytes) bool
std             _<=_ less_equals_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) bool
std             _<=_ less_equals_duration (google.protobuf.Duration, google.protobuf.Duration) bool
std             _<_ less_bool (bool, bool) bool
std             _<_ less_int64 (int, int) bool
xnum            _<_ less_int64_double (int, double) bool
xnum            _<_ less_int64_uint64 (int, uint) bool
std             _<_ less_uint64 (uint, uint) bool
xnum            _<_ less_uint64_double (uint, double) bool
xnum            _<_ less_uint64_int64 (uint, int) bool
std             _<_ less_double (double, double) bool
xnum            _<_ less_double_int64 (double, int) bool
xnum            _<_ less_double_uint64 (double, uint) bool
std             _<_ less_string (string, string) bool
std             _<_ less_bytes (bytes, bytes) bool
std             _<_ less_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) bool
std             _<_ less_duration (google.protobuf.Duration, google.protobuf.Duration) bool
std             _==_ equals (<A>, <A>) bool
std             _>=_ greater_equals_bool (bool, bool) bool
std             _>=_ greater_equals_int64 (int, int) bool
xnum            _>=_ greater_equals_int64_double (int, double) bool
xnum            _>=_ greater_equals_int64_uint64 (int, uint) bool
std             _>=_ greater_equals_uint64 (uint, uint) bool
xnum            _>=_ greater_equals_uint64_double (uint, double) bool
xnum            _>=_ greater_equals_uint64_int64 (uint, int) bool
std             _>=_ greater_equals_double (double, double) bool
xnum            _>=_ greater_equals_double_int64 (double, int) bool
xnum            _>=_ greater_equals_double_uint64 (double, uint) bool
std             _>=_ greater_equals_string (string, string) bool
std             _>=_ greater_equals_bytes (bytes, bytes) bool
std             _>=_ greater_equals_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) bool
std             _>=_ greater_equals_duration (google.protobuf.Duration, google.protobuf.Duration) bool
std             _>_ greater_bool (bool, bool) bool
std             _>_ greater_int64 (int, int) bool
xnum            _>_ greater_int64_double (int, double) bool
xnum            _>_ greater_int64_uint64 (int, uint) bool
std             _>_ greater_uint64 (uint, uint) bool
xnum            _>_ greater_uint64_double (uint, double) bool
xnum            _>_ greater_uint64_int64 (uint, int) bool
std             _>_ greater_double (double, double) bool
xnum            _>_ greater_double_int64 (double, int) bool
xnum            _>_ greater_double_uint64 (double, uint) bool
std             _>_ greater_string (string, string) bool
std             _>_ greater_bytes (bytes, bytes) bool
std             _>_ greater_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) bool
std             _>_ greater_duration (google.protobuf.Duration, google.protobuf.Duration) bool
optional        _?._ select_optional_field (dyn, string) optional_type(<V>)
std             _?_:_ conditional (bool, <A>, <A>) <A>
optional        _[?_] list_optindex_optional_int (list(<V>), int) optional_type(<V>)
optional        _[?_] optional_list_optindex_optional_int (optional_type(list(<V>)), int) optional_type(<V>)
optional        _[?_] map_optindex_optional_value (map(<K>, <V>), <K>) optional_type(<V>)
optional        _[?_] optional_map_optindex_optional_value (optional_type(map(<K>, <V>)), <K>) optional_type(<V>)
std             _[_] index_list (list(<A>), int) <A>
std             _[_] index_map (map(<A>, <B>), <A>) <B>
optional        _[_] optional_list_index_int (optional_type(list(<V>)), int) optional_type(<V>)
optional        _[_] optional_map_index_value (optional_type(map(<K>, <V>)), <K>) optional_type(<V>)
std             _||_ logical_or (bool, bool) bool
quantity        add quantity_add .(kubernetes.Quantity, kubernetes.Quantity) kubernetes.Quantity
quantity        add quantity_add_int .(kubernetes.Quantity, int) kubernetes.Quantity
authz           allowed decision_allowed .(kubernetes.authorization.Decision) bool
quantity        asApproximateFloat quantity_get_float .(kubernetes.Quantity) double
quantity        asInteger quantity_get_int .(kubernetes.Quantity) int
std             bool bool_to_bool (bool) bool
std             bool string_to_bool (string) bool
std             bytes bytes_to_bytes (bytes) bytes
std             bytes string_to_bytes (string) bytes
two-var         cel.@mapInsert @mapInsert_map_key_value (map(<K>, <V>), <K>, <V>) map(<K>, <V>)
two-var         cel.@mapInsert @mapInsert_map_map (map(<K>, <V>), map(<K>, <V>)) map(<K>, <V>)
strings         charAt string_char_at_int .(string, int) string
authz           check pathcheck_check .(kubernetes.authorization.PathCheck, string) kubernetes.authorization.Decision
authz           check resourcecheck_check .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.Decision
cidr            cidr string_to_cidr (string) net.CIDR
quantity        compareTo quantity_compare_to .(kubernetes.Quantity, kubernetes.Quantity) int
semver          compareTo semver_compare_to .(kubernetes.Semver, kubernetes.Semver) int
std             contains contains_string .(string, string) bool
cidr            containsCIDR cidr_contains_cidr_string .(net.CIDR, string) bool
cidr            containsCIDR cidr_contains_cidr .(net.CIDR, net.CIDR) bool
cidr            containsIP cidr_contains_ip_string .(net.CIDR, string) bool
cidr            containsIP cidr_contains_ip_ip .(net.CIDR, net.IP) bool
lists           distinct list_distinct .(list(<T>)) list(<T>)
std             double double_to_double (double) double
std             double int64_to_double (int) double
std             double string_to_double (string) double
std             double uint64_to_double (uint) double
std             duration duration_to_duration (google.protobuf.Duration) google.protobuf.Duration
std             duration string_to_duration (string) google.protobuf.Duration
std             dyn to_dyn (<A>) dyn
std             endsWith ends_with_string .(string, string) bool
authz           error decision_error .(kubernetes.authorization.Decision) string
authz           errored decision_errored .(kubernetes.authorization.Decision) bool
ip              family ip_family .(net.IP) int
authz-selectors fieldSelector authorizer_fieldselector .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
regex           find string_find_string .(string, string) string
regex           findAll string_find_all_string .(string, string) list(string)
regex           findAll string_find_all_string_int .(string, string, int) list(string)
optional        first list_first .(list(<V>)) optional_type(<V>)
lists           flatten list_flatten .(list(list(<T>))) list(<T>)
lists           flatten list_flatten_int .(list(dyn), int) list(dyn)
strings-v2      format string_format .(string, list(dyn)) string
format          format.byte format.byte () kubernetes.NamedFormat
format          format.date format.date () kubernetes.NamedFormat
format          format.datetime format.datetime () kubernetes.NamedFormat
format          format.dns1035Label format.dns1035Label () kubernetes.NamedFormat
format          format.dns1035LabelPrefix format.dns1035LabelPrefix () kubernetes.NamedFormat
format          format.dns1123Label format.dns1123Label () kubernetes.NamedFormat
format          format.dns1123LabelPrefix format.dns1123LabelPrefix () kubernetes.NamedFormat
format          format.dns1123Subdomain format.dns1123Subdomain () kubernetes.NamedFormat
format          format.dns1123SubdomainPrefix format.dns1123SubdomainPrefix () kubernetes.NamedFormat
format          format.labelValue format.labelValue () kubernetes.NamedFormat
format          format.named format-named (string) optional_type(kubernetes.NamedFormat)
format          format.qualifiedName format.qualifiedName () kubernetes.NamedFormat
format          format.uri format.uri () kubernetes.NamedFormat
format          format.uuid format.uuid () kubernetes.NamedFormat
std             getDate timestamp_to_day_of_month_1_based .(google.protobuf.Timestamp) int
std             getDate timestamp_to_day_of_month_1_based_with_tz .(google.protobuf.Timestamp, string) int
std             getDayOfMonth timestamp_to_day_of_month .(google.protobuf.Timestamp) int
std             getDayOfMonth timestamp_to_day_of_month_with_tz .(google.protobuf.Timestamp, string) int
std             getDayOfWeek timestamp_to_day_of_week .(google.protobuf.Timestamp) int
std             getDayOfWeek timestamp_to_day_of_week_with_tz .(google.protobuf.Timestamp, string) int
std             getDayOfYear timestamp_to_day_of_year .(google.protobuf.Timestamp) int
std             getDayOfYear timestamp_to_day_of_year_with_tz .(google.protobuf.Timestamp, string) int
url             getEscapedPath url_get_escaped_path .(kubernetes.URL) string
std             getFullYear timestamp_to_year .(google.protobuf.Timestamp) int
std             getFullYear timestamp_to_year_with_tz .(google.protobuf.Timestamp, string) int
url             getHost url_get_host .(kubernetes.URL) string
url             getHostname url_get_hostname .(kubernetes.URL) string
std             getHours timestamp_to_hours .(google.protobuf.Timestamp) int
std             getHours timestamp_to_hours_with_tz .(google.protobuf.Timestamp, string) int
std             getHours duration_to_hours .(google.protobuf.Duration) int
std             getMilliseconds timestamp_to_milliseconds .(google.protobuf.Timestamp) int
std             getMilliseconds timestamp_to_milliseconds_with_tz .(google.protobuf.Timestamp, string) int
std             getMilliseconds duration_to_milliseconds .(google.protobuf.Duration) int
std             getMinutes timestamp_to_minutes .(google.protobuf.Timestamp) int
std             getMinutes timestamp_to_minutes_with_tz .(google.protobuf.Timestamp, string) int
std             getMinutes duration_to_minutes .(google.protobuf.Duration) int
std             getMonth timestamp_to_month .(google.protobuf.Timestamp) int
std             getMonth timestamp_to_month_with_tz .(google.protobuf.Timestamp, string) int
url             getPort url_get_port .(kubernetes.URL) string
url             getQuery url_get_query .(kubernetes.URL) map(string, list(string))
url             getScheme url_get_scheme .(kubernetes.URL) string
std             getSeconds timestamp_to_seconds .(google.protobuf.Timestamp) int
std             getSeconds timestamp_to_seconds_tz .(google.protobuf.Timestamp, string) int
std             getSeconds duration_to_seconds .(google.protobuf.Duration) int
authz           group authorizer_group .(kubernetes.authorization.Authorizer, string) kubernetes.authorization.GroupCheck
optional        hasValue optional_hasValue .(optional_type(<V>)) bool
k8s-lists       indexOf list_a_index_of_int .(list(<A>), <A>) int
strings         indexOf string_index_of_string .(string, string) int
strings         indexOf string_index_of_string_int .(string, string, int) int
std             int int64_to_int64 (int) int
std             int double_to_int64 (double) int
std             int duration_to_int64 (google.protobuf.Duration) int
std             int string_to_int64 (string) int
std             int timestamp_to_int64 (google.protobuf.Timestamp) int
std             int uint64_to_int64 (uint) int
ip              ip string_to_ip (string) net.IP
cidr            ip cidr_ip .(net.CIDR) net.IP
ip              ip.isCanonical ip_is_canonical (string) bool
cidr            isCIDR is_cidr (string) bool
ip              isGlobalUnicast ip_is_global_unicast .(net.IP) bool
quantity        isGreaterThan quantity_is_greater_than .(kubernetes.Quantity, kubernetes.Quantity) bool
semver          isGreaterThan semver_is_greater_than .(kubernetes.Semver, kubernetes.Semver) bool
ip              isIP is_ip (string) bool
quantity        isInteger quantity_is_integer .(kubernetes.Quantity) bool
quantity        isLessThan quantity_is_less_than .(kubernetes.Quantity, kubernetes.Quantity) bool
semver          isLessThan semver_is_less_than .(kubernetes.Semver, kubernetes.Semver) bool
ip              isLinkLocalMulticast ip_is_link_local_multicast .(net.IP) bool
ip              isLinkLocalUnicast ip_is_link_local_unicast .(net.IP) bool
ip              isLoopback ip_is_loopback .(net.IP) bool
quantity        isQuantity is_quantity_string (string) bool
semver          isSemver is_semver_string (string) bool
semver          isSemver is_semver_string_bool (string, bool) bool
k8s-lists       isSorted list_int_is_sorted_bool .(list(int)) bool
k8s-lists       isSorted list_uint_is_sorted_bool .(list(uint)) bool
k8s-lists       isSorted list_double_is_sorted_bool .(list(double)) bool
k8s-lists       isSorted list_bool_is_sorted_bool .(list(bool)) bool
k8s-lists       isSorted list_duration_is_sorted_bool .(list(google.protobuf.Duration)) bool
k8s-lists       isSorted list_timestamp_is_sorted_bool .(list(google.protobuf.Timestamp)) bool
k8s-lists       isSorted list_string_is_sorted_bool .(list(string)) bool
k8s-lists       isSorted list_bytes_is_sorted_bool .(list(bytes)) bool
url             isURL is_url_string (string) bool
ip              isUnspecified ip_is_unspecified .(net.IP) bool
strings         join list_join .(list(string)) string
strings         join list_join_string .(list(string), string) string
authz-selectors labelSelector authorizer_labelselector .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
optional        last list_last .(list(<V>)) optional_type(<V>)
k8s-lists       lastIndexOf list_a_last_index_of_int .(list(<A>), <A>) int
strings         lastIndexOf string_last_index_of_string .(string, string) int
strings         lastIndexOf string_last_index_of_string_int .(string, string, int) int
lists           lists.range lists_range (int) list(int)
strings         lowerAscii string_lower_ascii .(string) string
semver          major semver_major .(kubernetes.Semver) int
cidr            masked cidr_masked .(net.CIDR) net.CIDR
std             matches matches (string, string) bool
std             matches matches_string .(string, string) bool
k8s-lists       max list_int_max_int .(list(int)) int
k8s-lists       max list_uint_max_uint .(list(uint)) uint
k8s-lists       max list_double_max_double .(list(double)) double
k8s-lists       max list_bool_max_bool .(list(bool)) bool
k8s-lists       max list_duration_max_duration .(list(google.protobuf.Duration)) google.protobuf.Duration
k8s-lists       max list_timestamp_max_timestamp .(list(google.protobuf.Timestamp)) google.protobuf.Timestamp
k8s-lists       max list_string_max_string .(list(string)) string
k8s-lists       max list_bytes_max_bytes .(list(bytes)) bytes
k8s-lists       min list_int_min_int .(list(int)) int
k8s-lists       min list_uint_min_uint .(list(uint)) uint
k8s-lists       min list_double_min_double .(list(double)) double
k8s-lists       min list_bool_min_bool .(list(bool)) bool
k8s-lists       min list_duration_min_duration .(list(google.protobuf.Duration)) google.protobuf.Duration
k8s-lists       min list_timestamp_min_timestamp .(list(google.protobuf.Timestamp)) google.protobuf.Timestamp
k8s-lists       min list_string_min_string .(list(string)) string
k8s-lists       min list_bytes_min_bytes .(list(bytes)) bytes
semver          minor semver_minor .(kubernetes.Semver) int
authz           name resourcecheck_name .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
authz           namespace resourcecheck_namespace .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
optional        optional.none optional_none () optional_type(<V>)
optional        optional.of optional_of (<V>) optional_type(<V>)
optional        optional.ofNonZeroValue optional_ofNonZeroValue (<V>) optional_type(<V>)
optional        optional.unwrap optional_unwrap (list(optional_type(<V>))) list(<V>)
optional        or optional_or_optional .(optional_type(<V>), optional_type(<V>)) optional_type(<V>)
optional        orValue optional_orValue_value .(optional_type(<V>), <V>) <V>
semver          patch semver_patch .(kubernetes.Semver) int
authz           path authorizer_path .(kubernetes.authorization.Authorizer, string) kubernetes.authorization.PathCheck
cidr            prefixLength cidr_prefix_length .(net.CIDR) int
quantity        quantity string_to_quantity (string) kubernetes.Quantity
authz           reason decision_reason .(kubernetes.authorization.Decision) string
strings         replace string_replace_string_string .(string, string, string) string
strings         replace string_replace_string_string_int .(string, string, string, int) string
authz           resource groupcheck_resource .(kubernetes.authorization.GroupCheck, string) kubernetes.authorization.ResourceCheck
lists           reverse list_reverse .(list(<T>)) list(<T>)
semver          semver string_to_semver (string) kubernetes.Semver
semver          semver string_bool_to_semver (string, bool) kubernetes.Semver
authz           serviceAccount authorizer_serviceaccount .(kubernetes.authorization.Authorizer, string, string) kubernetes.authorization.Authorizer
sets            sets.contains list_sets_contains_list (list(<T>), list(<T>)) bool
sets            sets.equivalent list_sets_equivalent_list (list(<T>), list(<T>)) bool
sets            sets.intersects list_sets_intersects_list (list(<T>), list(<T>)) bool
quantity        sign quantity_sign (kubernetes.Quantity) int
std             size size_bytes (bytes) int
std             size bytes_size .(bytes) int
std             size size_list (list(<A>)) int
std             size list_size .(list(<A>)) int
std             size size_map (map(<A>, <B>)) int
std             size map_size .(map(<A>, <B>)) int
std             size size_string (string) int
std             size string_size .(string) int
lists           slice list_slice .(list(<T>), int, int) list(<T>)
lists           sort list_int_sort .(list(int)) list(int)
lists           sort list_uint_sort .(list(uint)) list(uint)
lists           sort list_double_sort .(list(double)) list(double)
lists           sort list_bool_sort .(list(bool)) list(bool)
lists           sort list_google.protobuf.Duration_sort .(list(google.protobuf.Duration)) list(google.protobuf.Duration)
lists           sort list_google.protobuf.Timestamp_sort .(list(google.protobuf.Timestamp)) list(google.protobuf.Timestamp)
lists           sort list_string_sort .(list(string)) list(string)
lists           sort list_bytes_sort .(list(bytes)) list(bytes)
strings         split string_split_string .(string, string) list(string)
strings         split string_split_string_int .(string, string, int) list(string)
std             startsWith starts_with_string .(string, string) bool
std             string string_to_string (string) string
std             string bool_to_string (bool) string
std             string bytes_to_string (bytes) string
std             string double_to_string (double) string
std             string duration_to_string (google.protobuf.Duration) string
std             string int64_to_string (int) string
std             string timestamp_to_string (google.protobuf.Timestamp) string
std             string uint64_to_string (uint) string
ip              string ip_to_string (net.IP) string
cidr            string cidr_to_string (net.CIDR) string
strings-v2      strings.quote strings_quote (string) string
quantity        sub quantity_sub .(kubernetes.Quantity, kubernetes.Quantity) kubernetes.Quantity
quantity        sub quantity_sub_int .(kubernetes.Quantity, int) kubernetes.Quantity
authz           subresource resourcecheck_subresource .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
strings         substring string_substring_int .(string, int) string
strings         substring string_substring_int_int .(string, int, int) string
k8s-lists       sum list_int_sum_int .(list(int)) int
k8s-lists       sum list_uint_sum_uint .(list(uint)) uint
k8s-lists       sum list_double_sum_double .(list(double)) double
k8s-lists       sum list_duration_sum_duration .(list(google.protobuf.Duration)) google.protobuf.Duration
std             timestamp timestamp_to_timestamp (google.protobuf.Timestamp) google.protobuf.Timestamp
std             timestamp int64_to_timestamp (int) google.protobuf.Timestamp
std             timestamp string_to_timestamp (string) google.protobuf.Timestamp
strings         trim string_trim .(string) string
std             type type (<A>) type(<A>)
std             uint uint64_to_uint64 (uint) uint
std             uint double_to_uint64 (double) uint
std             uint int64_to_uint64 (int) uint
std             uint string_to_uint64 (string) uint
optional        unwrapOpt optional_unwrapOpt .(list(optional_type(<V>))) list(<V>)
strings         upperAscii string_upper_ascii .(string) string
url             url string_to_url (string) kubernetes.URL
format          validate format-validate .(kubernetes.NamedFormat, string) optional_type(list(string))
optional        value optional_value .(optional_type(<V>)) <V>";
