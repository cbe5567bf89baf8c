use super::*;

fn ok(s: &str) -> Expr {
    parse(s).unwrap_or_else(|e| panic!("{s}: {}", render_errors(s, &e)))
}

fn err(s: &str) -> String {
    render_errors(s, &parse(s).unwrap_err())
}

#[test]
fn precedence_and_macros() {
    let e = ok("!has(self.a) || self.b.all(x, x > 1 && x in [1, 2]) ? 1 : -2");
    match e.kind {
        ExprKind::Call { function, args, .. } => {
            assert_eq!(function, "_?_:_");
            assert_eq!(args[2].kind, ExprKind::Lit(Literal::Int(-2)));
        }
        _ => panic!(),
    }
    ok("self.map(x, x.name).filter(n, n != '').size() <= 1");
    ok(
        "self.all(k, v, k != v) && self.?a.orValue(1) > 0 && [?self.?b] == [] && {?'a': self.?c}.size() == 0",
    );
    ok(r#"self.matches(r"""^[a-z]+$""") && self.matches('\\d') && b'\x00' != b''"#);
    ok("type(self) == int ? self > 0 : self.endsWith('%')");
    ok("self.transformList(i, v, v * 2).size() == 3u && 1.5e3 > 0.0 && 0xFF == 255");
}

#[test]
fn strings_and_escapes() {
    let e = ok(r#"'a\nb\u00e9\101' + "x" + r'\d' + '''tri'ple'''"#);
    let mut lits = Vec::new();
    e.visit(&mut |n| {
        if let ExprKind::Lit(Literal::String(s)) = &n.kind {
            lits.push(s.clone());
        }
    });
    assert_eq!(lits, vec!["a\nbéA", "x", "\\d", "tri'ple"]);
}

#[test]
fn non_ascii_literals_and_leading_dot_floats() {
    for src in [
        "self.name != 'café'",
        "b'ü' != b''",
        "'''日本語''' + r\"ß\" + \"\"\"é\"\"\"",
        "'é",
        "'é\\q'",
        "x == 'é' é",
    ] {
        let _ = parse(src).map_err(|e| render_errors(src, &e));
    }
    assert_eq!(
        ok("'café'").kind,
        ExprKind::Lit(Literal::String("café".into()))
    );
    assert_eq!(ok(".5").kind, ExprKind::Lit(Literal::Double(0.5)));
    assert_eq!(ok("-.25e1").kind, ExprKind::Lit(Literal::Double(-2.5)));
}

#[test]
fn errors_render_like_cel_go() {
    assert_eq!(
        err("self ==="),
        "ERROR: <input>:1:8: Syntax error: token recognition error at: '='\n | self ===\n | .......^\n\
         ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self ===\n | ........^"
    );
    assert_eq!(
        err("1 + * 2"),
        "ERROR: <input>:1:5: Syntax error: extraneous input '*' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 + * 2\n | ....^"
    );
    assert_eq!(
        err("(1 == 1"),
        "ERROR: <input>:1:8: Syntax error: missing ')' at '<EOF>'\n | (1 == 1\n | .......^"
    );
    assert_eq!(
        err("'日本' + x é"),
        "ERROR: <input>:1:10: Syntax error: token recognition error at: 'é'\n | '日本' + x é\n | .．．......＾"
    );
    assert!(parse("has(self)").is_err());
    assert!(parse("(((").is_err());
    let deep = format!("{}1{}", "(".repeat(400), ")".repeat(400));
    let r = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || parse(&deep).is_err())
        .unwrap()
        .join()
        .unwrap();
    assert!(r);
}
