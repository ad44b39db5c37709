"""Text from the files of Debian's documentation: HTML and GNOME help (Mallard) pages
give their visible text without navigation, one line per block; man pages give their prose,
one paragraph per line; and the line filters of the non-English recipe (``_clean``,
``_looks_english``)."""

from __future__ import annotations

import gzip
import html.parser
import re
from pathlib import Path
from typing import Iterator


class _Lines(html.parser.HTMLParser):
    """What the page parsers share: text gathered into ``lines``, one per block, white space
    folded, except inside verbatim elements (``_verbatim`` > 0), kept line by line."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._text: list[str] = []
        self._verbatim = 0

    def _flush(self) -> None:
        text = "".join(self._text)
        self._text = []
        if self._verbatim:
            self.lines.extend(text.split("\n"))
        else:
            self.lines.append(" ".join(text.split()))


def _read_page(path: Path, parser_class: type | None = None) -> Iterator[str]:
    """The lines of an HTML page, as ``parser_class`` (default ``_PageText``) finds them."""
    parser = (parser_class or _PageText)()
    with open(path, encoding="utf-8", errors="replace") as f:
        parser.feed(f.read())
    parser.close()
    parser._flush()
    return iter(parser.lines)


class _HTMLText(_Lines):
    """Visible text of an HTML page: one line per block element, <pre> kept verbatim."""

    BLOCKS = {"p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4",
              "h5", "h6", "table", "tr", "td", "th", "pre", "blockquote", "section", "title",
              "caption", "figcaption", "hr"}
    HIDDEN = {"script", "style", "head", "nav"}

    def __init__(self):
        super().__init__()
        self._hidden = 0
        self._anchor_hidden: list[bool] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            # Sphinx's "¶" permalinks are not text.
            hide = "headerlink" in (dict(attrs).get("class") or "")
            self._anchor_hidden.append(hide)
            self._hidden += hide
        elif tag in self.HIDDEN:
            self._hidden += 1
        elif tag in self.BLOCKS:
            self._flush()
        if tag == "pre":
            self._verbatim += 1

    def handle_endtag(self, tag):
        if tag == "a":
            if self._anchor_hidden and self._anchor_hidden.pop():
                self._hidden -= 1
        elif tag in self.HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in self.BLOCKS:
            self._flush()
        if tag == "pre":
            self._verbatim = max(0, self._verbatim - 1)

    def handle_data(self, data):
        if not self._hidden:
            self._text.append(data)


def _read_text(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix in (".gz", ".dz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        yield from f


def _read_html(path: Path) -> Iterator[str]:
    return _read_page(path, _HTMLText)


class _PageText(_Lines):
    """Visible text of an HTML page or a GNOME help (Mallard) page: one line per block
    element, ``<pre>`` and ``<screen>`` line by line, without headers, footers, navigation
    bars, tables of contents and page metadata."""

    BLOCKS = _HTMLText.BLOCKS | {
        "article", "main", "figure", "details", "summary", "thead", "tbody", "tfoot",
        # Mallard
        "page", "subtitle", "desc", "item", "list", "steps", "terms", "tree", "note",
        "synopsis", "example", "quote", "cite", "media", "links"}
    VERBATIM = {"pre", "screen"}
    HIDDEN = {"script", "style", "head", "nav", "header", "footer", "aside", "noscript",
              "template", "svg", "math", "object", "info", "comment"}
    #: Hidden by class: DocBook's and Texinfo's navigation, Sphinx's sidebars, LibreOffice's
    #: debug footer, tables of contents and indexes.
    HIDDEN_CLASSES = {"navheader", "navfooter", "related", "sphinxsidebar", "footer",
                      "headerlink", "reportbug", "toc", "index", "indexdiv", "breadcrumbs",
                      "nav_table", "footer_version", "footer_report", "debug", "contents",
                      "toc_current", "toc_uplink", "navigation", "nav-bar", "navbar"}
    #: Only elements that are always closed can be hidden by class.
    CLOSED = {"div", "table", "span", "a", "ul", "ol", "section", "nav", "dl"}
    VOID = {"br", "img", "hr", "meta", "link", "input", "area", "base", "col", "embed",
            "param", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self._hidden: str | None = None  # the hidden element's tag
        self._depth = 0  # its nesting depth

    def handle_starttag(self, tag, attrs):
        if self._hidden is not None:
            self._depth += tag == self._hidden
            return
        if tag not in self.VOID and (tag in self.HIDDEN or (
                tag in self.CLOSED
                and set((dict(attrs).get("class") or "").split()) & self.HIDDEN_CLASSES)):
            self._hidden, self._depth = tag, 1
            return
        if tag in self.BLOCKS:
            self._flush()
        if tag in self.VERBATIM:
            self._verbatim += 1

    def handle_endtag(self, tag):
        if self._hidden is not None:
            if tag == self._hidden:
                self._depth -= 1
                if not self._depth:
                    self._hidden = None
            return
        if tag in self.BLOCKS:
            self._flush()
        if tag in self.VERBATIM:
            self._flush()
            self._verbatim = max(0, self._verbatim - 1)

    def handle_data(self, data):
        if self._hidden is None:
            self._text.append(data)


class _DoxygenText(_PageText):
    """A Doxygen page's text: its body is ``<div class="contents">``, its navigation tabs."""

    HIDDEN_CLASSES = (_PageText.HIDDEN_CLASSES - {"contents"}) | {"tabs", "navpath", "directory"}


#: roff's named characters (``\\(xx``, ``\\[xx]``) that occur in man pages.
_ROFF_CHARS = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "aq": "'", "dq": '"', "lq": "“", "rq": "”",
    "oq": "‘", "cq": "’", "Bq": "„", "bq": "‚", "Fo": "«", "Fc": "»", "fo": "‹", "fc": "›",
    "bu": "•", "co": "©", "rg": "®", "tm": "™", "de": "°", "ga": "`", "aa": "´", "ti": "~",
    "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "br": "|", "lB": "[", "rB": "]", "lC": "{",
    "rC": "}", "la": "⟨", "ra": "⟩", "<=": "≤", ">=": "≥", "!=": "≠", "==": "≡", "mu": "×",
    "di": "÷", "+-": "±", "->": "→", "<-": "←", "ua": "↑", "da": "↓", "sc": "§", "ps": "¶",
    "pc": "·", "at": "@", "sh": "#", "Do": "$", "Eu": "€", "eu": "€", "ct": "¢", "Po": "£",
    "Ye": "¥", "fm": "′", "sd": "″", "dg": "†", "dd": "‡", "no": "¬", "sq": "□", "OK": "✓",
    "ss": "ß", "'e": "é", "`e": "è", ":u": "ü", ":o": "ö", ":a": "ä", "'a": "á", "'o": "ó",
}
#: roff strings (``\\*x``, ``\\*(xx``, ``\\*[xx]``) of man(7) and mdoc(7).
_ROFF_STRINGS = {"lq": "“", "rq": "”", "R": "®", "Tm": "™", "Lq": "“", "Rq": "”"}
_ROFF_ESCAPE = re.compile(r"""\\(?:
      \((?P<two>..)
    | \[(?P<bracket>[^\]]*)\]
    | \*(?:\((?P<s2>..)|\[(?P<sb>[^\]]*)\]|(?P<s1>.))
    | [fFgkmnMYV](?:\(..|\[[^\]]*\]|.)
    | s[-+]?(?:\(\d\d|\[\d+\]|\d\d?)
    | [hvwxlLbDoXNRAZCSB]'[^']*'
    | (?P<one>.)
    )""", re.VERBOSE | re.DOTALL)
_ROFF_ONE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t",
             "'": "´", "`": "`", ".": ".", "_": "_"}
#: Requests and macros that end a paragraph and print nothing.
_ROFF_BREAKS = {"PP", "LP", "P", "sp", "br", "RS", "RE", "in", "ti", "bp", "ne", "HP", "PD",
                "Pp", "Lp", "Bl", "El", "Bd", "Ed", "Ss", "YS", "SY", "OP"}
#: Macros whose arguments are text (font changes; mdoc's inline macros).
_ROFF_ALTERNATING = {"BR", "RB", "IR", "RI", "BI", "IB"}
_ROFF_TEXT = {"B", "I", "SM", "SB", "Nm", "Fl", "Ar", "Pa", "Cm", "Xr", "Em", "Sy", "Li", "Ev",
              "Va", "Fn", "Ft", "Dv", "Er", "Ic", "Ql", "Dq", "Sq", "Pq", "Op", "It", "Nd", "An",
              "Ad", "Ms", "Tn", "Ux", "Bx", "Aq", "Brq", "Bq", "Qq", "Lk", "Mt", "UR", "MT"}


def _roff_unescape(text: str) -> str:
    def one(m: re.Match) -> str:
        if m["two"] is not None or m["bracket"] is not None:
            name = m["two"] if m["two"] is not None else m["bracket"]
            if re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
                return chr(int(name[1:], 16))
            return _ROFF_CHARS.get(name, "")
        name = m["s2"] or m["sb"] or m["s1"]
        if name is not None:
            return _ROFF_STRINGS.get(name, "")
        if m["one"] is not None:
            return _ROFF_ONE.get(m["one"], "")
        return ""

    return _ROFF_ESCAPE.sub(one, text)


def _roff_args(args: str) -> list[str]:
    """A macro's arguments: split at spaces, ``"..."`` grouping (``""`` inside is a quote).

    >>> _roff_args('foo "bar baz" "a ""b"" c" d')
    ['foo', 'bar baz', 'a "b" c', 'd']
    """
    return [(m[1].replace('""', '"') if m[1] is not None else m[2])
            for m in re.finditer(r'"((?:[^"]|"")*)"?|(\S+)', args)]


def _read_roff(path: Path) -> Iterator[str]:
    """A man page's prose, one paragraph per line: macros and escapes dropped, the words
    of font macros kept, tables (tbl) row by row, no-fill blocks line by line.

    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "x.1"
    >>> _ = page.write_text('.TH X 1\\n.SH NAME\\nx \\\\- do\\n.SH DESCRIPTION\\n'
    ...                     '.B x\\nreads\\n.IR file s\\n\\\\(em all of them.\\n.PP\\nNext.\\n')
    >>> list(_read_roff(page))
    ['NAME', 'x - do', 'DESCRIPTION', 'x reads files — all of them.', 'Next.']
    """
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        source = f.read()
    out: list[str] = []
    paragraph: list[str] = []
    nofill = tag_next = False
    table = None  # None, "format" (tbl options and format lines) or "data"
    skip_until = None

    def flush():
        if paragraph:
            out.append(" ".join(" ".join(paragraph).split()))
            paragraph.clear()

    def text(words: str):
        nonlocal tag_next
        if nofill or table:
            out.append(words)
        elif tag_next:
            flush()
            out.append(" ".join(words.split()))
            tag_next = False
        else:
            paragraph.append(words)

    for raw in source.split("\n"):
        line = re.sub(r'\\".*|\\#.*', "", raw)
        if skip_until is not None:
            if line.startswith(skip_until):
                skip_until = None
            continue
        if line[:1] in (".", "'"):
            m = re.match(r"[.'][ \t]*(\S*)[ \t]*(.*)", line)
            name, args = m[1], m[2]
            if name in ("de", "de1", "am", "ig"):
                skip_until = ".."
            elif name == "TS":
                flush()
                table = "format"
            elif name == "TE":
                table = None
            elif name in ("SH", "SS", "Sh"):
                flush()
                if args.strip():
                    out.append(" ".join(_roff_unescape(" ".join(_roff_args(args))).split()))
                else:
                    tag_next = True
            elif name == "TP":
                flush()
                tag_next = True
            elif name == "IP":
                flush()
                words = _roff_args(args)
                if words:
                    out.append(_roff_unescape(words[0]))
            elif name in ("nf", "EX"):
                flush()
                nofill = True
            elif name in ("fi", "EE"):
                flush()
                nofill = False
            elif name in _ROFF_BREAKS:
                flush()
            elif name in _ROFF_ALTERNATING or name in _ROFF_TEXT:
                words = _roff_args(args)
                if words:
                    joined = ("" if name in _ROFF_ALTERNATING else " ").join(words)
                    text(_roff_unescape(joined))
            continue  # any other request prints nothing we want
        if table == "format":
            if line.rstrip().endswith("."):
                table = "data"
            continue
        if table == "data":
            cells = [_roff_unescape(c.replace("T{", "").replace("T}", "")).strip()
                     for c in line.split("\t")]
            out.append(" ".join(c for c in cells if c))
            continue
        if not line.strip():
            if not nofill:
                flush()
            continue
        text(_roff_unescape(line))
    flush()
    return iter(out)


_ENGLISH_WORDS = frozenset(
    "the and that with this are from which you your will be it not or when if has have can "
    "there their they these been would should into only than other such what more about "
    "must does how use used using".split())
_WORD = re.compile(r"\w+")
#: Characters that some readers take for line ends, and other control characters.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")


def _looks_english(line: str) -> bool:
    """An English sentence left untranslated (or an old English original).

    >>> _looks_english("The source package is the foundation of everything in Debian.")
    True
    >>> _looks_english("Das Quellpaket ist die Grundlage von allem in Debian.")
    False
    """
    words = _WORD.findall(line.lower())
    english = sum(w in _ENGLISH_WORDS for w in words)
    return english >= 2 and english >= 0.15 * len(words)


def _clean(line: str) -> str:
    return _CONTROL.sub(" ", line).rstrip()
