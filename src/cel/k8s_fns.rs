//! The Kubernetes CEL libraries as functions over values: URLs (`url`, `isURL`,
//! `getScheme`...), IPs and CIDRs, quantities, semantic versions and named formats. The
//! value logic is in [`super::k8s_lib`].

use super::eval::{EvalError, EvalResult, Interp, owned};
use super::k8s_lib as lib;
use super::value::{Ext, Val};
use std::rc::Rc;

fn ext<'a>(e: Ext) -> Val<'a> {
    Val::Ext(Rc::new(e))
}

fn err<'a>(e: String) -> EvalResult<'a> {
    Err(EvalError::new(e))
}

fn quantity_arg(v: &Val) -> Option<lib::Quantity> {
    match v {
        Val::Ext(e) => match &**e {
            Ext::Quantity(q) => Some(q.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The Kubernetes library function `f`, or `None` when it is not one.
pub fn call<'a>(
    _it: &mut Interp,
    f: &str,
    target: Option<&Val<'a>>,
    args: &[Val<'a>],
) -> Option<EvalResult<'a>> {
    let text = |v: &Val| match v {
        Val::Str(s) => Some(s.as_str().to_string()),
        _ => None,
    };
    let target_ext = target.and_then(|t| match t {
        Val::Ext(e) => Some(e.clone()),
        _ => None,
    });
    Some(match (f, target_ext.as_deref(), args) {
        // Constructors and tests.
        ("url", None, [s]) if target.is_none() => match text(s) {
            Some(s) => lib::parse_url(&s).map(|u| ext(Ext::Url(u))).or_else(err),
            None => return None,
        },
        ("isURL", None, [s]) if target.is_none() => Ok(Val::Bool(lib::is_url(&text(s)?))),
        ("ip", None, [s]) if target.is_none() => match text(s) {
            Some(s) => lib::parse_ip(&s).map(|i| ext(Ext::Ip(i))).or_else(err),
            None => return None,
        },
        ("isIP", None, [s]) if target.is_none() => Ok(Val::Bool(lib::is_ip(&text(s)?))),
        ("ip.isCanonical", None, [s]) => {
            lib::ip_is_canonical(&text(s)?).map(Val::Bool).or_else(err)
        }
        ("cidr", None, [s]) if target.is_none() => match text(s) {
            Some(s) => lib::parse_cidr(&s).map(|c| ext(Ext::Cidr(c))).or_else(err),
            None => return None,
        },
        ("isCIDR", None, [s]) if target.is_none() => Ok(Val::Bool(lib::is_cidr(&text(s)?))),
        ("quantity", None, [s]) if target.is_none() => match text(s) {
            Some(s) => lib::parse_quantity(&s)
                .map(|q| ext(Ext::Quantity(q)))
                .or_else(err),
            None => return None,
        },
        ("isQuantity", None, [s]) if target.is_none() => Ok(Val::Bool(lib::is_quantity(&text(s)?))),
        ("semver", None, [s, rest @ ..]) if target.is_none() => {
            let normalize = matches!(rest, [Val::Bool(true)]);
            match text(s) {
                Some(s) => lib::parse_semver(&s, normalize)
                    .map(|v| ext(Ext::Semver(v)))
                    .or_else(err),
                None => return None,
            }
        }
        ("isSemver", None, [s, rest @ ..]) if target.is_none() => {
            let normalize = matches!(rest, [Val::Bool(true)]);
            Ok(Val::Bool(lib::is_semver(&text(s)?, normalize)))
        }
        // URLs.
        ("getScheme", Some(Ext::Url(u)), []) => Ok(owned(u.scheme())),
        ("getHost", Some(Ext::Url(u)), []) => Ok(owned(u.host())),
        ("getHostname", Some(Ext::Url(u)), []) => Ok(owned(u.hostname())),
        ("getPort", Some(Ext::Url(u)), []) => Ok(owned(u.port())),
        ("getEscapedPath", Some(Ext::Url(u)), []) => Ok(owned(u.escaped_path())),
        ("getQuery", Some(Ext::Url(u)), []) => {
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
        // IPs and CIDRs.
        ("family", Some(Ext::Ip(ip)), []) => Ok(Val::Int(lib::family(ip))),
        ("isUnspecified", Some(Ext::Ip(ip)), []) => Ok(Val::Bool(lib::is_unspecified(ip))),
        ("isLoopback", Some(Ext::Ip(ip)), []) => Ok(Val::Bool(lib::is_loopback(ip))),
        ("isLinkLocalMulticast", Some(Ext::Ip(ip)), []) => {
            Ok(Val::Bool(lib::is_link_local_multicast(ip)))
        }
        ("isLinkLocalUnicast", Some(Ext::Ip(ip)), []) => {
            Ok(Val::Bool(lib::is_link_local_unicast(ip)))
        }
        ("isGlobalUnicast", Some(Ext::Ip(ip)), []) => Ok(Val::Bool(lib::is_global_unicast(ip))),
        ("string", None, [Val::Ext(e)]) => match &**e {
            Ext::Ip(ip) => Ok(owned(lib::ip_to_string(ip))),
            Ext::Cidr(c) => Ok(owned(c.to_string())),
            Ext::Quantity(q) => Ok(owned(q.to_string())),
            Ext::Semver(v) => Ok(owned(v.to_string())),
            _ => return None,
        },
        ("prefixLength", Some(Ext::Cidr(c)), []) => Ok(Val::Int(c.prefix_length())),
        ("ip", Some(Ext::Cidr(c)), []) => Ok(ext(Ext::Ip(c.ip()))),
        ("masked", Some(Ext::Cidr(c)), []) => Ok(ext(Ext::Cidr(c.masked()))),
        ("containsIP", Some(Ext::Cidr(c)), [arg]) => match arg {
            Val::Str(s) => c.contains_ip_str(s.as_str()).map(Val::Bool).or_else(err),
            Val::Ext(e) => match &**e {
                Ext::Ip(ip) => Ok(Val::Bool(c.contains_ip(ip))),
                _ => return None,
            },
            _ => return None,
        },
        ("containsCIDR", Some(Ext::Cidr(c)), [arg]) => match arg {
            Val::Str(s) => c.contains_cidr_str(s.as_str()).map(Val::Bool).or_else(err),
            Val::Ext(e) => match &**e {
                Ext::Cidr(o) => Ok(Val::Bool(c.contains_cidr(o))),
                _ => return None,
            },
            _ => return None,
        },
        // Quantities.
        ("isLessThan", Some(Ext::Quantity(q)), [o]) => {
            Ok(Val::Bool(q.compare(&quantity_arg(o)?).is_lt()))
        }
        ("isGreaterThan", Some(Ext::Quantity(q)), [o]) => {
            Ok(Val::Bool(q.compare(&quantity_arg(o)?).is_gt()))
        }
        ("compareTo", Some(Ext::Quantity(q)), [o]) => {
            Ok(Val::Int(q.compare(&quantity_arg(o)?) as i64))
        }
        ("sign", Some(Ext::Quantity(q)), []) => Ok(Val::Int(q.sign())),
        ("isInteger", Some(Ext::Quantity(q)), []) => Ok(Val::Bool(q.is_integer())),
        ("asInteger", Some(Ext::Quantity(q)), []) => q.as_integer().map(Val::Int).or_else(err),
        ("asApproximateFloat", Some(Ext::Quantity(q)), []) => {
            Ok(Val::Double(q.as_approximate_float()))
        }
        ("add" | "sub", Some(Ext::Quantity(q)), [o]) => {
            let r = match (f, o) {
                ("add", Val::Int(i)) => q.add_int(*i),
                ("sub", Val::Int(i)) => q.sub_int(*i),
                ("add", other) => q.add(&quantity_arg(other)?),
                (_, other) => q.sub(&quantity_arg(other)?),
            };
            r.map(|q| ext(Ext::Quantity(q))).or_else(err)
        }
        // Semantic versions.
        ("major", Some(Ext::Semver(v)), []) => Ok(Val::Int(v.major())),
        ("minor", Some(Ext::Semver(v)), []) => Ok(Val::Int(v.minor())),
        ("patch", Some(Ext::Semver(v)), []) => Ok(Val::Int(v.patch())),
        ("isLessThan" | "isGreaterThan" | "compareTo", Some(Ext::Semver(v)), [o]) => {
            let Val::Ext(oe) = o else { return None };
            let Ext::Semver(ov) = &**oe else { return None };
            let c = v.compare(ov);
            Ok(match f {
                "isLessThan" => Val::Bool(c.is_lt()),
                "isGreaterThan" => Val::Bool(c.is_gt()),
                _ => Val::Int(c as i64),
            })
        }
        // Named formats: format.dns1123Label(), format.named("...").
        ("format.named", None, [s]) => {
            let name = text(s)?;
            Ok(if lib::format_names().contains(&name.as_str()) {
                Val::Optional(Some(Rc::new(ext(Ext::Format(name)))))
            } else {
                Val::Optional(None)
            })
        }
        (name, None, []) if name.starts_with("format.") => {
            let n = &name["format.".len()..];
            if !lib::format_names().contains(&n) {
                return None;
            }
            Ok(ext(Ext::Format(n.to_string())))
        }
        ("validate", Some(Ext::Format(name)), [s]) => {
            let s = text(s)?;
            Ok(match lib::format_validate(name, &s) {
                None => Val::Optional(None),
                Some(errs) => Val::Optional(Some(Rc::new(Val::List(Rc::new(
                    errs.into_iter().map(owned).collect(),
                ))))),
            })
        }
        _ => return None,
    })
}
