//! The command-line reference in `docs/cli/` (Markdown, one page per command) and the man
//! pages in `docs/man/` (roff, by `clap_mangen`) are generated from the clap definition of the
//! command line, and this test fails when they are not current:
//! `CRD_AUDIT_UPDATE_DOCS=1 cargo test --test cli_reference` (`just docs`) writes them again.

use clap::CommandFactory;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The page name of a command path: `crd-audit`, `crd-audit-check`, ...
fn page_name(path: &[&str]) -> String {
    path.join("-")
}

fn markdown(cmd: &clap::Command, path: &[&str], out: &mut BTreeMap<String, String>) {
    let mut cmd = cmd.clone().bin_name(path.join(" "));
    let mut page = String::new();
    let _ = writeln!(page, "# `{}`\n", path.join(" "));
    let _ = writeln!(
        page,
        "<!-- Generated from the clap definition by tests/cli_reference.rs (just docs): do not edit. -->\n"
    );
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(page, "{about}\n");
    }
    let usage = cmd.render_usage().to_string();
    let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage);
    let _ = writeln!(page, "```text\n{usage}\n```\n");
    let subcommands: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .collect();
    if !subcommands.is_empty() {
        let _ = writeln!(page, "## Commands\n");
        for sub in &subcommands {
            let mut sub_path = path.to_vec();
            sub_path.push(sub.get_name());
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let _ = writeln!(
                page,
                "- [`{}`]({}.md): {about}",
                sub.get_name(),
                page_name(&sub_path)
            );
        }
        page.push('\n');
    }
    let positionals: Vec<&clap::Arg> = cmd.get_positionals().filter(|a| !a.is_hide_set()).collect();
    if !positionals.is_empty() {
        let _ = writeln!(page, "## Arguments\n");
        for a in positionals {
            let name = a
                .get_value_names()
                .map(|v| {
                    v.iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_else(|| a.get_id().to_string().to_uppercase());
            let _ = writeln!(page, "- `{name}`: {}", help_of(a));
        }
        page.push('\n');
    }
    let options: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
        .collect();
    if !options.is_empty() {
        let _ = writeln!(page, "## Options\n");
        for a in options {
            let mut flag = Vec::new();
            if let Some(s) = a.get_short() {
                flag.push(format!("-{s}"));
            }
            if let Some(l) = a.get_long() {
                flag.push(format!("--{l}"));
            }
            let takes_value = a.get_action().takes_values();
            let value = match a.get_value_names() {
                Some(v) if takes_value => format!(" <{}>", v.join("> <")),
                None if takes_value => format!(" <{}>", a.get_id().as_str().to_uppercase()),
                _ => String::new(),
            };
            let mut line = format!("- `{}{value}`: {}", flag.join(", "), help_of(a));
            let possible: Vec<String> = a
                .get_possible_values()
                .iter()
                .filter(|p| !p.is_hide_set())
                .map(|p| format!("`{}`", p.get_name()))
                .collect();
            if !possible.is_empty() && takes_value {
                let _ = write!(line, " One of {}.", possible.join(", "));
            }
            let defaults: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|d| d.to_string_lossy().to_string())
                .collect();
            if !defaults.is_empty() && takes_value {
                let _ = write!(line, " Default: `{}`.", defaults.join(","));
            }
            let _ = writeln!(page, "{line}");
        }
        page.push('\n');
    }
    let _ = writeln!(
        page,
        "See also the man page `{}(1)` (`docs/man/{}.1`).",
        page_name(path),
        page_name(path)
    );
    out.insert(format!("docs/cli/{}.md", page_name(path)), page);
    for sub in cmd.get_subcommands_mut() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let mut sub_path = path.to_vec();
        sub_path.push(sub.get_name());
        let sub = sub.clone();
        markdown(&sub, &sub_path, out);
    }
}

fn help_of(a: &clap::Arg) -> String {
    a.get_long_help()
        .or(a.get_help())
        .map(|h| h.to_string().replace('\n', " "))
        .unwrap_or_default()
}

fn man_pages(cmd: &clap::Command, path: &[&str], out: &mut BTreeMap<String, String>) {
    let name = page_name(path);
    // clap names commands with static strings; a test may leak a few.
    let static_name: &'static str = Box::leak(name.clone().into_boxed_str());
    let cmd_named = cmd.clone().name(static_name).bin_name(path.join(" "));
    let mut buffer: Vec<u8> = Vec::new();
    clap_mangen::Man::new(cmd_named)
        .render(&mut buffer)
        .expect("rendering a man page");
    out.insert(
        format!("docs/man/{name}.1"),
        String::from_utf8(buffer).unwrap(),
    );
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let mut sub_path = path.to_vec();
        sub_path.push(sub.get_name());
        man_pages(sub, &sub_path, out);
    }
}

fn generated() -> BTreeMap<String, String> {
    // The package version, not the commit a build names (the pages change with the program,
    // not with every commit).
    let mut cmd = crd_audit::command_line::Cli::command().version(env!("CARGO_PKG_VERSION"));
    cmd.build();
    let mut out = BTreeMap::new();
    markdown(&cmd, &["crd-audit"], &mut out);
    man_pages(&cmd, &["crd-audit"], &mut out);
    out
}

#[test]
fn the_cli_reference_and_man_pages_are_current() {
    let pages = generated();
    if std::env::var("CRD_AUDIT_UPDATE_DOCS").is_ok_and(|v| v == "1") {
        for dir in ["docs/cli", "docs/man"] {
            let _ = std::fs::remove_dir_all(root().join(dir));
            std::fs::create_dir_all(root().join(dir)).unwrap();
        }
        for (file, text) in &pages {
            std::fs::write(root().join(file), text).unwrap();
        }
    }
    for (file, text) in &pages {
        let shipped = std::fs::read_to_string(root().join(file)).unwrap_or_default();
        assert!(
            shipped == *text,
            "{file} is not current: run `just docs` (CRD_AUDIT_UPDATE_DOCS=1 cargo test --test cli_reference)"
        );
    }
    for dir in ["docs/cli", "docs/man"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let file = format!("{dir}/{}", entry.unwrap().file_name().to_string_lossy());
            assert!(pages.contains_key(&file), "{file} names no command");
        }
    }
    // Every command has its page and man page, the cleanup among them.
    for name in [
        "crd-audit",
        "crd-audit-check",
        "crd-audit-uninstall-cleanup",
    ] {
        assert!(pages.contains_key(&format!("docs/cli/{name}.md")), "{name}");
        assert!(
            pages[&format!("docs/man/{name}.1")].contains(".TH"),
            "{name}"
        );
    }
    assert!(pages["docs/cli/crd-audit-controller.md"].contains("`--webhook-addr <WEBHOOK_ADDR>`"));
}

/// Nothing in the repository's documentation points to a file outside it.
#[test]
fn the_docs_point_only_inside_the_repository() {
    let mut files = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    for dir in [
        "docs",
        "docs/guides",
        "docs/integrations",
        "docs/reference",
        "docs/development",
        "charts/crd-audit",
    ] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md" || x == "yaml") {
                files.push(p);
            }
        }
    }
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for needle in ["../shared/DESIGN.md", "DESIGN.md"] {
            assert!(
                !text.contains(needle),
                "{} points to {needle}, which is not in the repository",
                file.display()
            );
        }
        // Relative Markdown links resolve to files that exist.
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let resolved = file.parent().unwrap().join(target);
            assert!(
                resolved.exists(),
                "{}: the link {target} names no file",
                file.display()
            );
        }
    }
}

/// The engine crate's README quotes the agreement figures of the book's page
/// docs/reference/agreement.md (which the tests that produce them assert): the same ones.
#[test]
fn the_engine_readme_quotes_the_figures_of_the_readme() {
    let engine = std::fs::read_to_string(root().join("crates/crd-audit-engine/README.md")).unwrap();
    let readme = std::fs::read_to_string(root().join("docs/reference/agreement.md")).unwrap();
    let mut quoted = 0;
    for word in engine.split(|c: char| c.is_whitespace() || c == '|') {
        let word = word.trim_matches(|c: char| !c.is_ascii_digit());
        let Some((a, b)) = word.split_once('/') else {
            continue;
        };
        if a.is_empty() || b.is_empty() || !a.chars().chain(b.chars()).all(|c| c.is_ascii_digit()) {
            continue;
        }
        assert!(
            readme.contains(word),
            "the engine README quotes {word}, which docs/reference/agreement.md does not"
        );
        quoted += 1;
    }
    assert!(quoted >= 8, "{quoted} figures quoted");
}
