//! Where a field of a document stands in its text: the line and column of the deepest node
//! of a field path (`spec.ports[1].name`, `metadata.labels[app.kubernetes.io/name]`) that
//! exists in the document.
//!
//! Positions are found by reading the document's text once more, only for documents that
//! have findings, so that decoding (the hot path) keeps no marks. YAML (block and flow
//! style) and JSON text are read the same way (JSON is YAML's flow style).

use saphyr_parser::{Event, Parser, Span};
use std::collections::HashMap;

/// A 1-based line and column in the input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// Most nodes one document's position tree holds (beyond it, positions are not offered).
const MAX_NODES: usize = 2_000_000;

/// The position tree of one document: every node with the position of its key (for mapping
/// values), of itself (sequence items), or of the document (the root).
#[derive(Debug)]
pub struct DocumentPositions {
    root: Node,
    start: Position,
}

#[derive(Clone, Debug)]
enum Node {
    Leaf,
    Map(Vec<(String, Position, Node)>),
    Seq(Vec<(Position, Node)>),
}

fn position(span: &Span, line_offset: usize) -> Position {
    Position {
        line: span.start.line() + line_offset,
        column: span.start.col() + 1,
    }
}

impl DocumentPositions {
    /// Reads document `doc` (counting from 0) of `text`, whose first line is line
    /// `line_offset + 1` of the input. `None` when the text does not read (then callers
    /// fall back to the document's line).
    pub fn read(text: &str, doc: usize, line_offset: usize) -> Option<DocumentPositions> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut parser = Parser::new_from_str(text);
        let mut seen = 0;
        // The document's start.
        let start = loop {
            match parser.next_event()? {
                Err(_) => return None,
                Ok((Event::DocumentStart(_), span)) => {
                    if seen == doc {
                        break position(&span, line_offset);
                    }
                    seen += 1;
                }
                Ok((Event::StreamEnd, _)) => return None,
                Ok(_) => {}
            }
        };
        // Frames: a mapping (its entries and the key waiting for its value) or a sequence,
        // each with the position it is held at and its anchor.
        enum Frame {
            Map {
                entries: Vec<(String, Position, Node)>,
                key: Option<(String, Position)>,
                at: Position,
                anchor: usize,
                first: usize,
            },
            Seq {
                items: Vec<(Position, Node)>,
                at: Position,
                anchor: usize,
                first: usize,
            },
        }
        let mut stack: Vec<Frame> = Vec::new();
        // Each anchor's node and how many nodes it holds (an alias copies them all).
        let mut anchors: HashMap<usize, (Node, usize)> = HashMap::new();
        let mut nodes = 0usize;
        let mut root: Option<(Position, Node)> = None;
        loop {
            let (event, span) = parser.next_event()?.ok()?;
            let at = position(&span, line_offset);
            // (position, node, anchor, scalar text, nodes the node holds)
            let done: Option<(Position, Node, usize, Option<String>, usize)> = match event {
                Event::DocumentEnd | Event::StreamEnd | Event::DocumentStart(_) => {
                    break;
                }
                Event::Nothing | Event::StreamStart => None,
                Event::Alias(id) => {
                    let (node, size) = anchors.get(&id)?;
                    // Counted before the copy is made: an alias bomb stops here.
                    nodes += size;
                    if nodes > MAX_NODES {
                        return None;
                    }
                    Some((at, node.clone(), 0, None, *size))
                }
                Event::Scalar(text, _, anchor, _) => {
                    nodes += 1;
                    Some((at, Node::Leaf, anchor, Some(text.into_owned()), 1))
                }
                Event::MappingStart(anchor, _) => {
                    nodes += 1;
                    stack.push(Frame::Map {
                        entries: Vec::new(),
                        key: None,
                        at,
                        anchor,
                        first: nodes,
                    });
                    None
                }
                Event::SequenceStart(anchor, _) => {
                    nodes += 1;
                    stack.push(Frame::Seq {
                        items: Vec::new(),
                        at,
                        anchor,
                        first: nodes,
                    });
                    None
                }
                Event::MappingEnd => match stack.pop()? {
                    Frame::Map {
                        entries,
                        at,
                        anchor,
                        first,
                        ..
                    } => Some((at, Node::Map(entries), anchor, None, nodes - first + 1)),
                    Frame::Seq { .. } => return None,
                },
                Event::SequenceEnd => match stack.pop()? {
                    Frame::Seq {
                        items,
                        at,
                        anchor,
                        first,
                    } => Some((at, Node::Seq(items), anchor, None, nodes - first + 1)),
                    Frame::Map { .. } => return None,
                },
            };
            let Some((at, node, anchor, scalar, size)) = done else {
                continue;
            };
            if nodes > MAX_NODES {
                return None;
            }
            if anchor != 0 {
                anchors.insert(anchor, (node.clone(), size));
            }
            match stack.last_mut() {
                None => root = Some((at, node)),
                Some(Frame::Seq { items, .. }) => items.push((at, node)),
                Some(Frame::Map { entries, key, .. }) => match key.take() {
                    // A key: scalars only (others cannot name a field).
                    None => *key = Some((scalar.unwrap_or_default(), at)),
                    Some((k, key_at)) => entries.push((k, key_at, node)),
                },
            }
        }
        let (_, root) = root?;
        Some(DocumentPositions { root, start })
    }

    /// The position of the deepest node of `field` (a field path as causes render it) that
    /// exists in the document: the key of a mapping entry, the start of a sequence item, the
    /// document's start for the root.
    pub fn locate(&self, field: &str) -> Position {
        self.walk(field).0
    }

    /// The position of `field` when the whole path exists in the document (`None` when
    /// only a part of it does).
    pub fn find(&self, field: &str) -> Option<Position> {
        let (at, whole) = self.walk(field);
        whole.then_some(at)
    }

    /// The deepest node of `field` that exists, and whether it is the field itself.
    fn walk(&self, field: &str) -> (Position, bool) {
        let mut node = &self.root;
        let mut at = self.start;
        let mut rest = field;
        let mut first = true;
        'walk: while !rest.is_empty() {
            match node {
                Node::Map(entries) => {
                    // The longest key that the path continues with (keys may hold dots).
                    let mut best: Option<(usize, &Position, &Node)> = None;
                    for (k, key_at, child) in entries {
                        let taken = if let Some(r) = rest.strip_prefix('[') {
                            r.strip_prefix(k.as_str())
                                .filter(|r| r.starts_with(']'))
                                .map(|_| k.len() + 2)
                        } else {
                            let r = if first {
                                Some(rest)
                            } else {
                                rest.strip_prefix('.')
                            };
                            r.and_then(|r| r.strip_prefix(k.as_str()))
                                .filter(|r| r.is_empty() || r.starts_with(['.', '[']))
                                .map(|_| k.len() + usize::from(!first))
                        };
                        if let Some(n) = taken
                            && best.is_none_or(|(b, _, _)| n > b)
                        {
                            best = Some((n, key_at, child));
                        }
                    }
                    let Some((n, key_at, child)) = best else {
                        break 'walk;
                    };
                    rest = &rest[n..];
                    at = *key_at;
                    node = child;
                }
                Node::Seq(items) => {
                    let Some(r) = rest.strip_prefix('[') else {
                        break 'walk;
                    };
                    let Some((index, r)) = r.split_once(']') else {
                        break 'walk;
                    };
                    let Some((item_at, child)) =
                        index.parse::<usize>().ok().and_then(|i| items.get(i))
                    else {
                        break 'walk;
                    };
                    rest = r;
                    at = *item_at;
                    node = child;
                }
                Node::Leaf => break 'walk,
            }
            first = false;
        }
        (at, rest.is_empty())
    }

    /// Where the document starts.
    pub fn start(&self) -> Position {
        self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize, column: usize) -> Position {
        Position { line, column }
    }

    #[test]
    fn block_style() {
        let text = "apiVersion: v1\nkind: Widget\nmetadata:\n  name: w\n  labels:\n    app.kubernetes.io/name: x\nspec:\n  replicas: 3\n  ports:\n  - name: a\n    port: 1\n  - name: b\n    port: 2\n";
        let p = DocumentPositions::read(text, 0, 0).unwrap();
        assert_eq!(p.locate("spec.replicas"), at(8, 3));
        assert_eq!(p.locate("spec.ports[1]"), at(12, 5));
        assert_eq!(p.locate("spec.ports[1].port"), at(13, 5));
        assert_eq!(
            p.locate("metadata.labels[app.kubernetes.io/name]"),
            at(6, 5)
        );
        assert_eq!(p.locate("metadata.labels.app.kubernetes.io/name"), at(6, 5));
        // The deepest node that exists: a missing field names the object that should hold it.
        assert_eq!(p.locate("spec.missing"), at(7, 1));
        assert_eq!(p.locate("spec.ports[7].name"), at(9, 3));
        assert_eq!(p.locate("spec.replicas.deeper"), at(8, 3));
        // The root: the document's start.
        assert_eq!(p.locate(""), at(1, 1));
        assert_eq!(p.locate("status"), at(1, 1));
        // Only a path that exists as a whole is found.
        assert_eq!(p.find("spec.ports[1].port"), Some(at(13, 5)));
        assert_eq!(p.find(""), Some(at(1, 1)));
        assert_eq!(p.find("spec.missing"), None);
        assert_eq!(p.find("spec.ports[7]"), None);
        assert_eq!(p.find("spec.replicas.deeper"), None);
    }

    #[test]
    fn flow_style_and_json() {
        let text = "{\"kind\": \"Widget\",\n \"spec\": {\"replicas\": 3, \"ports\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}}\n";
        let p = DocumentPositions::read(text, 0, 10).unwrap();
        assert_eq!(p.locate("spec"), at(12, 2));
        assert_eq!(p.locate("spec.replicas"), at(12, 11));
        assert_eq!(p.locate("spec.ports[1].name"), at(12, 52));
        let p = DocumentPositions::read("spec: {replicas: 3, tags: [a, b]}\n", 0, 0).unwrap();
        assert_eq!(p.locate("spec.tags[1]"), at(1, 31));
    }

    #[test]
    fn documents_of_a_stream() {
        let text = "a: 1\n---\nb:\n  c: 2\n---\n# empty\n---\nd: [1]\n";
        assert_eq!(
            DocumentPositions::read(text, 0, 0).unwrap().locate("a"),
            at(1, 1)
        );
        assert_eq!(
            DocumentPositions::read(text, 1, 0).unwrap().locate("b.c"),
            at(4, 3)
        );
        assert_eq!(
            DocumentPositions::read(text, 3, 0).unwrap().locate("d[0]"),
            at(8, 5)
        );
        assert!(DocumentPositions::read(text, 4, 0).is_none());
        // Malformed text offers no positions.
        assert!(DocumentPositions::read("a: [1\n", 0, 0).is_none());
    }

    #[test]
    fn alias_bombs_offer_no_positions() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        // 10^9 nodes if expanded: refused once the count passes the bound, nothing copied.
        assert!(DocumentPositions::read(&text, 0, 0).is_none());
        // A few aliases are fine.
        let p = DocumentPositions::read("a: &x {b: 1}\nc: [*x, *x]\n", 0, 0).unwrap();
        assert_eq!(p.locate("c[1].b"), at(1, 8));
    }

    #[test]
    fn aliases_and_keys_with_dots() {
        let text = "base: &b\n  x: 1\nspec:\n  copy: *b\n  a.b: 1\n  a: {b: 2}\n";
        let p = DocumentPositions::read(text, 0, 0).unwrap();
        // An alias's nodes stand where the anchor's do.
        assert_eq!(p.locate("spec.copy.x"), at(2, 3));
        // The longest key the path continues with.
        assert_eq!(p.locate("spec.a.b"), at(5, 3));
        assert_eq!(p.locate("spec[a].b"), at(6, 7));
    }
}
