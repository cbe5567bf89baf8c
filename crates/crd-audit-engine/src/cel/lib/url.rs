//! The Kubernetes URL library (`url`, `isURL`, the URL accessors): `url()` runs Go's
//! `url.ParseRequestURI` and then `url.Parse` (Go 1.25+ host rules: bracketed hosts must be
//! IPv6 literals), and `getQuery()` honours the default limit of 10000 query parameters.

use super::{ext, fail, lib_ext, text};
use crate::cel::eval::{EvalResult, owned};
use crate::cel::value::{Ext, Val};

pub use crate::go::url::Url;
use crate::go::url::{parse, parse_request_uri};

const URL_ERR_PREFIX: &str = "URL parse error during conversion from string: ";

/// `url(<string>)`: the error is the full text the evaluation reports.
pub fn parse_url(s: &str) -> Result<Url, String> {
    parse_request_uri(s).map_err(|e| format!("{URL_ERR_PREFIX}{e}"))?;
    let u = parse(s).map_err(|e| format!("{URL_ERR_PREFIX}{e}"))?;
    Ok(u)
}

/// `isURL(<string>)` (only `url.ParseRequestURI`).
pub fn is_url(s: &str) -> bool {
    parse_request_uri(s).is_ok()
}

/// The URL overload `id` applied to `a` (a receiver first).
pub fn call<'a>(id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    let u0 = match lib_ext(a, 0) {
        Some(Ext::Url(u)) => Some(u),
        _ => None,
    };
    Some(match id {
        "string_to_url" => parse_url(text(a, 0)?)
            .map(|u| ext(Ext::Url(u)))
            .or_else(fail),
        "is_url_string" => Ok(Val::Bool(is_url(text(a, 0)?))),
        "url_get_scheme" => Ok(owned(u0?.scheme())),
        "url_get_host" => Ok(owned(u0?.host())),
        "url_get_hostname" => Ok(owned(u0?.hostname())),
        "url_get_port" => Ok(owned(u0?.port())),
        "url_get_escaped_path" => Ok(owned(u0?.escaped_path())),
        "url_get_query" => {
            let entries = u0?
                .query()
                .into_iter()
                .map(|(k, vs)| {
                    let list: Vec<Val> = vs.into_iter().map(owned).collect();
                    (owned(k), Val::List(std::rc::Rc::new(list)))
                })
                .collect();
            Ok(Val::Map(std::rc::Rc::new(entries)))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parsing() {
        let err = parse_url("hTPp\\\u{8}lah").unwrap_err();
        assert_eq!(
            err,
            r#"URL parse error during conversion from string: parse "hTPp\\\blah": net/url: invalid control character in URL"#
        );
        assert!(is_url(
            "https://user:pass@example.com:80/path?query=val#fragment"
        ));
        assert!(is_url("/absolute-path"));
        assert!(!is_url("https://a:b:c/"));
        assert!(!is_url("../relative-path"));
        assert_eq!(
            parse_url("https://a:b:c/").unwrap_err(),
            r#"URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host"#
        );
        assert_eq!(
            parse_url("../relative-path").unwrap_err(),
            r#"URL parse error during conversion from string: parse "../relative-path": invalid URI for request"#
        );
        assert_eq!(
            parse_url("https://[1.2.3.4]/").unwrap_err(),
            r#"URL parse error during conversion from string: parse "https://[1.2.3.4]/": invalid IP-literal"#
        );
        assert_eq!(
            parse_url("https://example.com/%zz").unwrap_err(),
            r#"URL parse error during conversion from string: parse "https://example.com/%zz": invalid URL escape "%zz""#
        );
        assert_eq!(
            parse_url("https://a{b}/").unwrap_err(),
            r#"URL parse error during conversion from string: parse "https://a{b}/": invalid character "{" in host name"#
        );
        // ParseRequestURI passes, Parse rejects the fragment.
        assert_eq!(
            parse_url("http://h/?q#%zz").unwrap_err(),
            r#"URL parse error during conversion from string: parse "http://h/?q#%zz": invalid URL escape "%zz""#
        );
    }

    #[test]
    fn url_accessors() {
        let u = |s: &str| parse_url(s).unwrap();
        assert_eq!(u("/path").scheme(), "");
        assert_eq!(u("https://example.com/").scheme(), "https");
        assert_eq!(u("HTTPS://example.com/").scheme(), "https");
        assert_eq!(u("https://example.com:80/").host(), "example.com:80");
        assert_eq!(u("https://example.com/").host(), "example.com");
        assert_eq!(u("https://[::1]:80/").host(), "[::1]:80");
        assert_eq!(u("https://[::1]/").host(), "[::1]");
        assert_eq!(u("/path").host(), "");
        assert_eq!(u("https://example.com:80/").hostname(), "example.com");
        assert_eq!(u("https://127.0.0.1:80/").hostname(), "127.0.0.1");
        assert_eq!(u("https://[::1]:80/").hostname(), "::1");
        assert_eq!(u("https://example.com:80/").port(), "80");
        assert_eq!(u("https://example.com/").port(), "");
        assert_eq!(u("https://example.com/path").escaped_path(), "/path");
        assert_eq!(
            u("https://example.com/path with spaces/").escaped_path(),
            "/path%20with%20spaces/"
        );
        assert_eq!(u("https://example.com").escaped_path(), "");
        assert_eq!(u("https://example.com/a%2fb").escaped_path(), "/a%2fb");
        let qm = u("https://example.com/path?k1=a&k2=b&k2=c").query();
        assert_eq!(qm.get("k1"), Some(&vec!["a".to_string()]));
        assert_eq!(qm.get("k2"), Some(&vec!["b".to_string(), "c".to_string()]));
        let qm = u("https://example.com/path?key with spaces=value with spaces").query();
        assert_eq!(
            qm.get("key with spaces"),
            Some(&vec!["value with spaces".to_string()])
        );
        assert!(u("https://example.com/path?").query().is_empty());
        assert!(u("https://example.com/path").query().is_empty());
        // Parse (not ParseRequestURI) reads the authority of a scheme-relative URL.
        assert_eq!(u("//host/p").host(), "host");
    }
}
