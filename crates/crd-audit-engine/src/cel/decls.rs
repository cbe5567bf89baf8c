//! The CEL types of the type checker and the function declarations of the Kubernetes 1.36
//! CEL environment (cel-go's standard library, the strings (v2), sets, lists (v3), optional
//! and two-variable comprehension extensions, and the Kubernetes libraries).

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
    pub member: bool,
    pub args: Vec<CelType>,
    pub result: CelType,
    /// The type parameters of the signature.
    pub params: Vec<Rc<str>>,
}

/// The declarations, by function name, overloads in declaration order.
pub fn functions() -> &'static HashMap<&'static str, Vec<Overload>> {
    static TABLE: OnceLock<HashMap<&'static str, Vec<Overload>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map: HashMap<&'static str, Vec<Overload>> = HashMap::new();
        for line in DECLARATIONS.lines() {
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
                member,
                args,
                result,
                params,
            });
        }
        map
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

/// Every overload of the environment: `function overload_id [.](arg types) result type`
/// (`.` marks receiver-style overloads, whose first type is the receiver's), in cel-go's
/// declaration order.
const DECLARATIONS: &str = "!_ logical_not (bool) bool
-_ negate_double (double) double
-_ negate_int64 (int) int
@in in_list (<A>, list(<A>)) bool
@in in_map (<A>, map(<A>, <B>)) bool
@not_strictly_false not_strictly_false (bool) bool
@sortByAssociatedKeys list_int_sortByAssociatedKeys .(list(<T>), list(int)) list(<T>)
@sortByAssociatedKeys list_uint_sortByAssociatedKeys .(list(<T>), list(uint)) list(<T>)
@sortByAssociatedKeys list_double_sortByAssociatedKeys .(list(<T>), list(double)) list(<T>)
@sortByAssociatedKeys list_bool_sortByAssociatedKeys .(list(<T>), list(bool)) list(<T>)
@sortByAssociatedKeys list_google.protobuf.Duration_sortByAssociatedKeys .(list(<T>), list(google.protobuf.Duration)) list(<T>)
@sortByAssociatedKeys list_google.protobuf.Timestamp_sortByAssociatedKeys .(list(<T>), list(google.protobuf.Timestamp)) list(<T>)
@sortByAssociatedKeys list_string_sortByAssociatedKeys .(list(<T>), list(string)) list(<T>)
@sortByAssociatedKeys list_bytes_sortByAssociatedKeys .(list(<T>), list(bytes)) list(<T>)
_!=_ not_equals (<A>, <A>) bool
_%_ modulo_int64 (int, int) int
_%_ modulo_uint64 (uint, uint) uint
_&&_ logical_and (bool, bool) bool
_*_ multiply_double (double, double) double
_*_ multiply_int64 (int, int) int
_*_ multiply_uint64 (uint, uint) uint
_+_ add_bytes (bytes, bytes) bytes
_+_ add_double (double, double) double
_+_ add_duration_duration (google.protobuf.Duration, google.protobuf.Duration) google.protobuf.Duration
_+_ add_duration_timestamp (google.protobuf.Duration, google.protobuf.Timestamp) google.protobuf.Timestamp
_+_ add_timestamp_duration (google.protobuf.Timestamp, google.protobuf.Duration) google.protobuf.Timestamp
_+_ add_int64 (int, int) int
_+_ add_list (list(<A>), list(<A>)) list(<A>)
_+_ add_string (string, string) string
_+_ add_uint64 (uint, uint) uint
_-_ subtract_double (double, double) double
_-_ subtract_duration_duration (google.protobuf.Duration, google.protobuf.Duration) google.protobuf.Duration
_-_ subtract_int64 (int, int) int
_-_ subtract_timestamp_duration (google.protobuf.Timestamp, google.protobuf.Duration) google.protobuf.Timestamp
_-_ subtract_timestamp_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) google.protobuf.Duration
_-_ subtract_uint64 (uint, uint) uint
_/_ divide_double (double, double) double
_/_ divide_int64 (int, int) int
_/_ divide_uint64 (uint, uint) uint
_<=_ less_equals_bool (bool, bool) bool
_<=_ less_equals_int64 (int, int) bool
_<=_ less_equals_int64_double (int, double) bool
_<=_ less_equals_int64_uint64 (int, uint) bool
_<=_ less_equals_uint64 (uint, uint) bool
_<=_ less_equals_uint64_double (uint, double) bool
_<=_ less_equals_uint64_int64 (uint, int) bool
_<=_ less_equals_double (double, double) bool
_<=_ less_equals_double_int64 (double, int) bool
_<=_ less_equals_double_uint64 (double, uint) bool
_<=_ less_equals_string (string, string) bool
_<=_ less_equals_bytes (bytes, bytes) bool
_<=_ less_equals_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) bool
_<=_ less_equals_duration (google.protobuf.Duration, google.protobuf.Duration) bool
_<_ less_bool (bool, bool) bool
_<_ less_int64 (int, int) bool
_<_ less_int64_double (int, double) bool
_<_ less_int64_uint64 (int, uint) bool
_<_ less_uint64 (uint, uint) bool
_<_ less_uint64_double (uint, double) bool
_<_ less_uint64_int64 (uint, int) bool
_<_ less_double (double, double) bool
_<_ less_double_int64 (double, int) bool
_<_ less_double_uint64 (double, uint) bool
_<_ less_string (string, string) bool
_<_ less_bytes (bytes, bytes) bool
_<_ less_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) bool
_<_ less_duration (google.protobuf.Duration, google.protobuf.Duration) bool
_==_ equals (<A>, <A>) bool
_>=_ greater_equals_bool (bool, bool) bool
_>=_ greater_equals_int64 (int, int) bool
_>=_ greater_equals_int64_double (int, double) bool
_>=_ greater_equals_int64_uint64 (int, uint) bool
_>=_ greater_equals_uint64 (uint, uint) bool
_>=_ greater_equals_uint64_double (uint, double) bool
_>=_ greater_equals_uint64_int64 (uint, int) bool
_>=_ greater_equals_double (double, double) bool
_>=_ greater_equals_double_int64 (double, int) bool
_>=_ greater_equals_double_uint64 (double, uint) bool
_>=_ greater_equals_string (string, string) bool
_>=_ greater_equals_bytes (bytes, bytes) bool
_>=_ greater_equals_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) bool
_>=_ greater_equals_duration (google.protobuf.Duration, google.protobuf.Duration) bool
_>_ greater_bool (bool, bool) bool
_>_ greater_int64 (int, int) bool
_>_ greater_int64_double (int, double) bool
_>_ greater_int64_uint64 (int, uint) bool
_>_ greater_uint64 (uint, uint) bool
_>_ greater_uint64_double (uint, double) bool
_>_ greater_uint64_int64 (uint, int) bool
_>_ greater_double (double, double) bool
_>_ greater_double_int64 (double, int) bool
_>_ greater_double_uint64 (double, uint) bool
_>_ greater_string (string, string) bool
_>_ greater_bytes (bytes, bytes) bool
_>_ greater_timestamp (google.protobuf.Timestamp, google.protobuf.Timestamp) bool
_>_ greater_duration (google.protobuf.Duration, google.protobuf.Duration) bool
_?._ select_optional_field (dyn, string) optional_type(<V>)
_?_:_ conditional (bool, <A>, <A>) <A>
_[?_] list_optindex_optional_int (list(<V>), int) optional_type(<V>)
_[?_] optional_list_optindex_optional_int (optional_type(list(<V>)), int) optional_type(<V>)
_[?_] map_optindex_optional_value (map(<K>, <V>), <K>) optional_type(<V>)
_[?_] optional_map_optindex_optional_value (optional_type(map(<K>, <V>)), <K>) optional_type(<V>)
_[_] index_list (list(<A>), int) <A>
_[_] index_map (map(<A>, <B>), <A>) <B>
_[_] optional_list_index_int (optional_type(list(<V>)), int) optional_type(<V>)
_[_] optional_map_index_value (optional_type(map(<K>, <V>)), <K>) optional_type(<V>)
_||_ logical_or (bool, bool) bool
add quantity_add .(kubernetes.Quantity, kubernetes.Quantity) kubernetes.Quantity
add quantity_add_int .(kubernetes.Quantity, int) kubernetes.Quantity
allowed decision_allowed .(kubernetes.authorization.Decision) bool
asApproximateFloat quantity_get_float .(kubernetes.Quantity) double
asInteger quantity_get_int .(kubernetes.Quantity) int
bool bool_to_bool (bool) bool
bool string_to_bool (string) bool
bytes bytes_to_bytes (bytes) bytes
bytes string_to_bytes (string) bytes
cel.@mapInsert @mapInsert_map_key_value (map(<K>, <V>), <K>, <V>) map(<K>, <V>)
cel.@mapInsert @mapInsert_map_map (map(<K>, <V>), map(<K>, <V>)) map(<K>, <V>)
charAt string_char_at_int .(string, int) string
check pathcheck_check .(kubernetes.authorization.PathCheck, string) kubernetes.authorization.Decision
check resourcecheck_check .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.Decision
cidr string_to_cidr (string) net.CIDR
compareTo quantity_compare_to .(kubernetes.Quantity, kubernetes.Quantity) int
compareTo semver_compare_to .(kubernetes.Semver, kubernetes.Semver) int
contains contains_string .(string, string) bool
containsCIDR cidr_contains_cidr_string .(net.CIDR, string) bool
containsCIDR cidr_contains_cidr .(net.CIDR, net.CIDR) bool
containsIP cidr_contains_ip_string .(net.CIDR, string) bool
containsIP cidr_contains_ip_ip .(net.CIDR, net.IP) bool
distinct list_distinct .(list(<T>)) list(<T>)
double double_to_double (double) double
double int64_to_double (int) double
double string_to_double (string) double
double uint64_to_double (uint) double
duration duration_to_duration (google.protobuf.Duration) google.protobuf.Duration
duration string_to_duration (string) google.protobuf.Duration
dyn to_dyn (<A>) dyn
endsWith ends_with_string .(string, string) bool
error decision_error .(kubernetes.authorization.Decision) string
errored decision_errored .(kubernetes.authorization.Decision) bool
family ip_family .(net.IP) int
fieldSelector authorizer_fieldselector .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
find string_find_string .(string, string) string
findAll string_find_all_string .(string, string) list(string)
findAll string_find_all_string_int .(string, string, int) list(string)
first list_first .(list(<V>)) optional_type(<V>)
flatten list_flatten .(list(list(<T>))) list(<T>)
flatten list_flatten_int .(list(dyn), int) list(dyn)
format string_format .(string, list(dyn)) string
format.byte format.byte () kubernetes.NamedFormat
format.date format.date () kubernetes.NamedFormat
format.datetime format.datetime () kubernetes.NamedFormat
format.dns1035Label format.dns1035Label () kubernetes.NamedFormat
format.dns1035LabelPrefix format.dns1035LabelPrefix () kubernetes.NamedFormat
format.dns1123Label format.dns1123Label () kubernetes.NamedFormat
format.dns1123LabelPrefix format.dns1123LabelPrefix () kubernetes.NamedFormat
format.dns1123Subdomain format.dns1123Subdomain () kubernetes.NamedFormat
format.dns1123SubdomainPrefix format.dns1123SubdomainPrefix () kubernetes.NamedFormat
format.labelValue format.labelValue () kubernetes.NamedFormat
format.named format-named (string) optional_type(kubernetes.NamedFormat)
format.qualifiedName format.qualifiedName () kubernetes.NamedFormat
format.uri format.uri () kubernetes.NamedFormat
format.uuid format.uuid () kubernetes.NamedFormat
getDate timestamp_to_day_of_month_1_based .(google.protobuf.Timestamp) int
getDate timestamp_to_day_of_month_1_based_with_tz .(google.protobuf.Timestamp, string) int
getDayOfMonth timestamp_to_day_of_month .(google.protobuf.Timestamp) int
getDayOfMonth timestamp_to_day_of_month_with_tz .(google.protobuf.Timestamp, string) int
getDayOfWeek timestamp_to_day_of_week .(google.protobuf.Timestamp) int
getDayOfWeek timestamp_to_day_of_week_with_tz .(google.protobuf.Timestamp, string) int
getDayOfYear timestamp_to_day_of_year .(google.protobuf.Timestamp) int
getDayOfYear timestamp_to_day_of_year_with_tz .(google.protobuf.Timestamp, string) int
getEscapedPath url_get_escaped_path .(kubernetes.URL) string
getFullYear timestamp_to_year .(google.protobuf.Timestamp) int
getFullYear timestamp_to_year_with_tz .(google.protobuf.Timestamp, string) int
getHost url_get_host .(kubernetes.URL) string
getHostname url_get_hostname .(kubernetes.URL) string
getHours timestamp_to_hours .(google.protobuf.Timestamp) int
getHours timestamp_to_hours_with_tz .(google.protobuf.Timestamp, string) int
getHours duration_to_hours .(google.protobuf.Duration) int
getMilliseconds timestamp_to_milliseconds .(google.protobuf.Timestamp) int
getMilliseconds timestamp_to_milliseconds_with_tz .(google.protobuf.Timestamp, string) int
getMilliseconds duration_to_milliseconds .(google.protobuf.Duration) int
getMinutes timestamp_to_minutes .(google.protobuf.Timestamp) int
getMinutes timestamp_to_minutes_with_tz .(google.protobuf.Timestamp, string) int
getMinutes duration_to_minutes .(google.protobuf.Duration) int
getMonth timestamp_to_month .(google.protobuf.Timestamp) int
getMonth timestamp_to_month_with_tz .(google.protobuf.Timestamp, string) int
getPort url_get_port .(kubernetes.URL) string
getQuery url_get_query .(kubernetes.URL) map(string, list(string))
getScheme url_get_scheme .(kubernetes.URL) string
getSeconds timestamp_to_seconds .(google.protobuf.Timestamp) int
getSeconds timestamp_to_seconds_tz .(google.protobuf.Timestamp, string) int
getSeconds duration_to_seconds .(google.protobuf.Duration) int
group authorizer_group .(kubernetes.authorization.Authorizer, string) kubernetes.authorization.GroupCheck
hasValue optional_hasValue .(optional_type(<V>)) bool
indexOf list_a_index_of_int .(list(<A>), <A>) int
indexOf string_index_of_string .(string, string) int
indexOf string_index_of_string_int .(string, string, int) int
int int64_to_int64 (int) int
int double_to_int64 (double) int
int duration_to_int64 (google.protobuf.Duration) int
int string_to_int64 (string) int
int timestamp_to_int64 (google.protobuf.Timestamp) int
int uint64_to_int64 (uint) int
ip string_to_ip (string) net.IP
ip cidr_ip .(net.CIDR) net.IP
ip.isCanonical ip_is_canonical (string) bool
isCIDR is_cidr (string) bool
isGlobalUnicast ip_is_global_unicast .(net.IP) bool
isGreaterThan quantity_is_greater_than .(kubernetes.Quantity, kubernetes.Quantity) bool
isGreaterThan semver_is_greater_than .(kubernetes.Semver, kubernetes.Semver) bool
isIP is_ip (string) bool
isInteger quantity_is_integer .(kubernetes.Quantity) bool
isLessThan quantity_is_less_than .(kubernetes.Quantity, kubernetes.Quantity) bool
isLessThan semver_is_less_than .(kubernetes.Semver, kubernetes.Semver) bool
isLinkLocalMulticast ip_is_link_local_multicast .(net.IP) bool
isLinkLocalUnicast ip_is_link_local_unicast .(net.IP) bool
isLoopback ip_is_loopback .(net.IP) bool
isQuantity is_quantity_string (string) bool
isSemver is_semver_string (string) bool
isSemver is_semver_string_bool (string, bool) bool
isSorted list_int_is_sorted_bool .(list(int)) bool
isSorted list_uint_is_sorted_bool .(list(uint)) bool
isSorted list_double_is_sorted_bool .(list(double)) bool
isSorted list_bool_is_sorted_bool .(list(bool)) bool
isSorted list_duration_is_sorted_bool .(list(google.protobuf.Duration)) bool
isSorted list_timestamp_is_sorted_bool .(list(google.protobuf.Timestamp)) bool
isSorted list_string_is_sorted_bool .(list(string)) bool
isSorted list_bytes_is_sorted_bool .(list(bytes)) bool
isURL is_url_string (string) bool
isUnspecified ip_is_unspecified .(net.IP) bool
join list_join .(list(string)) string
join list_join_string .(list(string), string) string
labelSelector authorizer_labelselector .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
last list_last .(list(<V>)) optional_type(<V>)
lastIndexOf list_a_last_index_of_int .(list(<A>), <A>) int
lastIndexOf string_last_index_of_string .(string, string) int
lastIndexOf string_last_index_of_string_int .(string, string, int) int
lists.range lists_range (int) list(int)
lowerAscii string_lower_ascii .(string) string
major semver_major .(kubernetes.Semver) int
masked cidr_masked .(net.CIDR) net.CIDR
matches matches (string, string) bool
matches matches_string .(string, string) bool
max list_int_max_int .(list(int)) int
max list_uint_max_uint .(list(uint)) uint
max list_double_max_double .(list(double)) double
max list_bool_max_bool .(list(bool)) bool
max list_duration_max_duration .(list(google.protobuf.Duration)) google.protobuf.Duration
max list_timestamp_max_timestamp .(list(google.protobuf.Timestamp)) google.protobuf.Timestamp
max list_string_max_string .(list(string)) string
max list_bytes_max_bytes .(list(bytes)) bytes
min list_int_min_int .(list(int)) int
min list_uint_min_uint .(list(uint)) uint
min list_double_min_double .(list(double)) double
min list_bool_min_bool .(list(bool)) bool
min list_duration_min_duration .(list(google.protobuf.Duration)) google.protobuf.Duration
min list_timestamp_min_timestamp .(list(google.protobuf.Timestamp)) google.protobuf.Timestamp
min list_string_min_string .(list(string)) string
min list_bytes_min_bytes .(list(bytes)) bytes
minor semver_minor .(kubernetes.Semver) int
name resourcecheck_name .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
namespace resourcecheck_namespace .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
optional.none optional_none () optional_type(<V>)
optional.of optional_of (<V>) optional_type(<V>)
optional.ofNonZeroValue optional_ofNonZeroValue (<V>) optional_type(<V>)
optional.unwrap optional_unwrap (list(optional_type(<V>))) list(<V>)
or optional_or_optional .(optional_type(<V>), optional_type(<V>)) optional_type(<V>)
orValue optional_orValue_value .(optional_type(<V>), <V>) <V>
patch semver_patch .(kubernetes.Semver) int
path authorizer_path .(kubernetes.authorization.Authorizer, string) kubernetes.authorization.PathCheck
prefixLength cidr_prefix_length .(net.CIDR) int
quantity string_to_quantity (string) kubernetes.Quantity
reason decision_reason .(kubernetes.authorization.Decision) string
replace string_replace_string_string .(string, string, string) string
replace string_replace_string_string_int .(string, string, string, int) string
resource groupcheck_resource .(kubernetes.authorization.GroupCheck, string) kubernetes.authorization.ResourceCheck
reverse list_reverse .(list(<T>)) list(<T>)
semver string_to_semver (string) kubernetes.Semver
semver string_bool_to_semver (string, bool) kubernetes.Semver
serviceAccount authorizer_serviceaccount .(kubernetes.authorization.Authorizer, string, string) kubernetes.authorization.Authorizer
sets.contains list_sets_contains_list (list(<T>), list(<T>)) bool
sets.equivalent list_sets_equivalent_list (list(<T>), list(<T>)) bool
sets.intersects list_sets_intersects_list (list(<T>), list(<T>)) bool
sign quantity_sign (kubernetes.Quantity) int
size size_bytes (bytes) int
size bytes_size .(bytes) int
size size_list (list(<A>)) int
size list_size .(list(<A>)) int
size size_map (map(<A>, <B>)) int
size map_size .(map(<A>, <B>)) int
size size_string (string) int
size string_size .(string) int
slice list_slice .(list(<T>), int, int) list(<T>)
sort list_int_sort .(list(int)) list(int)
sort list_uint_sort .(list(uint)) list(uint)
sort list_double_sort .(list(double)) list(double)
sort list_bool_sort .(list(bool)) list(bool)
sort list_google.protobuf.Duration_sort .(list(google.protobuf.Duration)) list(google.protobuf.Duration)
sort list_google.protobuf.Timestamp_sort .(list(google.protobuf.Timestamp)) list(google.protobuf.Timestamp)
sort list_string_sort .(list(string)) list(string)
sort list_bytes_sort .(list(bytes)) list(bytes)
split string_split_string .(string, string) list(string)
split string_split_string_int .(string, string, int) list(string)
startsWith starts_with_string .(string, string) bool
string string_to_string (string) string
string bool_to_string (bool) string
string bytes_to_string (bytes) string
string double_to_string (double) string
string duration_to_string (google.protobuf.Duration) string
string int64_to_string (int) string
string timestamp_to_string (google.protobuf.Timestamp) string
string uint64_to_string (uint) string
string ip_to_string (net.IP) string
string cidr_to_string (net.CIDR) string
strings.quote strings_quote (string) string
sub quantity_sub .(kubernetes.Quantity, kubernetes.Quantity) kubernetes.Quantity
sub quantity_sub_int .(kubernetes.Quantity, int) kubernetes.Quantity
subresource resourcecheck_subresource .(kubernetes.authorization.ResourceCheck, string) kubernetes.authorization.ResourceCheck
substring string_substring_int .(string, int) string
substring string_substring_int_int .(string, int, int) string
sum list_int_sum_int .(list(int)) int
sum list_uint_sum_uint .(list(uint)) uint
sum list_double_sum_double .(list(double)) double
sum list_duration_sum_duration .(list(google.protobuf.Duration)) google.protobuf.Duration
timestamp timestamp_to_timestamp (google.protobuf.Timestamp) google.protobuf.Timestamp
timestamp int64_to_timestamp (int) google.protobuf.Timestamp
timestamp string_to_timestamp (string) google.protobuf.Timestamp
trim string_trim .(string) string
type type (<A>) type(<A>)
uint uint64_to_uint64 (uint) uint
uint double_to_uint64 (double) uint
uint int64_to_uint64 (int) uint
uint string_to_uint64 (string) uint
unwrapOpt optional_unwrapOpt .(list(optional_type(<V>))) list(<V>)
upperAscii string_upper_ascii .(string) string
url string_to_url (string) kubernetes.URL
validate format-validate .(kubernetes.NamedFormat, string) optional_type(list(string))
value optional_value .(optional_type(<V>)) <V>";
