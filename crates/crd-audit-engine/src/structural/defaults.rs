//! CRD validation of `default` values (upstream `ValidateDefaults`): a default must survive
//! pruning unchanged and must validate against the schema it sits in.
//!
//! Defaults of `apiVersion`, `kind` and `metadata` fields of a resource are checked as part of
//! the surrounding object upstream; that check is not reproduced here (such defaults are
//! forbidden at the top level anyway, see [`super::crd_schema`]).

use crate::cause::{BadValue, Cause, Path};
use crate::cel::env::Env;
use crate::schema::Props;
use crate::validate::cel_validation::CelValidator;
use crate::validate::embedded;
use crate::validate::prune::prune_value;
use crate::validate::schema_tree::Structure;
use crate::validate::schema_validator::SchemaValidator;
use serde_json::Value;

const META_FIELDS: [&str; 3] = ["metadata", "kind", "apiVersion"];

/// Checks every default in the schema rooted at `path` (the resource root); CEL rules run in
/// `env` (the server's environment of stored expressions).
pub fn check(s: &Props, path: &Path, env: Env, out: &mut Vec<Cause>) {
    node(s, path, true, false, env, out);
}

fn node(s: &Props, path: &Path, resource: bool, inside_meta: bool, env: Env, out: &mut Vec<Cause>) {
    let embedded = resource || s.x_embedded_resource;
    let inside_meta = inside_meta && !embedded;
    if let Some(default) = &s.default
        && !inside_meta
    {
        check_default(s, default, &path.child("default"), embedded, env, out);
    }
    if let Some(items) = s.items_schema() {
        node(items, &path.child("items"), false, inside_meta, env, out);
    }
    for (k, p) in &s.properties {
        let sub_meta = inside_meta || (embedded && META_FIELDS.contains(&k.as_str()));
        node(
            p,
            &path.child("properties").key(k),
            false,
            sub_meta,
            env,
            out,
        );
    }
}

/// One default (`at` is its path), of a schema that is a resource (`embedded`) or not.
fn check_default(
    s: &Props,
    default: &Value,
    at: &Path,
    embedded: bool,
    env: Env,
    out: &mut Vec<Cause>,
) {
    let mut pruned = default.clone();
    let structure = Structure::new(s);
    prune_value(&mut pruned, &structure, structure.root(), embedded);
    if pruned != *default {
        out.push(Cause::invalid(
            at.clone(),
            BadValue::Json(default.clone()),
            "must not have unknown fields",
        ));
    }
    // The embedded resources' types and metadata (the default itself is one at the root or
    // with x-kubernetes-embedded-resource), then the schema, then CEL, each only when the
    // step before found nothing.
    if let Some(c) = embedded::request_cause_at(&structure, default, at, embedded) {
        out.push(c);
        return;
    }
    let before = out.len();
    embedded::validate_at(&structure, default, at, embedded, out);
    if out.len() > before {
        return;
    }
    // Upstream validates defaults with the structural schema's OpenAPI form, in which
    // `x-kubernetes-int-or-string` implies no type.
    let mut schema = s.clone();
    clear_int_or_string(&mut schema);
    SchemaValidator::new(&schema).validate_at(default, at, out);
    // Then its CEL rules, with `oldSelf` being the default itself.
    if out.len() == before
        && let Some(cel) = CelValidator::new_in(s, env)
    {
        out.extend(cel.validate_at(default, at, true).causes);
    }
}

fn clear_int_or_string(s: &mut Props) {
    s.x_int_or_string = false;
    s.properties
        .values_mut()
        .for_each(|p| clear_int_or_string(p));
    if let Some(crate::schema::Items::Schema(item)) = &mut s.items {
        clear_int_or_string(item);
    }
    if let Some(crate::schema::SchemaOrBool::Schema(ap)) = &mut s.additional_properties {
        clear_int_or_string(ap);
    }
}
