"""The viewer on a sentencepiece BPE ``.model``: sentencepiece's IDs and pieces, shown alone,
no merge tree; models of other types refused in one line."""

from __future__ import annotations

import http.client
import json

import pytest
from hypothesis import given, settings, strategies as st

spm = pytest.importorskip("sentencepiece")

import bytepair  # noqa: E402
from bytepair.teach.viewer import Viewer, ViewerError, load_viewer_model, load_viewer_models  # noqa: E402
from helpers import examples, run  # noqa: E402
from spm_helpers import LLAMA, train_model_file  # noqa: E402


def _train(folder, name: str, multilingual: int, **options) -> str:
    return train_model_file(folder, name, 500, multilingual, **options)


@pytest.fixture(scope="module")
def spm_path(tmp_path_factory):
    return _train(tmp_path_factory.mktemp("spm"), "m", 40, model_type="bpe", vocab_size=900, **LLAMA)


@pytest.fixture(scope="module")
def viewer_models(spm_path, tmp_path_factory):
    path = tmp_path_factory.mktemp("bytepair") / "tok.json"
    bytepair.train(["low lower lowest"] * 3, merges=6, pretokenize="gpt2", progress=False).save(path)
    return load_viewer_models([spm_path, str(path)])


def post(server, path, payload):
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=10)
    try:
        connection.request("POST", path, body=json.dumps(payload).encode(),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_the_server_shows_sentencepieces_ids_and_pieces(teach_server, spm_path, viewer_models):
    processor = spm.SentencePieceProcessor(model_file=spm_path)
    server = teach_server(viewer_models)
    status, info = post(server, "/api/viewer/info", {})
    assert status == 200
    assert info["models"][0] == {"name": "m.model", "vocab_size": 900, "merges": 0,
                                 "kind": "sentencepiece", "superbpe_transition": None,
                                 "special_tokens": {"<unk>": 0, "<s>": 1, "</s>": 2}}
    text = "In the beginning 1234 日本 😀"
    status, answer = post(server, "/api/viewer/encode", {"text": text, "models": ["m.model"]})
    assert status == 200, answer
    result, = answer["results"]
    assert result["ids"] == processor.encode(text) and result["tokens"] == len(result["ids"])
    for token, (shown, kind) in result["pieces"].items():
        piece = processor.id_to_piece(int(token))
        if processor.is_byte(int(token)):
            assert (kind, f"<0x{shown}>") == ("bytes", piece)
        else:
            assert (kind, shown) == ("text", piece)
    assert "bytes" in {kind for _, kind in result["pieces"].values()}  # byte fallback shown
    status, answer = post(server, "/api/viewer/tree", {"model": "m.model", "id": 300})
    assert status == 400 and "no merge tree" in answer["error"]
    status, answer = post(server, "/api/viewer/encode", {"text": text,
                                                         "models": ["m.model", "tok.json"]})
    assert status == 400 and "shown alone" in answer["error"]
    status, answer = post(server, "/api/viewer/encode", {"text": text, "models": ["tok.json"]})
    assert status == 200 and "differs" not in answer["results"][0]


@settings(deadline=None, max_examples=examples(100))
@given(text=st.text(st.one_of(st.sampled_from(list("the God 0123456789  \t\n\x00日本😀\u2581")),
                              st.characters(max_codepoint=0x2FFF, exclude_categories=("Cs",))),
                    max_size=40),
       start=st.integers(0, 5), limit=st.integers(1, 50))
def test_hyp_windows_are_sentencepieces_encoding(viewer_models, spm_path, text, start, limit):
    processor = spm.SentencePieceProcessor(model_file=spm_path)
    result = Viewer(viewer_models).handle(
        "encode", {"text": text, "models": ["m.model"], "start": start, "limit": limit})["results"][0]
    ids = processor.encode(text)
    assert result["tokens"] == len(ids) and result["ids"] == ids[start:start + limit]


@pytest.fixture(scope="module", params=["unigram", "char", "word"])
def other_type(request, tmp_path_factory):
    kind = request.param
    folder = tmp_path_factory.mktemp(kind)
    return kind, _train(folder, kind, 0, model_type=kind, vocab_size=70 if kind == "char" else 300)


def test_other_model_types_are_refused_in_one_line(capsys, other_type):
    kind, path = other_type
    with pytest.raises(ValueError, match=f"sentencepiece model of type {kind}, which bytepair "
                                         "does not read") as caught:
        load_viewer_model(path)
    assert "\n" not in str(caught.value)
    code, out, err = run(capsys, "workbench", path, "--no-browser", "--port", "0")
    assert code == 2 and err.count("\n") == 1 and f"of type {kind}" in err, err


def test_viewer_refuses_a_tree_directly(viewer_models):
    with pytest.raises(ViewerError, match="no merge tree"):
        Viewer(viewer_models).handle("tree", {"model": "m.model", "id": 5})
