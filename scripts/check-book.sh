#!/usr/bin/env bash
# Builds the book (docs/, mdBook) with the pinned mdBook of scripts/install-mdbook.sh and fails
# when it is broken:
#   - mdBook logs an error or a warning (an {{#include}} of a file that does not exist, a
#     SUMMARY.md entry without its file, an unknown book.toml key, ...), or an include is left
#     unexpanded in the HTML;
#   - a link of a page, or an anchor (#...), points to nothing inside the built book. Links
#     out of the book (http:, https:, mailto:) are not followed.
#
#   scripts/check-book.sh [OUT_DIR]
#
# OUT_DIR (default: a temporary directory, removed afterwards) receives the HTML; the release
# workflow publishes it to GitHub Pages. MDBOOK names an mdbook binary to use instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mdbook=${MDBOOK:-$(bash "$root/scripts/install-mdbook.sh")}
keep_out=0
if [ $# -ge 1 ]; then
  mkdir -p "$1"
  out=$(cd "$1" && pwd)
  keep_out=1
else
  out=$(mktemp -d "${TMPDIR:-/tmp}/crd-audit-book.XXXXXX")
fi
log=$(mktemp "${TMPDIR:-/tmp}/crd-audit-book-log.XXXXXX")
cleanup() {
  rm -f "$log"
  if [ "$keep_out" = 0 ]; then rm -rf "$out"; fi
}
trap cleanup EXIT

echo "== mdbook build docs ($("$mdbook" --version))" >&2
if ! NO_COLOR=1 "$mdbook" build "$root/docs" --dest-dir "$out" >"$log" 2>&1; then
  cat "$log" >&2
  echo "error: mdbook build failed" >&2
  exit 1
fi
cat "$log" >&2
if grep -E '(^|[^A-Za-z])(ERROR|WARN)([^A-Za-z]|$)' "$log" >/dev/null; then
  echo "error: mdbook logged errors or warnings (above)" >&2
  exit 1
fi

echo "== links and anchors in $out" >&2
python3 - "$out" "$root/docs/book.toml" <<'PYTHON'
"""Every link and anchor of the built book resolves inside it (stdlib only)."""
import html.parser
import os
import sys
import tomllib
import urllib.parse

out, book_toml = sys.argv[1], sys.argv[2]
with open(book_toml, "rb") as f:
    site_url = tomllib.load(f).get("output", {}).get("html", {}).get("site-url", "/")
if not site_url.endswith("/"):
    site_url += "/"


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []  # (attribute value, line)
        self.base = None
        self.text = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "base" and attrs.get("href"):
            self.base = attrs["href"]
        for key in ("href", "src"):
            if attrs.get(key) is not None and tag in ("a", "link", "img", "script", "iframe"):
                self.links.append((attrs[key], self.getpos()[0]))

    def handle_data(self, data):
        self.text.append(data)


pages = {}
for directory, _, names in os.walk(out):
    for name in names:
        if name.endswith(".html"):
            path = os.path.join(directory, name)
            page = Page()
            with open(path, encoding="utf-8") as f:
                page.feed(f.read())
            pages[os.path.normpath(path)] = page

problems = []


def shown(path):
    return os.path.relpath(path, out)


def resolve(page_path, page, target):
    """The file a link names, or None when it leaves the book."""
    url = urllib.parse.urlsplit(target)
    if url.scheme or url.netloc:
        return None, None
    path = urllib.parse.unquote(url.path)
    if not path:
        # "#anchor": an anchor of this page. (mdBook's 404.html has a <base href> and heading
        # links of this form; they are meant for the page itself.)
        return page_path, url.fragment
    if page.base is not None and not path.startswith("/"):
        path = urllib.parse.urljoin(page.base, path)
    if path.startswith("/"):
        if not path.startswith(site_url):
            return "outside", url.fragment
        file = os.path.join(out, path[len(site_url):])
    else:
        file = os.path.join(os.path.dirname(page_path), path)
    file = os.path.normpath(file)
    if os.path.isdir(file):
        file = os.path.join(file, "index.html")
    return file, url.fragment


for page_path, page in sorted(pages.items()):
    text = "".join(page.text)
    if "{{#include" in text:
        problems.append(f"{shown(page_path)}: an include left unexpanded")
    for target, line in page.links:
        if target.startswith(("mailto:", "javascript:", "data:")):
            continue
        file, fragment = resolve(page_path, page, target)
        if file is None:
            continue
        where = f"{shown(page_path)}:{line}: {target}"
        if file == "outside":
            problems.append(f"{where}: outside the book's site-url {site_url}")
            continue
        if not os.path.normpath(file).startswith(os.path.normpath(out) + os.sep):
            problems.append(f"{where}: outside the book")
            continue
        if not os.path.isfile(file):
            problems.append(f"{where}: no file {shown(file)}")
            continue
        if fragment:
            fragment = urllib.parse.unquote(fragment)
            target_page = pages.get(os.path.normpath(file))
            if target_page is None:
                problems.append(f"{where}: an anchor into a file that is not HTML")
            elif fragment not in target_page.ids:
                problems.append(f"{where}: no anchor #{fragment} in {shown(file)}")

for problem in problems:
    print(problem, file=sys.stderr)
print(f"{len(pages)} pages, {sum(len(p.links) for p in pages.values())} links: "
      f"{len(problems)} broken", file=sys.stderr)
sys.exit(1 if problems else 0)
PYTHON
if [ "$keep_out" = 1 ]; then echo "the book is whole: $out" >&2; else echo "the book is whole" >&2; fi
