"""What the corpus builders share: round robin over streams of lines, each line once;
writing a corpus and its manifest; prefixes of a built corpus or of a file of the user's."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Iterator

from benches.corpora.cache import cache_dir
from benches.corpora.debian import _log


#: Bytes of whole lines taken from one source before moving to the next.
BLOCK = 16_384


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=8).digest()


def _interleave(streams: list[Iterator[bytes]], out,
                seen: set | None) -> tuple[int, int, list, list]:
    """Round robin over ``streams``, about ``BLOCK`` bytes of whole lines from each in turn,
    writing each line not in ``seen`` (then adding it) to ``out``. Returns the bytes and
    lines written, per stream ``[lines, bytes, duplicate lines, duplicate bytes]``, and the
    blocks as ``[stream index, end offset]``."""
    counts = [[0, 0, 0, 0] for _ in streams]
    blocks: list[list[int]] = []
    total = lines = 0
    alive = list(enumerate(streams))
    while alive:
        still = []
        for index, stream in alive:
            taken = 0
            for data in stream:
                if seen is not None:
                    key = _digest(data)
                    if key in seen:
                        counts[index][2] += 1
                        counts[index][3] += len(data)
                        continue
                    seen.add(key)
                out.write(data)
                total += len(data)
                lines += 1
                taken += len(data)
                counts[index][0] += 1
                counts[index][1] += len(data)
                if taken >= BLOCK:
                    still.append((index, stream))
                    break
            if taken:
                if blocks and blocks[-1][0] == index:
                    blocks[-1][1] = total
                else:
                    blocks.append([index, total])
        alive = still
    return total, lines, counts, blocks


def _write_built(path: Path, write, info: dict, blocks: list | None = None) -> Path:
    """Build ``path`` with ``write(out) -> dict`` into a temporary file, then its manifest
    (``info``, what ``write`` returned, SHA-256, build time) and block map beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as out:
            info.update(write(out))
        info["sha256"] = _sha256(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    info["built_seconds"] = round(time.perf_counter() - started, 2)
    blocks = info.pop("blocks", None)
    if blocks is not None:
        path.with_suffix(".blocks.json").write_text(json.dumps(blocks) + "\n")
    path.with_suffix(".json").write_text(json.dumps(info, indent=1, ensure_ascii=False) + "\n")
    _log(f"built {path} ({info['bytes']:,} bytes, {info['lines']:,} lines) in "
         f"{info['built_seconds']} s")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


def _fraction(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def manifest(path: Path) -> dict:
    """The manifest written beside a built corpus, or a minimal one for any other file."""
    side = Path(path).with_suffix(".json")
    if side.exists():
        return json.loads(side.read_text())
    return dict(recipe=None, bytes=Path(path).stat().st_size, sources=[dict(name=str(path))])


def _prefix_of(full: Path, size: int, name: str) -> Path:
    """The first ``size`` bytes of ``full`` cut at a line boundary, cached as ``name``, with
    a manifest that says how many bytes of each block map entry it holds."""
    out = cache_dir() / name
    if out.exists() and out.with_suffix(".json").exists():
        return out
    with open(full, "rb") as f:
        head = f.read(size)
    cut = head.rfind(b"\n") + 1
    if not cut:
        raise ValueError(f"{full}: no line ends within the first {size:,} bytes")
    head = head[:cut]
    whole = manifest(full)
    parts: dict[str, list[int]] = {}
    blocks_file = full.with_suffix(".blocks.json")
    if blocks_file.exists():
        start = 0
        for part, end in json.loads(blocks_file.read_text()):
            if start >= cut:
                break
            piece = parts.setdefault(part, [0, 0])
            piece[0] += head.count(b"\n", start, min(end, cut))
            piece[1] += min(end, cut) - start
            start = end

    def write(f) -> dict:
        f.write(head)
        return dict(bytes=len(head), lines=head.count(b"\n"))

    info = dict(recipe=whole.get("recipe"), language=whole.get("language"), requested=size,
                prefix_of=full.name, prefix_of_sha256=whole.get("sha256"),
                parts=[dict(name=k, lines=v[0], bytes=v[1]) for k, v in parts.items()])
    return _write_built(out, write, info)


def _custom_prefix(path: Path, size: int | None) -> Path:
    path = path.expanduser().resolve()
    st = path.stat()
    if size is None or st.st_size <= size:
        return path
    tag = hashlib.sha256(f"{path}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:12]
    out = cache_dir() / f"custom-{path.stem}-{tag}-{size}.txt"
    if out.exists():
        return out
    with open(path, "rb") as f:
        head = f.read(size)
    cut = head.rfind(b"\n")
    if cut < 0:
        raise ValueError(f"{path}: no line ends within the first {size:,} bytes")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_bytes(head[: cut + 1])
    os.replace(tmp, out)
    return out


def _remove(path: Path) -> None:
    for p in (path, path.with_suffix(".json"), path.with_suffix(".blocks.json")):
        p.unlink(missing_ok=True)
