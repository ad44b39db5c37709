"""The viewer's answers: IDs from Tokenizer.encode, differing spans, models, curves."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

import bytepair
from bytepair.teach.viewer import (MAX_MODELS, Viewer, ViewerError, curves_of_evaluation,
                                   differing_spans, load_viewer_model, load_viewer_models)

TEXT = "low lower lowest newest widest\n" * 4 + "naïve café 日本語 Привет <|end|>"


@pytest.fixture(scope="module")
def models():
    corpus = [TEXT] * 3
    return {
        "words": bytepair.train(corpus, merges=40, pretokenize="gpt2", special_tokens=["<|end|>"],
                                progress=False),
        "bytes": bytepair.Tokenizer(bytepair.train_bytes(corpus, 60)),
    }


@given(st.text(alphabet="lowe ré日\n\t\x00", max_size=40))
def test_encode_shows_the_library_ids(models, text):
    viewer = Viewer(models)
    answer = viewer.handle("encode", {"text": text, "models": ["words", "bytes"]})
    assert answer["bytes"] == len(text.encode()) and answer["characters"] == len(text)
    for result in answer["results"]:
        tok = models[result["model"]]
        assert result["ids"] == tok.encode(text, allowed_special="all")
        assert set(result["pieces"]) == set(result["ids"])
        for token, (shown, kind) in result["pieces"].items():
            data = tok.token_bytes(token)
            if kind == "bytes":
                assert bytes.fromhex(shown) == data
                with pytest.raises(UnicodeDecodeError):
                    data.decode()
            else:
                assert shown == data.decode()
    lengths = [[len(models[r["model"]].token_bytes(t)) for t in r["ids"]] for r in answer["results"]]
    assert [r["differs"] for r in answer["results"]] == differing_spans(lengths)
    alone = viewer.handle("encode", {"text": text, "models": ["bytes"]})["results"][0]
    assert "differs" not in alone and alone["ids"] == answer["results"][1]["ids"]


def test_special_tokens_and_partial_bytes(models):
    result = Viewer(models).encode("日 <|end|>", ["words"])["results"][0]
    kinds = [result["pieces"][t][1] for t in result["ids"]]
    assert kinds[-1] == "special" and result["ids"][-1] == models["words"].special_tokens["<|end|>"]
    byte_model = Viewer({"b": bytepair.Tokenizer(bytepair.train_bytes(["ab"], 1))})
    pieces = byte_model.encode("日", ["b"])["results"][0]["pieces"]
    assert pieces == {0xE6: ("E6", "bytes"), 0x97: ("97", "bytes"), 0xA5: ("A5", "bytes")}


def spans(lengths):
    start, out = 0, []
    for n in lengths:
        out.append((start, start + n))
        start += n
    return out


@given(st.lists(st.lists(st.integers(1, 3), max_size=8), min_size=1, max_size=4))
def test_differing_spans(rows):
    # Several tokenizations of one text: cut every row to the shortest total so they agree.
    total = min(sum(r) for r in rows)
    cut = []
    for row in rows:
        kept, size = [], 0
        for n in row:
            if size + n > total:
                break
            kept.append(n)
            size += n
        if size < total:
            kept.append(total - size)
        cut.append(kept)
    flags = differing_spans(cut)
    for i, row in enumerate(cut):
        others = [set(spans(r)) for j, r in enumerate(cut) if j != i]
        assert flags[i] == [0 if all(s in o for o in others) else 1 for s in spans(row)]
    if len(cut) == 1:
        assert flags == [[0] * len(cut[0])]


@pytest.mark.parametrize("payload, message", [
    ({"text": 3, "models": ["words"]}, "text: expected a string"),
    ({"text": "x" * 1_000_001, "models": ["words"]}, "more than the limit"),
    ({"text": "\ud800", "models": ["words"]}, "lone surrogate"),
    ({"text": "x", "models": []}, "models: expected a list of 1 to 4"),
    ({"text": "x", "models": ["words"] * (MAX_MODELS + 1)}, "models: expected a list"),
    ({"text": "x", "models": ["words", "words"]}, "named twice"),
    ({"text": "x", "models": ["nope"]}, "no model named 'nope'"),
    ({"text": "x", "models": [["words"]]}, "no model named"),
])
def test_bad_encode_requests(models, payload, message):
    with pytest.raises(ViewerError, match=message):
        Viewer(models).handle("encode", payload)


def test_bad_tree_and_action(models):
    viewer = Viewer(models)
    with pytest.raises(ViewerError, match="id: expected a token ID"):
        viewer.handle("tree", {"model": "words", "id": 10**6})
    with pytest.raises(ViewerError, match="JSON object"):
        viewer.handle("tree", [1])
    with pytest.raises(KeyError):
        viewer.handle("nope", {})
    assert viewer.handle("tree", {"model": "words", "id": 257})["tree"]["rank"] == 1


def test_info(models):
    info = Viewer(models, curves=[]).handle("info", {})
    assert [m["name"] for m in info["models"]] == ["words", "bytes"]
    assert info["models"][0]["vocab_size"] == models["words"].vocab_size
    assert info["models"][0]["special_tokens"] == {"<|end|>": models["words"].vocab_size - 1}


def test_every_model_format_loads(models, tmp_path):
    tok = models["words"]
    tok.save(tmp_path / "model.json")
    bytepair.to_tokenizers_json(tok, tmp_path / "tokenizer.json")
    bytepair.to_tiktoken(tok.model, tmp_path / "ranks.tiktoken")
    bytepair.to_transformers(tok, tmp_path / "hf", eos="<|end|>")
    loaded = load_viewer_models([str(tmp_path / "model.json"), str(tmp_path / "tokenizer.json"),
                                 str(tmp_path / "ranks.tiktoken") + ":gpt2", str(tmp_path / "hf"),
                                 str(tmp_path / "model.json")])
    assert list(loaded) == ["model.json", "tokenizer.json", "ranks.tiktoken", "hf", "model.json#2"]
    for name, other in loaded.items():
        assert other.encode_ordinary(TEXT) == tok.model.encode(TEXT), name
    name, from_option = load_viewer_model(str(tmp_path / "ranks.tiktoken"), pattern="gpt2")
    assert from_option.encode_ordinary(TEXT) == tok.model.encode(TEXT)


def test_models_that_cannot_be_shown(models, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.json").write_text("{")
    bytepair.to_tiktoken(models["words"].model, tmp_path / "ranks.tiktoken")
    bytepair.learn_words({"low": 5, "lower": 2}, 2).save(tmp_path / "words.model")
    for spec, message in [
        (tmp_path / "missing.json", "does not exist"),
        (tmp_path / "empty", "has no tokenizer.json"),
        (tmp_path / "bad.json", "not a bytepair model"),
        (tmp_path / "ranks.tiktoken", "holds no pattern"),
        (str(tmp_path / "ranks.tiktoken") + ":", "FILE:PATTERN"),
        (tmp_path / "words.model", "word-mode model"),
    ]:
        with pytest.raises(ValueError, match=message):
            load_viewer_model(str(spec))


def test_curves_of_evaluation(models, tmp_path):
    sample = tmp_path / "en.txt"
    sample.write_text(TEXT)
    table = bytepair.evaluate({"w": models["words"]}, {"en": bytepair.Files(str(sample))}, step=8)
    curves = curves_of_evaluation(json.loads(table.to_json()))
    rows = [r for r in table.rows if r["model"] == "w"]
    assert curves == [{"model": "w", "sample": "en", "sizes": [r["vocab_size"] for r in rows],
                       "bytes_per_token": [r["bytes_per_token"] for r in rows]}]
    for bad in ({}, {"rows": []}, {"rows": [{"model": "w"}]}, [1]):
        with pytest.raises(ValueError, match="--curves"):
            curves_of_evaluation(bad)


@given(st.text(alphabet="lowe ré日\n<|end>", max_size=60), st.integers(1, 7))
def test_windows_put_together_are_the_encoding(models, text, limit):
    """The page asks for the tokens a window at a time: the windows, put together, are
    Tokenizer.encode's IDs, and their differs and the count of differing tokens are those of
    the plain statement (differing_spans)."""
    viewer = Viewer(models)
    names = ["words", "bytes"]
    expected = {name: models[name].encode(text, allowed_special="all") for name in names}
    flags = differing_spans([[len(models[name].token_bytes(t)) for t in expected[name]]
                             for name in names])
    for k, name in enumerate(names):
        ids, differs, start = [], [], 0
        while True:
            answer = viewer.handle("encode", {"text": text, "models": names, "start": start,
                                              "limit": limit})
            result = answer["results"][k]
            assert result["tokens"] == len(expected[name]) and result["start"] == start
            assert result["differing"] == sum(flags[k])
            assert set(result["pieces"]) == set(result["ids"])
            if not result["ids"]:
                break
            ids += result["ids"]
            differs += result["differs"]
            start += len(result["ids"])
        assert ids == expected[name] and differs == flags[k]


def test_a_window_out_of_range_is_refused(models):
    viewer = Viewer(models)
    for payload in ({"start": -1}, {"limit": 0}, {"limit": 10**6}, {"start": "0"},
                    {"limit": True}):
        with pytest.raises(ViewerError, match="^(start|limit): expected a whole number"):
            viewer.handle("encode", dict({"text": "low", "models": ["words"]}, **payload))


def test_a_tiktoken_file_keeps_its_special_tokens(models, tmp_path, monkeypatch):
    tok = models["words"]
    tok.save(tmp_path / "model.json")
    bytepair.to_tiktoken(tok.model, tmp_path / "ranks.tiktoken")
    ranks = str(tmp_path / "ranks.tiktoken")
    # The special tokens go to the ranks file only; the bytepair model loads as it is.
    loaded = load_viewer_models([ranks + ":gpt2", str(tmp_path / "model.json")],
                                special_tokens=["<|end|>"])
    assert loaded["ranks.tiktoken"].special_tokens == {"<|end|>": tok.model.vocab_size}
    assert loaded["model.json"].special_tokens == tok.special_tokens
    # And from the command line, --special as the other commands take it.
    import bytepair.teach.server as server_module
    import bytepair.teach.viewer as viewer_module
    from bytepair.cli.main import main

    seen = {}

    class Recording(viewer_module.Viewer):
        def __init__(self, models, curves=None):
            seen.update(models)
            super().__init__(models, curves)

    def interrupted(self, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(viewer_module, "Viewer", Recording)
    monkeypatch.setattr(server_module.TeachServer, "serve_forever", interrupted)
    assert main(["workbench", "--no-browser", ranks, "--pattern", "gpt2",
                 "--special", "<|end|>", "--special", "<|pad|>"]) == 0
    assert seen["ranks.tiktoken"].special_tokens == {"<|end|>": tok.model.vocab_size,
                                                     "<|pad|>": tok.model.vocab_size + 1}


def test_a_ranks_file_without_a_pattern_gets_the_pattern_that_fits(models, tmp_path):
    def ranks_file(name, n):
        path = tmp_path / name
        path.write_text("".join(f"YQ== {i}\n" for i in range(n)))
        return str(path)

    for n, pattern, origin in [(100256, "cl100k", "cl100k_base"), (199998, "o200k", "o200k_base"),
                               (50256, "gpt2", "r50k_base")]:
        path = ranks_file(f"{n}.tiktoken", n)
        with pytest.raises(ValueError) as refused:
            load_viewer_model(path)
        message = str(refused.value)
        assert f"name it as {path + ':' + pattern!r} or with --pattern" in message
        assert f"its {n:,} ranks are {origin}'s" in message
        assert "cl100k" not in message or pattern == "cl100k"
    bytepair.to_tiktoken(models["words"].model, tmp_path / "own.tiktoken")
    with pytest.raises(ValueError) as refused:
        load_viewer_model(str(tmp_path / "own.tiktoken"))
    assert ":PATTERN" in str(refused.value)
    assert "one of gpt2, cl100k, o200k (or a regex)" in str(refused.value)


def test_special_tokens_without_a_tiktoken_file_are_refused(models, tmp_path):
    """Only a tiktoken ranks file takes --special: given to other models alone, nothing would
    take them, so the command refuses in one line rather than ignore them."""
    models["words"].save(tmp_path / "model.json")
    with pytest.raises(ValueError, match="^special_tokens: only a tiktoken ranks file"):
        load_viewer_models([str(tmp_path / "model.json")], special_tokens={"<|x|>": 300})
    done = subprocess.run([sys.executable, "-m", "bytepair", "workbench", str(tmp_path / "model.json"),
                           "--special", "<|x|>", "--no-browser"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--special: only a tiktoken ranks file" in done.stderr
