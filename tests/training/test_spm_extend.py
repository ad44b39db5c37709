"""Extending a sentencepiece BPE base: equal to a naive reference, every base ID kept, loadable.

The reference states the semantics on its own: each line normalised by sentencepiece's own
normaliser of the base, its meta pieces made boundaries, cut into words; the characters
within the coverage that the base lacks appended first; each word segmented by
sentencepiece's own encoder of the base (``SentencePieceProcessor.encode(word,
out_type=str)`` on an identity copy of it); then the naive loop of ``spm_naive`` (every pair
recounted at each step) with the base's pieces taken.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

sentencepiece = pytest.importorskip("sentencepiece")
from sentencepiece import sentencepiece_model_pb2 as pb2  # noqa: E402

import bytepair  # noqa: E402
from bytepair.learn.spm_pieces import PieceRules  # noqa: E402
from bytepair.learn.spm_loop import SpmLoop, learn_from_pieces  # noqa: E402
from bytepair.training.spm_extend import extend_sentencepiece  # noqa: E402
from bytepair.model.spm_model import SentencePieceModel  # noqa: E402
from helpers import assert_bad_input, examples, run  # noqa: E402
from spm_helpers import DATA, LLAMA, write_lines  # noqa: E402
import spm_naive  # noqa: E402

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6
#: The loops to hold equal: the Python one, and the compiled one when it is built.
LOOPS = [False] + ([True] if SpmLoop is not None else [])
BASES = {
    "defaults": dict(vocab_size=400, user_defined_symbols=["<tag>"], control_symbols=["<ctl>"]),
    "llama": dict(vocab_size=700, user_defined_symbols=["<tag>"], **LLAMA),
    "rules": dict(vocab_size=400, normalization_rule_name="identity", split_by_unicode_script=False,
                  split_by_number=False, max_sentencepiece_length=4, character_coverage=1.0),
    "suffix": dict(vocab_size=400, normalization_rule_name="nfkc_cf", treat_whitespace_as_suffix=True,
                   allow_whitespace_only_pieces=True),
    "suffix-identity": dict(vocab_size=400, normalization_rule_name="identity",
                            treat_whitespace_as_suffix=True, remove_extra_whitespaces=False),
}
# Mixed scripts, digits, runs of spaces, tabs, emoji, a combining mark, rare characters, and
# the text of meta pieces (which become boundaries).
TEXT = st.lists(st.sampled_from(["a", "ab", "the", "e", " ", "  ", "\t", "1", "23", "ж", "жя", "日本",
                                 "ひ", "😀", "\u0301", "ǅ", "<tag>", "<s>", "<0x41>", "ñ", "Ω"]),
                max_size=14).map("".join)


def train_base(directory: Path, **options) -> Path:
    lines = (DATA / "kjv-genesis-exodus.txt").read_bytes().split(b"\n")[:400]
    lines += ["the 12 apples, ひらがな, 日本語 and жизнь".encode(), "emoji 😀 <tag> ok".encode()]
    corpus = write_lines(lines, str(directory))
    prefix = directory / "base"
    with open("/dev/null", "w") as quiet:
        sentencepiece.SentencePieceTrainer.train(input=corpus, model_prefix=str(prefix), model_type="bpe",
                                                 num_threads=1, logstream=quiet, **options)
    return Path(f"{prefix}.model")


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, Path]:
    return {name: train_base(tmp_path_factory.mktemp(name), **options) for name, options in BASES.items()}


def proto_of(path: Path) -> pb2.ModelProto:
    proto = pb2.ModelProto()
    proto.ParseFromString(path.read_bytes())
    return proto


def options_of(proto: pb2.ModelProto) -> dict:
    """What the reference reads of the base's trainer spec."""
    spec = proto.trainer_spec
    names = ["split_by_whitespace", "treat_whitespace_as_suffix", "allow_whitespace_only_pieces"]
    return {name: getattr(spec, name) for name in names}


def naive_extension(path: Path, lines: list[str], vocab_size: int, coverage: float) -> list[tuple] | None:
    """The extended model's ``(piece, score, type)`` list, by the semantics stated plainly
    (None when no line holds text)."""
    proto = proto_of(path)
    o = options_of(proto)
    normalizer = sentencepiece.SentencePieceProcessor(model_file=str(path))  # ▁ as a suffix too
    metas = sorted({p.piece for p in proto.pieces if p.type != NORMAL}, key=len, reverse=True)
    sentences = []
    for line in lines:
        if not line or len(line.encode()) > proto.trainer_spec.max_sentence_length or "\u2585" in line:
            continue
        s = normalizer.normalize(line)
        for piece in metas:
            s = s.replace(piece, spm_naive.BOUNDARY)
        if s:
            sentences.append(s)
    if not sentences:
        return None
    known = {p.piece for p in proto.pieces}
    new_chars = [c for c in spm_naive.kept_chars(sentences, coverage) if c not in known]
    usable = {p.piece for p in proto.pieces if p.type == NORMAL} | set(new_chars)
    encoder = identity_encoder(proto)
    words = Counter()
    for s in sentences:
        for word in spm_naive.split_words(s, o):
            pieces = []
            for piece in encoder.encode(word, out_type=str):
                if piece in usable:
                    pieces.append(piece)
                else:  # an unknown run, as sentencepiece gives it: its characters
                    pieces.extend(c if c in usable else spm_naive.UNK_CHAR for c in piece)
            words[tuple(pieces)] += 1
    spec = proto.trainer_spec
    rules = PieceRules(**{name: getattr(spec, name) for name in PieceRules.__dataclass_fields__})
    room = vocab_size - len(proto.pieces) - len(new_chars)
    merged = spm_naive.learn([list(w) for w in words], list(words.values()), room, rules, known)
    lowest = min(p.score for p in proto.pieces)
    base = [(p.piece, p.score, p.type) for p in proto.pieces]
    return base + [(piece, lowest - 1 - i, NORMAL) for i, piece in enumerate(new_chars + merged)]


def identity_encoder(proto: pb2.ModelProto):
    """sentencepiece's own encoder of the base on text already normalised: no normaliser, no
    byte fallback (an unknown run comes back as its text)."""
    copy = pb2.ModelProto()
    copy.CopyFrom(proto)
    copy.normalizer_spec.Clear()
    copy.normalizer_spec.name = "identity"
    copy.normalizer_spec.add_dummy_prefix = False
    copy.normalizer_spec.remove_extra_whitespaces = False
    copy.normalizer_spec.escape_whitespaces = False
    copy.trainer_spec.byte_fallback = False
    for piece in copy.pieces:
        if piece.type == BYTE:
            piece.type = CONTROL
    return sentencepiece.SentencePieceProcessor(model_proto=copy.SerializeToString())


def extended(path: Path, lines: list[str], directory: Path, **options):
    corpus = write_lines([line.encode() for line in lines], str(directory))
    return extend_sentencepiece(path, corpus, **options)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(TEXT, min_size=1, max_size=10), extra=st.integers(1, 40),
       coverage=st.sampled_from([0.0, 0.9995, 1.0]), name=st.sampled_from(sorted(BASES)))
def test_equal_to_the_naive_reference(bases, tmp_path, lines, extra, coverage, name):
    path = bases[name]
    size = len(proto_of(path).pieces)
    reference = naive_extension(path, lines, 10 ** 6, coverage)
    if reference is None:
        with pytest.raises(ValueError, match="no characters"):
            extended(path, lines, tmp_path, vocab_size=size + extra, character_coverage=coverage)
        return
    new_chars = sum(1 for p, _, t in reference[size:] if len(p) == 1)
    vocab = size + new_chars + extra
    reference = naive_extension(path, lines, vocab, coverage)
    for compiled in LOOPS:
        model = extended(path, lines, tmp_path, vocab_size=vocab, character_coverage=coverage,
                         compiled=compiled)
        assert model.pieces == reference


# Words that start as pieces (a base being extended): pieces of several characters, the
# unknown U+2585, and ``taken`` strings that no merge may make.
PIECE = st.sampled_from(["a", "b", "ab", "ba", "aab", "\u2581", "\u2581a", "日", "ひ", "1", "\u2585"])
PIECE_WORD = st.lists(PIECE, max_size=8).map(tuple)
TAKEN = st.sets(st.sampled_from(["aa", "abab", "aba", "\u2581ab", "bb", "日ひ"]))


@settings(max_examples=examples(200))
@given(words=st.dictionaries(PIECE_WORD, st.integers(1, 5), max_size=10), merges=st.integers(0, 40),
       rules=st.builds(PieceRules, max_sentencepiece_length=st.integers(1, 8),
                       split_by_unicode_script=st.booleans(), split_digits=st.booleans(),
                       allow_whitespace_only_pieces=st.booleans()), taken=TAKEN)
def test_loop_from_pieces_equals_the_naive_loop(words, merges, rules, taken):
    pieces = {piece for word in words for piece in word if len(piece) > 1}  # pieces already
    naive = spm_naive.learn([list(w) for w in words], list(words.values()), merges, rules, taken | pieces)
    for compiled in LOOPS:
        assert learn_from_pieces(words, merges, rules, taken=taken, compiled=compiled) == naive


def test_two_splits_of_one_string_tie_to_the_shorter_left_side():
    # (a, bc) and (ab, c) both spell "abc", as often: the shorter left side is merged, and
    # "ab c" is then dropped as made already.
    words = {("ab", "c", "xz"): 1, ("a", "bc", "yz"): 1}
    for compiled in LOOPS:
        assert learn_from_pieces(words, 2, compiled=compiled) == ["abc", "cxz"]


def test_a_pair_that_spells_a_base_piece_is_dropped(tmp_path):
    # The base encodes "abcd" as a|bc|d; once "abc" is made, (abc, d) spells the base's
    # "abcd" and is dropped, as spm_train drops a piece made already: no piece twice.
    pieces = [("<unk>", 0.0, UNKNOWN), ("bc", -1.0, NORMAL), ("ab", -2.0, NORMAL), ("cd", -3.0, NORMAL),
              ("abcd", -4.0, NORMAL)] + [(c, -5.0 - i, NORMAL) for i, c in enumerate("abcd")]
    base = SentencePieceModel(pieces, normalizer={"name": "identity", "add_dummy_prefix": False})
    assert base.encode_pieces("abcd") == ["a", "bc", "d"]
    for compiled in LOOPS:
        model = extended(base, ["abcd"] * 3, tmp_path, vocab_size=11, compiled=compiled)
        assert [p for p, _, _ in model.pieces[9:]] == ["abc", "bcd"]
    bytepair.save_sentencepiece(model, tmp_path / "m.model")
    assert sentencepiece.SentencePieceProcessor(model_file=str(tmp_path / "m.model")).vocab_size() == 11


@pytest.fixture(scope="module")
def llama_extended(bases, tmp_path_factory) -> tuple[Path, Path]:
    """The Llama-like base extended on multilingual text, and its .model file."""
    directory = tmp_path_factory.mktemp("llama-extended")
    model = extend_sentencepiece(bases["llama"], DATA / "multilingual-sample.txt", vocab_size=1200)
    out = directory / "extended.model"
    bytepair.save_sentencepiece(model, out)
    return bases["llama"], out


def test_every_base_piece_keeps_its_id_score_and_type(llama_extended):
    base_path, out = llama_extended
    base = sentencepiece.SentencePieceProcessor(model_file=str(base_path))
    ours = sentencepiece.SentencePieceProcessor(model_file=str(out))
    assert ours.vocab_size() == 1200
    for i in range(base.vocab_size()):
        assert (ours.id_to_piece(i), ours.get_score(i)) == (base.id_to_piece(i), base.get_score(i))
        assert [f(i) for f in (ours.is_unknown, ours.is_control, ours.is_byte, ours.is_unused)] == \
            [f(i) for f in (base.is_unknown, base.is_control, base.is_byte, base.is_unused)]
    proto, base_proto = proto_of(out), proto_of(base_path)
    assert [(p.piece, p.score, p.type) for p in proto.pieces[:len(base_proto.pieces)]] == \
        [(p.piece, p.score, p.type) for p in base_proto.pieces]
    new = proto.pieces[len(base_proto.pieces):]
    assert {p.type for p in new} == {NORMAL}
    scores = [p.score for p in new]
    assert scores == sorted(scores, reverse=True) and scores[0] < min(p.score for p in base_proto.pieces)
    assert proto.normalizer_spec == base_proto.normalizer_spec
    assert proto.trainer_spec.vocab_size == 1200


def test_meta_pieces_are_never_merged(llama_extended, bases, tmp_path):
    _, out = llama_extended
    lines = ["<tag>the<tag>the <s>the</s> <0x41>the <unk>x"] * 20
    model = extended(bases["llama"], lines, tmp_path, vocab_size=720)
    metas = [p for p, _, t in model.pieces if t != NORMAL]
    for piece, _, kind in model.pieces[700:]:
        assert kind == NORMAL
        assert not any(meta in piece for meta in metas) and "\x1f" not in piece
        assert not (set(piece) & set("<>")) or len(piece) == 1


def test_characters_outside_the_coverage_never_merge(bases, tmp_path):
    lines = ["жизнь жизнь жизнь ok ok"] * 5
    model = extended(bases["defaults"], lines, tmp_path, vocab_size=410, character_coverage=0.0)
    assert not any(set(piece) & set("жизнь") for piece, _, _ in model.pieces[400:])
    model = extended(bases["defaults"], lines, tmp_path, vocab_size=420, character_coverage=1.0)
    assert {"ж", "и", "з", "н", "ь"} <= {piece for piece, _, _ in model.pieces[400:]}


@pytest.fixture(scope="module")
def every_extended(bases, tmp_path_factory) -> dict[str, Path]:
    """Each base extended on multilingual text, as .model files."""
    out = {}
    for name, path in bases.items():
        model = extend_sentencepiece(path, DATA / "multilingual-sample.txt",
                                     vocab_size=len(proto_of(path).pieces) + 600)
        out[name] = tmp_path_factory.mktemp(name) / "extended.model"
        bytepair.save_sentencepiece(model, out[name])
    return out


@settings(max_examples=examples(100), deadline=None)
@given(text=TEXT, name=st.sampled_from(sorted(BASES)))
def test_sentencepiece_encodes_the_extension_as_bytepair_does(every_extended, text, name):
    out = every_extended[name]
    ours = bytepair.load(out)
    theirs = sentencepiece.SentencePieceProcessor(model_file=str(out))
    assert ours.encode(text) == theirs.encode(text)
    assert ours.decode(ours.encode(text)) == theirs.decode(theirs.encode(text))


@settings(max_examples=examples(100), deadline=None)
@given(text=TEXT.filter(lambda text: "<" not in text),
       name=st.sampled_from(["llama", "rules", "suffix-identity"]))
def test_tokenizer_json_of_every_extension_encodes_as_sentencepiece(every_extended, text, name):
    # Differences of the export of any model, not of extending, are left out: text holding a
    # user-defined symbol (the export matches it before the dummy prefix is put, sentencepiece
    # after), and the NFKC bases (tokenizers' Precompiled differs on runs of combining marks).
    tokenizers = pytest.importorskip("tokenizers")
    out = every_extended[name]
    exported = out.with_suffix(".json")
    if not exported.exists():
        bytepair.export_sentencepiece(bytepair.load(out), exported)
    hf = tokenizers.Tokenizer.from_file(str(exported))
    theirs = sentencepiece.SentencePieceProcessor(model_file=str(out))
    assert hf.encode(text, add_special_tokens=False).ids == theirs.encode(text)


def test_tokenizer_json_of_the_extension_encodes_the_same(llama_extended, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    _, out = llama_extended
    model = bytepair.load(out)
    bytepair.export_sentencepiece(model, tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    theirs = sentencepiece.SentencePieceProcessor(model_file=str(out))
    for line in (DATA / "multilingual-sample.txt").read_text().splitlines()[:200]:
        assert hf.encode(line, add_special_tokens=False).ids == theirs.encode(line), line


def test_extend_takes_a_sentencepiece_base(bases, tmp_path):
    corpus = write_lines([b"new words here, new words"] * 3, str(tmp_path))
    model = bytepair.extend(bases["defaults"], corpus, vocab_size=405)
    assert isinstance(model, bytepair.SentencePieceModel) and len(model) == 405
    again = bytepair.extend(model, corpus, vocab_size=406)
    assert again.pieces[:405] == model.pieces[:405]
    with pytest.raises(ValueError, match="^pattern: not an option for a sentencepiece base"):
        bytepair.extend(bases["defaults"], corpus, vocab_size=405, pattern="gpt2")


def test_bad_input_is_one_clear_line(bases, tmp_path, capsys):
    corpus = write_lines([b"some text"], str(tmp_path))
    with pytest.raises(ValueError, match="must be larger than the 400 pieces"):
        extend_sentencepiece(bases["defaults"], corpus, vocab_size=399)
    with pytest.raises(ValueError, match="leaves room for 1 new pieces"):
        extend_sentencepiece(bases["defaults"], write_lines(["жизнь".encode()], str(tmp_path)),
                             vocab_size=401, character_coverage=1.0)
    prefix = tmp_path / "uni"
    with open("/dev/null", "w") as quiet, capsys.disabled():
        sentencepiece.SentencePieceTrainer.train(input=corpus, model_prefix=str(prefix), model_type="unigram",
                                                 vocab_size=12, logstream=quiet, hard_vocab_limit=False)
    with pytest.raises(ValueError, match="type unigram, which bytepair does not read"):
        extend_sentencepiece(f"{prefix}.model", corpus, vocab_size=100)
    (tmp_path / "out").mkdir()
    assert_bad_input(capsys, tmp_path / "out", ["extend", f"{prefix}.model", corpus, "--vocab-size", "100",
                                                "-o", str(tmp_path / "out" / "x.model")], "type unigram")


def test_command_line(bases, tmp_path, capsys):
    out = tmp_path / "out.model"
    code, _, err = run(capsys, "extend", str(bases["llama"]), str(DATA / "multilingual-sample.txt"),
                       "--vocab-size", "1200", "-o", str(out))
    assert code == 0, err
    assert "700 + 500 new pieces = 1,200" in err
    theirs = sentencepiece.SentencePieceProcessor(model_file=str(out))
    assert theirs.vocab_size() == 1200
    assert theirs.id_to_piece(699) == proto_of(bases["llama"]).pieces[699].piece
    code, _, err = run(capsys, "extend", str(bases["llama"]), str(DATA / "multilingual-sample.txt"),
                       "--vocab-size", "1200", "-o", str(tmp_path / "out.json"), "--to", "tokenizers")
    assert code == 0, err
    assert (tmp_path / "out.json").read_text().startswith("{")
    corpus = str(DATA / "multilingual-sample.txt")
    assert_bad_input(capsys, tmp_path, ["extend", str(bases["llama"]), corpus, "--vocab-size", "600",
                                        "-o", str(tmp_path / "x.model")], "vocab_size", "700")
    assert_bad_input(capsys, tmp_path, ["extend", str(bases["llama"]), corpus, "--vocab-size", "800",
                                        "-o", str(tmp_path / "x.model"), "--to", "tiktoken"], "--to tiktoken")
    assert_bad_input(capsys, tmp_path, ["extend", str(bases["llama"]), corpus, "--vocab-size", "800",
                                        "-o", str(tmp_path / "x.model"), "--min-frequency", "3"],
                     "--min-frequency")
    assert_bad_input(capsys, tmp_path, ["extend", str(bases["llama"]), corpus, "--vocab-size", "800",
                                        "-o", str(tmp_path / "x.model"), "--eval",
                                        str(tmp_path / "none.txt")],
                     "--eval", "none.txt")
    code, out, err = run(capsys, "extend", str(bases["llama"]), corpus, "--vocab-size", "1200", "-o",
                         str(tmp_path / "e.model"), "--eval", f"{corpus}=multi")
    assert code == 0 and out.startswith("multi: ") and "bytes per token" in out, err
