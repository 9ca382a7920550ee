#!/usr/bin/env python3
"""The extract check: the image URLs of the third-party documents in Tests/TestSupport/documents, found by
`tilecache validate --extract DOC --dump --format json` and by an independent extraction written here with other
parsers (BeautifulSoup's html.parser for HTML, markdown-it-py for Markdown, Python's json and xml.etree, a regex for
CSS), resolved with urllib.parse.urljoin. Every URL the independent extraction finds must be found by tilecache, and
tilecache must find none it does not (per document, counted: a URL used three times is three references), except the
deliberate differences listed in DIFFERENCES with their reasons. Lines are compared where both sides give them.

Usage: extract_check.py TILECACHE_BINARY
"""
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path
from urllib.parse import quote, unquote, urljoin

from bs4 import BeautifulSoup
from markdown_it import MarkdownIt

DOCUMENTS_DIR = Path(__file__).resolve().parent.parent / "Tests" / "TestSupport" / "documents"
RAW = "https://raw.githubusercontent.com"

# Each document: its file, where it lives on the web (--base), and for JSON the --json-path (None: every http(s) URL).
DOCUMENTS = [
    ("awesome-windows-README.md", f"{RAW}/Awesome-Windows/Awesome/bcbdbb707ee679abf9542bc1601ba49d4c015de0/README.md", None),
    ("vapor-README.md", f"{RAW}/vapor/vapor/13efaeefd52a965009fc6a69a96ba66e7f20402e/README.md", None),
    ("alamofire-README.md", f"{RAW}/Alamofire/Alamofire/7595cbcf59809f9977c5f6378500de2ad73b7ddb/README.md", None),
    ("awesome-readme.md", f"{RAW}/sindresorhus/awesome/7cb5c8371c0fe73e5444a42d5542f6280c38b1a6/readme.md", None),
    ("hummingbird-README.md", f"{RAW}/hummingbird-project/hummingbird/da5a59f04d9abfde7883542fad6b5df33f5af722/README.md", None),
    ("mdn-responsive.html", "https://mdn.github.io/learning-area/html/multimedia-and-embedding/responsive-images/responsive.html", None),
    ("mdn-splash-page.html", "https://mdn.github.io/learning-area/html/multimedia-and-embedding/mdn-splash-page-finished/index.html", None),
    ("h5bp-index.html", "https://example.org/site/index.html", None),
    ("angular-adev-index.html", "https://angular.dev/tutorials/first-app", None),
    ("jquery-ui-theme.css", "https://code.jquery.com/ui/1.14.1/themes/base/theme.css", None),
    ("sitemap.js-alltags.xml", f"{RAW}/ekalinin/sitemap.js/218a31d937bb4d3e42f3eff8391be7acc29a8ffe/tests/mocks/alltags.xml", None),
    ("nasa-fevo-rover-photos.json", f"{RAW}/lradomski10m/nasa-fevo/92cc11097766e94346bc2b0b0819e9191f8b04bf/photos.json", None),
    ("nasa-fevo-rover-photos.json", f"{RAW}/lradomski10m/nasa-fevo/92cc11097766e94346bc2b0b0819e9191f8b04bf/photos.json", "photos[].img_src"),
]

# Deliberate differences: (document, canonical URL) -> why the two sides differ. Empty while there are none.
DIFFERENCES = {}

ICON_RELATIONS = {"icon", "apple-touch-icon", "apple-touch-icon-precomposed"}
IMAGE_METAS = {"og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"}
SITEMAP_IMAGE = "{http://www.google.com/schemas/sitemap-image/1.1}loc"


def canonical(url):
    """The URL with its percent-encoding normalised (decoded, then encoded again the same way), so a reference that
    one side encodes more eagerly than the other compares equal: markdown-it's normalizeLink encodes [ ] | and more,
    browsers (and tilecache) only what a URL cannot hold."""
    return quote(unquote(url), safe="!#$&'()*+,-./:;=?@[]_~")


class Extraction:
    """The references of one document: (canonical URL, line or None), in document order."""

    def __init__(self, base):
        self.base = base
        self.found = []

    def add(self, value, line):
        value = (value or "").strip(" \t\n\r\f")
        lowered = re.sub(r"[\t\n\r]", "", value).lower()
        if not value or lowered.startswith("data:") or lowered.startswith("javascript:"):
            return
        self.found.append((canonical(urljoin(self.base, value)), line))


# --- HTML (BeautifulSoup, html.parser) --------------------------------------------------------------------------

def srcset_urls(srcset):
    """The URLs of a srcset attribute, as the HTML standard's algorithm splits it (a URL runs to white space, so it
    may hold commas; trailing commas end it; descriptors run to a comma outside parentheses)."""
    urls, position, text = [], 0, srcset
    while True:
        while position < len(text) and (text[position] in " \t\n\r\f,"):
            position += 1
        if position >= len(text):
            return urls
        start = position
        while position < len(text) and text[position] not in " \t\n\r\f":
            position += 1
        url = text[start:position]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            depth = False
            while position < len(text):
                char = text[position]
                position += 1
                if depth:
                    depth = char != ")"
                elif char == "(":
                    depth = True
                elif char == ",":
                    break
        if url:
            urls.append(url)


def css_references(css, first_line, extraction):
    """url() and image-set() strings of a style sheet, by regular expressions, comments, @import and @font-face removed
    (kept as blank lines so lines stay right)."""
    blank = lambda match: re.sub(r"[^\n]", " ", match.group(0))
    css = re.sub(r"/\*.*?\*/", blank, css, flags=re.S)
    css = re.sub(r"@import[^;]*;", blank, css, flags=re.I)
    css = re.sub(r"@font-face\s*\{[^}]*\}", blank, css, flags=re.I)
    line_of = lambda offset: first_line + css.count("\n", 0, offset)
    found = []
    for match in re.finditer(r"(?<![\w-])url\(\s*(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^)]*?))\s*\)", css, flags=re.I):
        found.append((match.start(), next(group for group in match.groups() if group is not None)))
    for match in re.finditer(r"(?<![\w-])(?:-webkit-)?image-set\(((?:[^()]|\([^()]*\))*)\)", css, flags=re.I):
        arguments = re.sub(r"\([^()]*\)", lambda inner: " " * len(inner.group(0)), match.group(1))
        for string in re.finditer(r"\"([^\"\n]*)\"|'([^'\n]*)'", arguments):
            found.append((match.start(1) + string.start(), string.group(1) if string.group(1) is not None else string.group(2)))
    for offset, value in sorted(found):
        extraction.add(value, line_of(offset))


def html_references(html, extraction, first_line=1, honour_base=True):
    soup = BeautifulSoup(html, "html.parser")
    if honour_base:
        base = next((tag for tag in soup.find_all("base") if (tag.get("href") or "").strip()), None)
        if base is not None:
            extraction.base = urljoin(extraction.base, base["href"].strip())
    for tag in soup.find_all(True):
        line = first_line + (tag.sourceline or 1) - 1
        if tag.name == "img":
            extraction.add(tag.get("src"), line)
            for url in srcset_urls(tag.get("srcset") or ""):
                extraction.add(url, line)
        elif tag.name == "source":
            for url in srcset_urls(tag.get("srcset") or ""):
                extraction.add(url, line)
        elif tag.name == "link":
            relations = tag.get("rel") or []
            relations = relations.split() if isinstance(relations, str) else relations
            if any(relation.lower() in ICON_RELATIONS for relation in relations) and tag.get("href") is not None:
                extraction.add(tag.get("href"), line)
        elif tag.name == "meta":
            key = (tag.get("property") or tag.get("name") or "").strip().lower()
            if key in IMAGE_METAS and tag.get("content") is not None:
                extraction.add(tag.get("content"), line)
        elif tag.name == "style":
            css_references(tag.string or "", line, extraction)
        if tag.get("style") is not None:
            css_references(tag["style"], line, extraction)


# --- Markdown (markdown-it-py, CommonMark) -----------------------------------------------------------------------

def markdown_references(text, extraction):
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "html_block":
            html_references(token.content, extraction, first_line=token.map[0] + 1, honour_base=False)
        elif token.type == "inline":
            line = token.map[0] + 1
            for child in token.children or []:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                elif child.type == "image":
                    extraction.add(child.attrs.get("src"), line)
                elif child.type == "html_inline":
                    html_references(child.content, extraction, first_line=line, honour_base=False)
                    line += child.content.count("\n")


# --- JSON, sitemaps ----------------------------------------------------------------------------------------------

def json_references(text, extraction, path):
    steps = None if path is None else [("each", None) if step == "[]" else ("key", step)
                                       for step in re.findall(r"\[\]|[^.\[\]]+", path)]
    cursor = 0

    def line_of(value):
        """The line of the value's next occurrence as a JSON string literal (None when it is written with other
        escapes): Python's json gives no positions, and the values come in document order."""
        nonlocal cursor
        for literal in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
            found = text.find(literal, cursor)
            if found >= 0:
                cursor = found + len(literal)
                return text.count("\n", 0, found) + 1
        return None

    def walk(value, location):
        if isinstance(value, dict):
            for key, member in value.items():
                walk(member, location + [("key", key)])
        elif isinstance(value, list):
            for element in value:
                walk(element, location + [("each", None)])
        elif isinstance(value, str):
            if steps is not None:
                if location == steps:
                    extraction.add(value, line_of(value))
            elif re.match(r"https?://.", value, flags=re.I):
                extraction.add(value, line_of(value))

    walk(json.loads(text), [])


def sitemap_references(text, extraction):
    """image:loc by xml.etree, which gives no lines; the lines are those of the <PREFIX:loc start tags, PREFIX being
    what the document binds the image namespace to (when it binds one prefix only and the counts agree)."""
    locations = [(element.text or "").strip() for element in ElementTree.fromstring(text.encode()).iter(SITEMAP_IMAGE)]
    prefixes = set(re.findall(r'xmlns:([\w.-]+)\s*=\s*["\']' + re.escape(SITEMAP_IMAGE[1:SITEMAP_IMAGE.index("}")]), text))
    lines = [None] * len(locations)
    if len(prefixes) == 1:
        starts = [match.start() for match in re.finditer(r"<" + re.escape(prefixes.pop()) + r":loc\b", text)]
        if len(starts) == len(locations):
            lines = [text.count("\n", 0, start) + 1 for start in starts]
    for location, line in zip(locations, lines):
        extraction.add(location, line)


# --- The comparison ----------------------------------------------------------------------------------------------

def independent(name, base, path):
    text = (DOCUMENTS_DIR / name).read_text(encoding="utf-8")
    extraction = Extraction(base)
    suffix = name.rsplit(".", 1)[-1]
    if suffix in ("html", "htm"):
        html_references(text, extraction)
    elif suffix in ("md", "markdown"):
        markdown_references(text, extraction)
    elif suffix == "json":
        json_references(text, extraction, path)
    elif suffix == "css":
        css_references(text, 1, extraction)
    elif suffix == "xml":
        sitemap_references(text, extraction)
    return extraction.found


def ours(binary, name, base, path):
    command = [binary, "validate", "--extract", str(DOCUMENTS_DIR / name), "--dump", "--format", "json", "--base", base]
    if path:
        command += ["--json-path", path]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        sys.exit(f"extract-check: {' '.join(command)} exited {run.returncode}: {run.stderr.strip()}")
    return [(canonical(reference["url"]), reference["line"]) for reference in json.loads(run.stdout)["references"]]


def main():
    binary = sys.argv[1]
    totals = Counter()
    problems = []
    for name, base, path in DOCUMENTS:
        label = name + (f" --json-path {path}" if path else "")
        theirs, mine = independent(name, base, path), ours(binary, name, base, path)
        their_urls, my_urls = Counter(url for url, _ in theirs), Counter(url for url, _ in mine)
        missing, extra = their_urls - my_urls, my_urls - their_urls
        explained = [url for url in (missing + extra) if (name, url) in DIFFERENCES]
        unexplained_missing = [url for url in missing if (name, url) not in DIFFERENCES]
        unexplained_extra = [url for url in extra if (name, url) not in DIFFERENCES]
        # Lines, where the independent side gives them: each URL's lines, in order, on both sides.
        line_mismatches = []
        for url in their_urls:
            their_lines = [line for found, line in theirs if found == url and line is not None]
            my_lines = [line for found, line in mine if found == url]
            if their_lines and len(their_lines) == len(my_lines) and their_lines != my_lines:
                line_mismatches.append((url, their_lines, my_lines))
        compared_lines = sum(1 for _, line in theirs if line is not None)
        totals.update(documents=1, independent=len(theirs), ours=len(mine), distinct=len(set(my_urls)),
                      missing=len(unexplained_missing), extra=len(unexplained_extra), explained=len(explained),
                      lines=compared_lines, line_mismatches=sum(len(lines) for _, lines, _ in line_mismatches))
        status = "ok" if not (unexplained_missing or unexplained_extra or line_mismatches) else "DIFFERS"
        print(f"extract-check: {label}: independent {len(theirs)}, tilecache {len(mine)} references "
              f"({len(set(my_urls))} distinct); lines compared {compared_lines}; {status}")
        for url in unexplained_missing:
            problems.append(f"{label}: tilecache misses {url} (found by the independent extraction)")
        for url in unexplained_extra:
            problems.append(f"{label}: tilecache finds {url}, which the independent extraction does not")
        for url, their_lines, my_lines in line_mismatches:
            problems.append(f"{label}: {url}: lines {their_lines} (independent) but {my_lines} (tilecache)")
        for url in explained:
            print(f"extract-check:   deliberate difference {url}: {DIFFERENCES[(name, url)]}")
    print(f"extract-check: {totals['documents']} documents, {totals['independent']} references found independently, "
          f"{totals['ours']} by tilecache ({totals['distinct']} distinct per document, summed); "
          f"{totals['missing']} missed, {totals['extra']} invented, {totals['explained']} deliberate differences; "
          f"{totals['lines']} lines compared, {totals['line_mismatches']} differ")
    for problem in problems:
        print(f"extract-check: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
