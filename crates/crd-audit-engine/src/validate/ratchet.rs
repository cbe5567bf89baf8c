//! Validation ratcheting: how an UPDATE pairs the values of the new object with those of the
//! stored one, and when a value counts as unchanged. Mirrors apiserver's
//! `pkg/cel/common/equality.go` (`CorrelatedObject`) and `maplist.go`, which
//! apiextensions-apiserver's schema validator (`pkg/apiserver/validation/ratcheting.go`) and
//! CEL validator (`pkg/apiserver/schema/cel/validation.go`) both use, over the structural
//! schema:
//!
//! - a property correlates with the old object's property of the same name when both objects
//!   have it and the schema names it (in `properties`, or `additionalProperties` with a
//!   schema);
//! - an item correlates only in a list of `x-kubernetes-list-type: map`, with the first old
//!   item of the same keys; items of sets, atomic and plain lists never correlate;
//! - a value is unchanged when every key (every item of a map list) correlates and is
//!   unchanged, or, for other lists and for scalars, when it is deeply equal (an integer is
//!   never equal to a float). An object holding a key the schema does not name is never
//!   unchanged.
//!
//! An error found in a value that correlates and is unchanged is tolerated.

use crate::validate::schema_tree::{ListType, NodeId, Structure};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// A value of the new object paired with the old object's value at the same place.
#[derive(Clone, Copy)]
pub struct Correlated<'a> {
    pub st: &'a Structure,
    /// The structural schema node of the value.
    pub node: NodeId,
    pub new: &'a Value,
    pub old: &'a Value,
}

impl<'a> Correlated<'a> {
    /// The whole objects.
    pub fn root(st: &'a Structure, new: &'a Value, old: &'a Value) -> Correlated<'a> {
        Correlated {
            st,
            node: st.root(),
            new,
            old,
        }
    }

    /// `CorrelatedObject.Key`: the property `field` of both values.
    pub fn key(&self, field: &str) -> Option<Correlated<'a>> {
        let (Value::Object(new), Value::Object(old)) = (self.new, self.old) else {
            return None;
        };
        let (new, old) = (new.get(field)?, old.get(field)?);
        let n = self.st.node(self.node);
        let node = n.property(field).or(n.additional)?;
        Some(Correlated {
            st: self.st,
            node,
            new,
            old,
        })
    }

    /// The pairing of the items of a list (`None` when the value is not a list).
    pub fn items(&self) -> Option<Items<'a>> {
        let (Value::Array(new), old) = (self.new, self.old) else {
            return None;
        };
        let old = old.as_array().map(Vec::as_slice);
        let n = self.st.node(self.node);
        let keys = match &n.list_type {
            ListType::Map(keys) if !keys.is_empty() => Some(&**keys),
            _ => None,
        };
        Some(Items {
            st: self.st,
            item_node: n.items,
            keys,
            is_map_list: matches!(n.list_type, ListType::Map(_)),
            new,
            old,
            index: None,
        })
    }

    /// `CorrelatedObject.CachedDeepEqual`: whether the value is unchanged.
    pub fn unchanged(&self) -> bool {
        match (self.new, self.old) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            (Value::Array(new), Value::Array(old)) => {
                if new.len() != old.len() {
                    return false;
                }
                let Some(mut items) = self.items() else {
                    return false;
                };
                if !items.is_map_list {
                    return new == old;
                }
                (0..new.len()).all(|i| items.get(i).is_some_and(|c| c.unchanged()))
            }
            (Value::Object(new), Value::Object(old)) => {
                new.len() == old.len()
                    && new
                        .keys()
                        .all(|k| self.key(k).is_some_and(|c| c.unchanged()))
            }
            (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
                false
            }
            (new, old) => new == old,
        }
    }
}

/// The items of a new list paired with the old list's (`CorrelatedObject.Index`).
pub struct Items<'a> {
    st: &'a Structure,
    item_node: Option<NodeId>,
    keys: Option<&'a [Box<str>]>,
    is_map_list: bool,
    new: &'a [Value],
    old: Option<&'a [Value]>,
    /// The old items by key, first occurrence kept (built when first asked).
    index: Option<HashMap<ItemKey, &'a Value>>,
}

impl<'a> Items<'a> {
    /// The old item paired with new item `i`, if any.
    pub fn get(&mut self, i: usize) -> Option<Correlated<'a>> {
        let node = self.item_node?;
        let new = self.new.get(i)?;
        let old = self.old_item(new)?;
        Some(Correlated {
            st: self.st,
            node,
            new,
            old,
        })
    }

    /// `MapList.Get`: the first old item with the keys of `new` (map lists only).
    pub fn old_item(&mut self, new: &Value) -> Option<&'a Value> {
        let keys = self.keys?;
        let old = self.old?;
        let key = item_key(keys, new.as_object()?)?;
        let index = self.index.get_or_insert_with(|| {
            let mut index = HashMap::new();
            for item in old {
                if let Some(k) = item.as_object().and_then(|m| item_key(keys, m)) {
                    index.entry(k).or_insert(item);
                }
            }
            index
        });
        index.get(&key).copied()
    }
}

/// The key of a map-list item as Go's `MapList` compares them: a single key by its value
/// (an integer and a float never equal), several keys as one string of their Go renderings
/// (`%t`, `%d`, `%f`, `%q`).
#[derive(Hash, PartialEq, Eq)]
enum ItemKey {
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(String),
    Composite(String),
}

fn item_key(keys: &[Box<str>], item: &Map<String, Value>) -> Option<ItemKey> {
    if let [key] = keys {
        return match item.get(&**key)? {
            Value::Bool(b) => Some(ItemKey::Bool(*b)),
            Value::String(s) => Some(ItemKey::Str(s.clone())),
            Value::Number(n) => Some(match n.as_i64() {
                Some(i) => ItemKey::Int(i),
                None => ItemKey::Float(n.as_f64()?.to_bits()),
            }),
            _ => None,
        };
    }
    let mut out = String::new();
    for key in keys {
        out.push('\0');
        match item.get(&**key)? {
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::String(s) => out.push_str(&crate::go::strconv::quote(s)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => out.push_str(&i.to_string()),
                None => out.push_str(&format!("{:.6}", n.as_f64()?)),
            },
            _ => return None,
        }
    }
    Some(ItemKey::Composite(out))
}

/// Where a CEL rule's value stands for ratcheting (`ratchetingOptions`): its own pairing with
/// the old object, and that of the nearest value above it that has one.
#[derive(Clone, Copy, Default)]
pub struct RatchetScope<'a> {
    pub current: Option<Correlated<'a>>,
    pub parent: Option<Correlated<'a>>,
}

impl<'a> RatchetScope<'a> {
    pub fn root(c: Correlated<'a>) -> RatchetScope<'a> {
        RatchetScope {
            current: Some(c),
            parent: None,
        }
    }

    /// The scope of property (or map key) `field`.
    pub fn key(&self, field: &str) -> RatchetScope<'a> {
        let Some(current) = self.current else {
            return *self;
        };
        if self.parent.is_none() && (field == "apiVersion" || field == "kind") {
            return RatchetScope::default();
        }
        RatchetScope {
            current: current.key(field),
            parent: Some(current),
        }
    }

    /// The scope of item `i`, paired through `items` (the list's [`Correlated::items`]).
    pub fn index(&self, items: Option<&mut Items<'a>>, i: usize) -> RatchetScope<'a> {
        let Some(current) = self.current else {
            return *self;
        };
        RatchetScope {
            current: items.and_then(|it| it.get(i)),
            parent: Some(current),
        }
    }

    /// `shouldRatchetError`.
    pub fn tolerates(&self) -> bool {
        match (self.current, self.parent) {
            (Some(c), _) => c.unchanged(),
            (None, Some(p)) => p.unchanged(),
            (None, None) => false,
        }
    }
}
