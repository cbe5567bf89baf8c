//! The Kubernetes CEL libraries as overloads over values: URLs, IPs and CIDRs, quantities,
//! semantic versions and named formats. The dispatcher in [`super::functions`] has already
//! chosen the overload (by its id) from the runtime argument types; the value logic is in
//! [`super::k8s_lib`].

use super::eval::{EvalError, EvalResult, Interp, owned};
use super::k8s_lib as lib;
use super::value::{Ext, Val};
use std::rc::Rc;

fn ext<'a>(e: Ext) -> Val<'a> {
    Val::Ext(Rc::new(e))
}

fn fail<'a>(e: String) -> EvalResult<'a> {
    Err(EvalError::new(e))
}

fn text<'b>(v: &'b Val) -> Option<&'b str> {
    match v {
        Val::Str(s) => Some(s.as_str()),
        _ => None,
    }
}

fn lib_val<'b>(v: &'b Val) -> Option<&'b Ext> {
    match v {
        Val::Ext(e) => Some(e),
        _ => None,
    }
}

/// The overload `id` of a Kubernetes library applied to `a` (a receiver first), or `None`
/// when `id` is not one of theirs or the arguments are not of its types.
pub fn call<'a>(_it: &mut Interp, id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    let e0 = a.first().and_then(lib_val);
    let e1 = a.get(1).and_then(lib_val);
    let t0 = a.first().and_then(text);
    let t1 = a.get(1).and_then(text);
    Some(match (id, e0, e1) {
        // ---- URLs
        ("string_to_url", ..) => lib::parse_url(t0?).map(|u| ext(Ext::Url(u))).or_else(fail),
        ("is_url_string", ..) => Ok(Val::Bool(lib::is_url(t0?))),
        ("url_get_scheme", Some(Ext::Url(u)), _) => Ok(owned(u.scheme())),
        ("url_get_host", Some(Ext::Url(u)), _) => Ok(owned(u.host())),
        ("url_get_hostname", Some(Ext::Url(u)), _) => Ok(owned(u.hostname())),
        ("url_get_port", Some(Ext::Url(u)), _) => Ok(owned(u.port())),
        ("url_get_escaped_path", Some(Ext::Url(u)), _) => Ok(owned(u.escaped_path())),
        ("url_get_query", Some(Ext::Url(u)), _) => {
            let entries = u
                .query()
                .into_iter()
                .map(|(k, vs)| {
                    let list: Vec<Val> = vs.into_iter().map(owned).collect();
                    (owned(k), Val::List(Rc::new(list)))
                })
                .collect();
            Ok(Val::Map(Rc::new(entries)))
        }
        // ---- IPs
        ("string_to_ip", ..) => lib::parse_ip(t0?).map(|i| ext(Ext::Ip(i))).or_else(fail),
        ("is_ip", ..) => Ok(Val::Bool(lib::is_ip(t0?))),
        ("ip_is_canonical", ..) => lib::ip_is_canonical(t0?).map(Val::Bool).or_else(fail),
        ("ip_family", Some(Ext::Ip(ip)), _) => Ok(Val::Int(lib::family(ip))),
        ("ip_is_unspecified", Some(Ext::Ip(ip)), _) => Ok(Val::Bool(lib::is_unspecified(ip))),
        ("ip_is_loopback", Some(Ext::Ip(ip)), _) => Ok(Val::Bool(lib::is_loopback(ip))),
        ("ip_is_link_local_multicast", Some(Ext::Ip(ip)), _) => {
            Ok(Val::Bool(lib::is_link_local_multicast(ip)))
        }
        ("ip_is_link_local_unicast", Some(Ext::Ip(ip)), _) => {
            Ok(Val::Bool(lib::is_link_local_unicast(ip)))
        }
        ("ip_is_global_unicast", Some(Ext::Ip(ip)), _) => Ok(Val::Bool(lib::is_global_unicast(ip))),
        ("ip_to_string", Some(Ext::Ip(ip)), _) => Ok(owned(lib::ip_to_string(ip))),
        // ---- CIDRs
        ("string_to_cidr", ..) => lib::parse_cidr(t0?)
            .map(|c| ext(Ext::Cidr(c)))
            .or_else(fail),
        ("is_cidr", ..) => Ok(Val::Bool(lib::is_cidr(t0?))),
        ("cidr_to_string", Some(Ext::Cidr(c)), _) => Ok(owned(c.to_string())),
        ("cidr_ip", Some(Ext::Cidr(c)), _) => Ok(ext(Ext::Ip(c.ip()))),
        ("cidr_masked", Some(Ext::Cidr(c)), _) => Ok(ext(Ext::Cidr(c.masked()))),
        ("cidr_prefix_length", Some(Ext::Cidr(c)), _) => Ok(Val::Int(c.prefix_length())),
        ("cidr_contains_ip_string", Some(Ext::Cidr(c)), _) => {
            c.contains_ip_str(t1?).map(Val::Bool).or_else(fail)
        }
        ("cidr_contains_ip_ip", Some(Ext::Cidr(c)), Some(Ext::Ip(ip))) => {
            Ok(Val::Bool(c.contains_ip(ip)))
        }
        ("cidr_contains_cidr_string", Some(Ext::Cidr(c)), _) => {
            c.contains_cidr_str(t1?).map(Val::Bool).or_else(fail)
        }
        ("cidr_contains_cidr", Some(Ext::Cidr(c)), Some(Ext::Cidr(o))) => {
            Ok(Val::Bool(c.contains_cidr(o)))
        }
        // ---- quantities
        ("string_to_quantity", ..) => lib::parse_quantity(t0?)
            .map(|q| ext(Ext::Quantity(q)))
            .or_else(fail),
        ("is_quantity_string", ..) => Ok(Val::Bool(lib::is_quantity(t0?))),
        ("quantity_sign", Some(Ext::Quantity(q)), _) => Ok(Val::Int(q.sign())),
        ("quantity_is_integer", Some(Ext::Quantity(q)), _) => Ok(Val::Bool(q.is_integer())),
        ("quantity_get_int", Some(Ext::Quantity(q)), _) => {
            q.as_integer().map(Val::Int).or_else(fail)
        }
        ("quantity_get_float", Some(Ext::Quantity(q)), _) => {
            Ok(Val::Double(q.as_approximate_float()))
        }
        ("quantity_is_less_than", Some(Ext::Quantity(q)), Some(Ext::Quantity(o))) => {
            Ok(Val::Bool(q.compare(o).is_lt()))
        }
        ("quantity_is_greater_than", Some(Ext::Quantity(q)), Some(Ext::Quantity(o))) => {
            Ok(Val::Bool(q.compare(o).is_gt()))
        }
        ("quantity_compare_to", Some(Ext::Quantity(q)), Some(Ext::Quantity(o))) => {
            Ok(Val::Int(q.compare(o) as i64))
        }
        ("quantity_add", Some(Ext::Quantity(q)), Some(Ext::Quantity(o))) => {
            q.add(o).map(|q| ext(Ext::Quantity(q))).or_else(fail)
        }
        ("quantity_sub", Some(Ext::Quantity(q)), Some(Ext::Quantity(o))) => {
            q.sub(o).map(|q| ext(Ext::Quantity(q))).or_else(fail)
        }
        ("quantity_add_int" | "quantity_sub_int", Some(Ext::Quantity(q)), _) => {
            let Some(Val::Int(i)) = a.get(1) else {
                return None;
            };
            let r = if id == "quantity_add_int" {
                q.add_int(*i)
            } else {
                q.sub_int(*i)
            };
            r.map(|q| ext(Ext::Quantity(q))).or_else(fail)
        }
        // ---- semantic versions
        ("string_to_semver" | "string_bool_to_semver", ..) => {
            let normalize = matches!(a.get(1), Some(Val::Bool(true)));
            lib::parse_semver(t0?, normalize)
                .map(|v| ext(Ext::Semver(v)))
                .or_else(fail)
        }
        ("is_semver_string" | "is_semver_string_bool", ..) => {
            let normalize = matches!(a.get(1), Some(Val::Bool(true)));
            Ok(Val::Bool(lib::is_semver(t0?, normalize)))
        }
        ("semver_major", Some(Ext::Semver(v)), _) => Ok(Val::Int(v.major())),
        ("semver_minor", Some(Ext::Semver(v)), _) => Ok(Val::Int(v.minor())),
        ("semver_patch", Some(Ext::Semver(v)), _) => Ok(Val::Int(v.patch())),
        ("semver_is_less_than", Some(Ext::Semver(v)), Some(Ext::Semver(o))) => {
            Ok(Val::Bool(v.compare(o).is_lt()))
        }
        ("semver_is_greater_than", Some(Ext::Semver(v)), Some(Ext::Semver(o))) => {
            Ok(Val::Bool(v.compare(o).is_gt()))
        }
        ("semver_compare_to", Some(Ext::Semver(v)), Some(Ext::Semver(o))) => {
            Ok(Val::Int(v.compare(o) as i64))
        }
        // ---- named formats
        ("format-named", ..) => {
            let name = t0?;
            Ok(if lib::format_names().contains(&name) {
                Val::Optional(Some(Rc::new(ext(Ext::Format(name.to_string())))))
            } else {
                Val::Optional(None)
            })
        }
        ("format-validate", Some(Ext::Format(name)), _) => {
            Ok(match lib::format_validate(name, t1?) {
                None => Val::Optional(None),
                Some(errs) => Val::Optional(Some(Rc::new(Val::List(Rc::new(
                    errs.into_iter().map(owned).collect(),
                ))))),
            })
        }
        (name, ..) if name.starts_with("format.") => {
            let n = &name["format.".len()..];
            if !lib::format_names().contains(&n) {
                return None;
            }
            Ok(ext(Ext::Format(n.to_string())))
        }
        _ => return None,
    })
}
