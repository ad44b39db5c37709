"""Parallel text from Debian's translation catalogs: the compiled gettext ``.mo`` files of
the installed packages, split into training, dev and held-out text per locale."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from benches.corpora.cache import cache_dir


#: Parallel text (``catalogs``): Debian's translation catalogs, compiled gettext ``.mo``
#: files under ``/usr/share/locale/LOCALE/LC_MESSAGES`` of the installed packages.
#: English is the catalogs' msgids (taken from one locale's catalogs, ``CATALOG_ENGLISH_FROM``).
LOCALE_DIR = Path("/usr/share/locale")
CATALOG_ENGLISH_FROM = "fr"
CATALOG_RECIPE = 1


def read_mo(path: str | os.PathLike) -> dict[bytes, bytes]:
    """The messages of a compiled gettext catalog, msgid -> msgstr (both UTF-8 as written).

    A ``.mo`` file is a header, then two tables of (length, offset) pairs: the
    originals, then the translations. Plural forms stay joined by NUL bytes.
    """
    import struct

    data = Path(path).read_bytes()
    order = "<" if struct.unpack("<I", data[:4])[0] == 0x950412DE else ">"
    _, n, originals, translations = struct.unpack(order + "4I", data[4:20])
    messages = {}
    for i in range(n):
        length, offset = struct.unpack(order + "2I", data[originals + 8 * i:originals + 8 * i + 8])
        tlength, toffset = struct.unpack(order + "2I",
                                         data[translations + 8 * i:translations + 8 * i + 8])
        messages[data[offset:offset + length]] = data[toffset:toffset + tlength]
    return messages


def _catalog_messages(locale: str) -> dict[tuple[str, bytes], bytes]:
    """(domain, msgid) -> text of every translated message of ``locale`` ("en": the msgids)."""
    source = CATALOG_ENGLISH_FROM if locale == "en" else locale
    out = {}
    for path in sorted((LOCALE_DIR / source / "LC_MESSAGES").glob("*.mo")):
        for msgid, msgstr in read_mo(path).items():
            # Skip the header (empty msgid), plural and context entries (NUL, EOT inside).
            if not msgid or not msgstr or b"\x00" in msgid or b"\x04" in msgid:
                continue
            out[(path.stem, msgid)] = msgid if locale == "en" else msgstr
    return out


def _catalog_lines(text: bytes) -> list[bytes]:
    return [line.strip() for line in text.decode("utf-8", "replace").encode().split(b"\n")
            if line.strip()]


def catalogs(locales: list[str], directory: Path | None = None) -> Path:
    """Training, dev and held-out text per locale from the translation catalogs; returns the
    directory holding ``train/LOCALE.txt``, ``dev/LOCALE.txt`` and ``heldout/LOCALE.txt``
    (one message line per line) and ``manifest.json``.

    A *parallel* message is one (domain, msgid) that every locale translates. Its
    SHA-256 digest puts one in eight of them in the dev set and one in eight in the
    held-out set, the same message in every locale (parallel text: same content, each
    language's own translation). Everything else each locale has, parallel or not,
    is its training text, with the dev and held-out messages' lines left out wherever
    they occur. Nothing is repeated or machine-translated.
    """
    name = f"catalogs-v{CATALOG_RECIPE}-" + "-".join(locales)
    directory = directory or cache_dir() / name
    if (directory / "manifest.json").exists():
        return directory
    messages = {locale: _catalog_messages(locale) for locale in locales}
    shared = set.intersection(*(set(m) for m in messages.values()))
    held: dict[str, set] = {"dev": set(), "heldout": set()}
    for key in sorted(shared):
        digest = hashlib.sha256(key[0].encode() + b"\0" + key[1]).digest()[0] % 8
        if digest < 2:
            held["dev" if digest == 0 else "heldout"].add(key)
    stats = {}
    for part in ("train", "dev", "heldout"):
        (directory / part).mkdir(parents=True, exist_ok=True)
    for locale in locales:
        kept_out = {line for part in held.values() for key in part
                    for line in _catalog_lines(messages[locale][key])}
        parts = {"train": [], "dev": [], "heldout": []}
        seen = set()
        for key in sorted(messages[locale]):
            lines = _catalog_lines(messages[locale][key])
            part = next((p for p, keys in held.items() if key in keys), "train")
            for line in lines:
                if part == "train" and (line in kept_out or line in seen):
                    continue  # each training line once; no dev or held-out line in training
                seen.add(line)
                parts[part].append(line)
        for part, lines in parts.items():
            (directory / part / f"{locale}.txt").write_bytes(b"".join(l + b"\n" for l in lines))
        stats[locale] = {part: sum(len(l) + 1 for l in lines) for part, lines in parts.items()}
    info = {"recipe": CATALOG_RECIPE, "source": str(LOCALE_DIR) + "/LOCALE/LC_MESSAGES/*.mo",
            "english_from": CATALOG_ENGLISH_FROM, "parallel_messages": len(shared),
            "dev_messages": len(held["dev"]), "heldout_messages": len(held["heldout"]),
            "bytes": stats}
    (directory / "manifest.json").write_text(json.dumps(info, indent=1))
    return directory
