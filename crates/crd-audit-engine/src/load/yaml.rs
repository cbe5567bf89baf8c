//! YAML documents with their positions, built iteratively from the parser's events, with
//! go-yaml v2's anchors, merges and alias budget.

use super::scalar::{GoKey, go_key_of_scalar, go_key_of_value, resolve_plain, resolve_tagged};
use super::{Document, LoadError, MAX_DEPTH, MAX_NODES, drop_value};
use saphyr_parser::{Event, Input, Parser, ScalarStyle, Span};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Iterates the documents of a YAML stream.
pub struct YamlDocuments<'a, T: Input> {
    parser: Parser<'a, T>,
    source_name: String,
    index: usize,
    done: bool,
    /// Lines before the parsed text (when it is a piece of a larger stream).
    line_offset: usize,
}

impl<'a, T: Input> YamlDocuments<'a, T> {
    /// Reads the documents of `parser`, naming `source_name` in errors.
    pub fn new(source_name: &str, parser: Parser<'a, T>) -> Self {
        YamlDocuments {
            parser,
            source_name: source_name.to_string(),
            index: 0,
            done: false,
            line_offset: 0,
        }
    }

    /// Numbers lines as if the text started after `lines` other lines.
    pub fn with_line_offset(mut self, lines: usize) -> Self {
        self.line_offset = lines;
        self
    }

    fn error(&self, span: Option<Span>, message: String) -> LoadError {
        LoadError {
            source_name: self.source_name.clone(),
            doc: Some(self.index),
            line: span.map(|s| s.start.line() + self.line_offset),
            message,
        }
    }
}

enum Frame {
    Seq {
        items: Vec<Value>,
        anchor: usize,
        /// The document's decode count before this node (see [`AliasBudget`]).
        start: usize,
        /// Whether this node was counted itself (not when it is a merge value's list).
        counted: bool,
    },
    Map {
        map: Map<String, Value>,
        key: Option<String>,
        /// The key being read cannot be a JSON object key (`null`, a uint64): its Go type
        /// and `%#v`, for the error once its value is read.
        bad_key: Option<(&'static str, String)>,
        /// Whether `key` is the merge key `<<` (plain, or tagged `!!merge`).
        merging: bool,
        anchor: usize,
        start: usize,
    },
}

/// go-yaml v2's guard against alias bombs ("excessive aliasing"), which kubectl's YAML
/// decoding goes through: the decoder counts every node it decodes (the document, each
/// mapping, sequence, scalar, key and alias node, and again every node reached through an
/// alias) and, separately, the nodes reached through an alias. Once there are more than 100
/// of the latter and more than 1000 in all, their share may not exceed 99% up to 400,000
/// decodes, 10% from 4,000,000, and a share falling linearly in between.
///
/// The share only grows while an alias is expanded and the allowed share only falls as
/// decodes grow, so checking after each plain node and after each whole alias expansion
/// (counted from the anchor's size, before the value is copied) refuses exactly the
/// documents go-yaml refuses.
#[derive(Debug, Default)]
struct AliasBudget {
    decodes: usize,
    aliased: usize,
}

impl AliasBudget {
    const RANGE_LOW: usize = 400_000;
    const RANGE_HIGH: usize = 4_000_000;

    /// The largest share of aliased decodes allowed after `decodes` decodes.
    fn allowed_share(decodes: usize) -> f64 {
        if decodes <= Self::RANGE_LOW {
            0.99
        } else if decodes >= Self::RANGE_HIGH {
            0.10
        } else {
            let span = (Self::RANGE_HIGH - Self::RANGE_LOW) as f64;
            0.99 - 0.89 * ((decodes - Self::RANGE_LOW) as f64 / span)
        }
    }

    /// Counts `plain` nodes decoded directly and `aliased` reached through an alias;
    /// `false` when the document now holds too much aliasing.
    fn add(&mut self, plain: usize, aliased: usize) -> bool {
        self.decodes += plain + aliased;
        self.aliased += aliased;
        !(self.aliased > 100
            && self.decodes > 1000
            && self.aliased as f64 / self.decodes as f64 > Self::allowed_share(self.decodes))
    }
}

/// go-yaml's message for a document refused by its alias budget.
pub const EXCESSIVE_ALIASING: &str = "yaml: document contains excessive aliasing";

impl<'a, T: Input> Iterator for YamlDocuments<'a, T> {
    type Item = Result<Document, LoadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        // Find the start of the next document.
        let doc_span = loop {
            match self.parser.next_event() {
                None => {
                    self.done = true;
                    return None;
                }
                Some(Err(e)) => {
                    self.done = true;
                    let line = e.marker().line() + self.line_offset;
                    return Some(Err(self.error(
                        Some(Span::new(*e.marker(), *e.marker())),
                        format!("invalid YAML at line {line}: {}", e.info()),
                    )))
                    .map(|r: Result<Document, LoadError>| {
                        r.map_err(|mut l| {
                            l.line = Some(line);
                            l
                        })
                    });
                }
                Some(Ok((Event::DocumentStart(_), span))) => break span,
                Some(Ok((Event::StreamEnd, _))) => {
                    self.done = true;
                    return None;
                }
                Some(Ok(_)) => continue,
            }
        };
        let result = self.read_document(doc_span);
        let index = self.index;
        self.index += 1;
        match result {
            Ok((value, line)) => Some(Ok(Document { index, line, value })),
            Err(e) => {
                // After an error the stream position is unreliable: stop here.
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<'a, T: Input> YamlDocuments<'a, T> {
    /// Builds the value of one document, iteratively (no recursion on nesting).
    fn read_document(&mut self, doc_span: Span) -> Result<(Value, usize), LoadError> {
        let mut stack: Vec<Frame> = Vec::new();
        // Each anchor's value and its size in go-yaml decodes.
        let mut anchors: HashMap<usize, (Value, usize)> = HashMap::new();
        let mut root: Option<Value> = None;
        let mut first_line: Option<usize> = None;
        let mut unsupported_key: Option<LoadError> = None;
        // The document node itself is the first decode.
        let mut budget = AliasBudget {
            decodes: 1,
            aliased: 0,
        };
        let too_deep = format!("document nested deeper than {MAX_DEPTH} levels");
        loop {
            let (event, span) = match self.parser.next_event() {
                None => return Err(self.error(None, "unexpected end of YAML stream".into())),
                Some(Err(e)) => {
                    let line = e.marker().line() + self.line_offset;
                    let info = match e.info() {
                        "recursion limit exceeded" => {
                            "flow collections ([...] or {...}) nested deeper than 255 levels"
                        }
                        other => other,
                    };
                    let mut err = self.error(None, format!("invalid YAML: {info}"));
                    err.line = Some(line);
                    return Err(err);
                }
                Some(Ok(ev)) => ev,
            };
            // Whether the next node is the value of a `<<` key (a merge).
            let merge_value = matches!(stack.last(), Some(Frame::Map { merging: true, .. }));
            let mut merge_key = false;
            let mut scalar_key: Option<GoKey> = None;
            let completed: Option<(Value, usize, usize)> = match event {
                Event::DocumentEnd => {
                    // `sigs.k8s.io/yaml` refuses such a key once the whole document is read.
                    if let Some(e) = unsupported_key {
                        return Err(e);
                    }
                    let line = first_line.unwrap_or(doc_span.start.line());
                    return Ok((root.unwrap_or(Value::Null), line + self.line_offset));
                }
                Event::StreamEnd | Event::DocumentStart(_) => {
                    return Err(self.error(Some(span), "unexpected document boundary".into()));
                }
                Event::Nothing | Event::StreamStart => None,
                Event::Alias(id) => {
                    let Some((_, size)) = anchors.get(&id) else {
                        return Err(
                            self.error(Some(span), "unknown anchor referenced by alias".into())
                        );
                    };
                    // The alias node, then its anchor's nodes again.
                    let size = *size;
                    if !budget.add(1, size) {
                        return Err(self.error(Some(span), EXCESSIVE_ALIASING.into()));
                    }
                    if budget.decodes > MAX_NODES {
                        return Err(self.error(
                            Some(span),
                            format!("document expands to more than {MAX_NODES} values"),
                        ));
                    }
                    Some((anchors[&id].0.clone(), 0, 1 + size))
                }
                Event::Scalar(text, style, anchor, tag) => {
                    first_line.get_or_insert(span.start.line());
                    let key_position = matches!(stack.last(), Some(Frame::Map { key: None, .. }));
                    // go-yaml does not decode a merge key itself.
                    merge_key = key_position
                        && text == "<<"
                        && match tag.as_deref() {
                            None => style == ScalarStyle::Plain,
                            Some(t) => t.suffix == "merge",
                        };
                    if !merge_key && !budget.add(1, 0) {
                        return Err(self.error(Some(span), EXCESSIVE_ALIASING.into()));
                    }
                    if key_position && !merge_key {
                        // A key is a JSON object key as `sigs.k8s.io/yaml` makes one from
                        // go-yaml's value: its resolution errors are the key's own. Its value
                        // is needed only when an anchor names it.
                        scalar_key = Some(
                            go_key_of_scalar(&text, style, tag.as_deref())
                                .map_err(|m| self.error(Some(span), m))?,
                        );
                    }
                    let resolved = if scalar_key.is_some() && anchor == 0 {
                        Ok(Value::Null)
                    } else if style != ScalarStyle::Plain {
                        match tag.as_deref() {
                            Some(t) if t.suffix != "str" => resolve_tagged(t, &text),
                            _ => Ok(Value::String(text.into_owned())),
                        }
                    } else {
                        match tag.as_deref() {
                            Some(t) => resolve_tagged(t, &text),
                            None => resolve_plain(&text),
                        }
                    };
                    // (A key whose value cannot be JSON, `.inf`, is null for an alias of it.)
                    let v = match resolved {
                        Ok(v) => v,
                        Err(_) if scalar_key.is_some() => Value::Null,
                        Err(m) => return Err(self.error(Some(span), m)),
                    };
                    Some((v, anchor, 1))
                }
                Event::SequenceStart(anchor, _) => {
                    first_line.get_or_insert(span.start.line());
                    let start = budget.decodes;
                    // A merge value's list is not decoded itself, only its items.
                    let counted = !merge_value;
                    if counted && !budget.add(1, 0) {
                        return Err(self.error(Some(span), EXCESSIVE_ALIASING.into()));
                    }
                    stack.push(Frame::Seq {
                        items: Vec::new(),
                        anchor,
                        start,
                        counted,
                    });
                    if stack.len() > MAX_DEPTH {
                        return Err(self.error(Some(span), too_deep));
                    }
                    None
                }
                Event::MappingStart(anchor, _) => {
                    first_line.get_or_insert(span.start.line());
                    let start = budget.decodes;
                    if !budget.add(1, 0) {
                        return Err(self.error(Some(span), EXCESSIVE_ALIASING.into()));
                    }
                    stack.push(Frame::Map {
                        map: Map::new(),
                        key: None,
                        bad_key: None,
                        merging: false,
                        anchor,
                        start,
                    });
                    if stack.len() > MAX_DEPTH {
                        return Err(self.error(Some(span), too_deep));
                    }
                    None
                }
                Event::SequenceEnd => match stack.pop() {
                    Some(Frame::Seq {
                        items,
                        anchor,
                        start,
                        counted,
                    }) => {
                        // Referenced through an anchor, the list counts as a node.
                        let size = budget.decodes - start + usize::from(!counted);
                        Some((Value::Array(items), anchor, size))
                    }
                    _ => return Err(self.error(Some(span), "unbalanced sequence".into())),
                },
                Event::MappingEnd => match stack.pop() {
                    Some(Frame::Map {
                        map, anchor, start, ..
                    }) => Some((Value::Object(map), anchor, budget.decodes - start)),
                    _ => return Err(self.error(Some(span), "unbalanced mapping".into())),
                },
            };
            let Some((value, anchor, size)) = completed else {
                continue;
            };
            if budget.decodes > MAX_NODES {
                return Err(self.error(
                    Some(span),
                    format!("document expands to more than {MAX_NODES} values"),
                ));
            }
            if anchor != 0 {
                anchors.insert(anchor, (value.clone(), size));
            }
            match stack.last_mut() {
                None => root = Some(value),
                Some(Frame::Seq { items, .. }) => items.push(value),
                Some(Frame::Map {
                    map,
                    key,
                    bad_key,
                    merging,
                    ..
                }) => match key.take() {
                    None => {
                        let go_key = match scalar_key.take() {
                            Some(k) => k,
                            None => {
                                go_key_of_value(&value).map_err(|m| self.error(Some(span), m))?
                            }
                        };
                        match go_key {
                            GoKey::Text(k) => *key = Some(k),
                            GoKey::Unsupported(type_name, shown) => {
                                *key = Some(String::new());
                                *bad_key = Some((type_name, shown));
                            }
                        }
                        *merging = merge_key;
                    }
                    // go-yaml merges in document order, each merged key overwriting the
                    // same key set before it (a list of maps is merged last to first, so
                    // that its first map wins).
                    Some(_) if std::mem::take(merging) => {
                        let not_maps = || {
                            self.error(
                                Some(span),
                                "map merge requires map or sequence of maps as the value".into(),
                            )
                        };
                        match value {
                            Value::Object(m) => map.extend(m),
                            Value::Array(list) => {
                                if !list.iter().all(Value::is_object) {
                                    return Err(not_maps());
                                }
                                for item in list.into_iter().rev() {
                                    if let Value::Object(m) = item {
                                        map.extend(m);
                                    }
                                }
                            }
                            _ => return Err(not_maps()),
                        }
                    }
                    Some(_) if bad_key.is_some() => {
                        if let Some((type_name, shown)) = bad_key.take()
                            && unsupported_key.is_none()
                        {
                            unsupported_key = Some(self.error(
                                Some(span),
                                format!(
                                    "unsupported map key of type: {type_name}, key: {shown}, value: {}",
                                    crate::go::fmt::sharp_v(&value)
                                ),
                            ));
                        }
                    }
                    Some(k) => {
                        if let Some(old) = map.insert(k, value) {
                            drop_value(old);
                        }
                    }
                },
            }
        }
    }
}
