"""ties="tokenizers": the exported tokenizer.json equals Hugging Face BpeTrainer's.

BpeTrainer runs here with the configuration that docs/from-tokenizers.md gives
for each bytepair setting and ``decoders.ByteLevel()``; the whole documents are
compared as JSON text, so the order of keys counts too, and the files written
by ``to_tokenizers_json`` and ``Tokenizer.save`` byte for byte. ``like=`` (the
user's own pipeline) is checked the same way with decoders set or not.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.formats.export import to_tokenizers_json, tokenizers_json
from bytepair.learn import ties
from bytepair.learn.rules import Merge
from bytepair.split.dialects import hf_pattern
from bytepair.split.pretokenize import resolve_pattern
from helpers import DATA, KJV, KJV_REST_GZ, main

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers  # noqa: E402


def documented_pipeline(pattern: str | None = "gpt2", decoder=...) -> tokenizers.Tokenizer:
    """An untrained Tokenizer with the pre-tokenizer docs/from-tokenizers.md gives for
    bytepair's ``pretokenize=pattern``, and ``decoder`` (default ``decoders.ByteLevel()``)."""
    tok = tokenizers.Tokenizer(models.BPE())
    if pattern == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    elif pattern is None:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(hf_pattern(resolve_pattern(pattern))), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    decoder = decoders.ByteLevel() if decoder is ... else decoder
    if decoder is not None:
        tok.decoder = decoder
    return tok


def bpe_trainer(documents, vocab_size: int, special_tokens=(), min_frequency: int = 1,
                tok=None) -> tokenizers.Tokenizer:
    """``tok`` (default: the documented GPT-2 pipeline) trained by BpeTrainer on ``documents``."""
    tok = documented_pipeline() if tok is None else tok
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(special_tokens), min_frequency=min_frequency,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(documents, trainer)
    return tok


def bpe_trainer_json(documents, vocab_size: int, pattern: str | None = "gpt2",
                     special_tokens=(), min_frequency: int = 1) -> dict:
    """tokenizer.json of BpeTrainer trained on ``documents``, configured as bytepair's
    ``pretokenize=pattern`` (docs/from-tokenizers.md), with ``decoders.ByteLevel()``."""
    tok = bpe_trainer(documents, vocab_size, special_tokens, min_frequency,
                      documented_pipeline(pattern))
    return json.loads(tok.to_str())


def saved_text(tok: tokenizers.Tokenizer) -> bytes:
    """The bytes ``Tokenizer.save`` writes."""
    with tempfile.TemporaryDirectory() as root:
        tok.save(f"{root}/tokenizer.json")
        return Path(f"{root}/tokenizer.json").read_bytes()


def exported_text(tok, **options) -> bytes:
    """The bytes ``to_tokenizers_json`` writes."""
    with tempfile.TemporaryDirectory() as root:
        to_tokenizers_json(tok, f"{root}/tokenizer.json", **options)
        return Path(f"{root}/tokenizer.json").read_bytes()


def reuses_a_token(data: dict) -> bool:
    """Whether BpeTrainer gave some merge the ID of a token made before (see ties.check_distinct)."""
    model = data["model"]
    joined = [left + right for left, right in model["merges"]]
    made = len(model["vocab"]) - len(data["added_tokens"]) - 256
    return len(set(joined)) < len(joined) or made != len(joined)


def assert_same_file(ours: dict, theirs: dict) -> None:
    # Every key, in the file's order (json.dumps keeps it); the model section first, as its
    # difference (vocabulary, merges) says the most.
    assert json.dumps(ours["model"], ensure_ascii=False) == json.dumps(theirs["model"],
                                                                        ensure_ascii=False)
    assert json.dumps(ours, ensure_ascii=False) == json.dumps(theirs, ensure_ascii=False)


def train(documents, vocab_size: int, pattern="gpt2", special_tokens=(), **options):
    return bytepair.train(documents, vocab_size=vocab_size, pretokenize=pattern,
                          special_tokens=list(special_tokens), ties="tokenizers",
                          progress=False, **options)


# -- Hypothesis: tiny alphabets, ties, runs, multi-byte UTF-8 ------------------------------

LETTERS = st.sampled_from(["a", "b", "a", "b", " ", "é", "日", "\n", "!", "0", "\x00", "ÿ"])
DOCUMENT = st.one_of(
    st.lists(LETTERS, max_size=24).map("".join),
    st.tuples(LETTERS, st.integers(1, 12)).map(lambda run: run[0] * run[1]),  # runs like aaaa
)
PATTERNS = st.sampled_from(["gpt2", "cl100k", None])
SPECIALS = st.sampled_from([(), ("<s>",), ("<|endoftext|>", "<pad>")])


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(documents=st.lists(DOCUMENT, min_size=1, max_size=8), pattern=PATTERNS,
       specials=SPECIALS, extra=st.integers(0, 40), min_frequency=st.integers(1, 3))
def test_hyp_tokenizer_json_equals_bpe_trainer(documents, pattern, specials, extra, min_frequency):
    assume(any(documents))
    vocab_size = 256 + len(specials) + extra
    trained = bpe_trainer(documents, vocab_size, specials, min_frequency,
                          documented_pipeline(pattern))
    theirs = json.loads(trained.to_str())
    # BpeTrainer never gives a merge an existing token's ID (bytepair.learn.ties says why).
    assert not reuses_a_token(theirs)
    ours = train(documents, vocab_size, pattern, specials, min_frequency=min_frequency)
    assert_same_file(tokenizers_json(ours), theirs)
    assert exported_text(ours) == saved_text(trained)
    # The tokenizer gives out the IDs of the file it exports.
    sample = "".join(documents)
    assert ours.encode(sample) == tokenizers.Tokenizer.from_str(json.dumps(theirs)).encode(
        sample).ids


def test_bytepair_and_tokenizers_orders_differ_on_a_tie():
    documents = ["a a"]  # (a, space) and (space, a) are tied
    theirs = bpe_trainer_json(documents, 257, None)
    assert theirs["model"]["merges"] == [["a", "Ġ"]]
    assert tokenizers_json(train(documents, 257, None)) ["model"]["merges"] == [["a", "Ġ"]]
    default = bytepair.train(documents, vocab_size=257, pretokenize=None, progress=False)
    assert tokenizers_json(default)["model"]["merges"] == [["Ġ", "a"]]


def test_ids_follow_bpe_trainer_numbering():
    tok = train(["low lower lowest"] * 3, 262, special_tokens=["<s>", "</s>"])
    assert tok.special_tokens == {"<s>": 0, "</s>": 1}
    assert tok.encode("!") == [2]  # '!' is the alphabet's first character
    assert tok.encode(" ") == [2 + ties.POSITION[32]]
    assert sorted(tok.vocab().values()) == list(range(tok.vocab_size))


def test_relabelling_round_trips():
    assert sorted(ties.ALPHABET) == list(range(256))
    assert bytes(256).translate(ties.POSITION) == bytes([ties.POSITION[0]]) * 256
    data = bytes(range(256))
    assert data.translate(ties.POSITION).translate(ties.ALPHABET) == data
    assert [chr(c) for c in ties.ALPHABET[:3]] == ["!", '"', "#"]


# -- a duplicate spelling: BpeTrainer reuses an ID; bytepair refuses in one line --------------

def test_check_distinct_names_both_rules():
    a, b, c = b"abc"
    rules = [Merge(0, b, c, 256, 3, 3), Merge(1, a, b, 257, 2, 2),
             Merge(2, 257, c, 258, 2, 2), Merge(3, a, 256, 259, 1, 1)]
    ties.check_distinct(rules[:3])
    with pytest.raises(ValueError, match=r"merge 3 \(b'a' \+ b'bc'\) makes b'abc', which merge 2"):
        ties.check_distinct(rules)
    ties.check_distinct(rules, first=4)  # only the rules from `first` on are checked


# -- every equality bytepair holds, with ties="tokenizers" -----------------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("ties")
    lines = KJV.read_text(encoding="utf-8").splitlines()[:3000]
    paths = []
    for i in range(3):
        path = root / f"part{i}.txt"
        path.write_text("\n".join(lines[i::3]) + "\n", encoding="utf-8")
        paths.append(path)
    (root / "other.txt").write_text((DATA / "debian-non-english-sample.txt").read_text("utf-8"),
                                    encoding="utf-8")
    return paths + [root / "other.txt"]


def test_workers_one_equals_two(files):
    one = train(files, 1500, "cl100k", ["<s>"], workers=1)
    two = train(files, 1500, "cl100k", ["<s>"], workers=2)
    assert one == two and one.ids is not None


def test_count_tables_equal_files(files):
    tables = [bytepair.count(path, pretokenize="cl100k", workers=1) for path in files]
    assert train(tables, 1500, "cl100k", ["<s>"]) == train(files, 1500, "cl100k", ["<s>"])


def test_truncation_equals_training_to_the_smaller_size(files):
    large = train(files, 1500, "gpt2", ["<s>", "<pad>"])
    for size in (258, 700, 1499):
        small = train(files, size, "gpt2", ["<s>", "<pad>"])
        assert large.truncate(size) == small
        assert tokenizers_json(large.truncate(size)) == tokenizers_json(small)


def test_warm_start_equals_training_from_scratch(files):
    small = train(files, 700, "gpt2")
    assert train(files, 1500, "gpt2", init=small) == train(files, 1500, "gpt2")


def test_checkpoint_resume_equals_an_uninterrupted_run(files, tmp_path):
    whole = train(files, 900, "gpt2")
    saved = tmp_path / "run"
    train(files, 600, "gpt2", checkpoint=saved)
    assert train(files, 900, "gpt2", checkpoint=saved, resume=True) == whole
    with pytest.raises(ValueError, match="ties"):
        bytepair.train(files, vocab_size=900, pretokenize="gpt2", checkpoint=saved, resume=True,
                       progress=False)


def test_save_and_load_keep_the_numbering(files, tmp_path):
    tok = train(files, 600, "gpt2", ["<s>"])
    tok.save(tmp_path / "model.json")
    assert bytepair.load(tmp_path / "model.json") == tok


# -- settings that BpeTrainer has no equivalent of are refused in one line ------------------

def test_bad_ties_is_refused():
    with pytest.raises(ValueError, match=r"^ties must be one of 'bytepair', 'tokenizers', got 'hf'$"):
        bytepair.train(["ab"], vocab_size=257, ties="hf", progress=False)


def test_superbpe_is_refused():
    with pytest.raises(ValueError, match=r"^superbpe: ties='tokenizers' reproduces BpeTrainer"):
        bytepair.train(["ab ab"], vocab_size=300, superbpe=270, ties="tokenizers", progress=False)


def test_cli_superbpe_with_ties_is_one_line_and_no_file(files, tmp_path, capsys):
    out = tmp_path / "m.json"
    code = main(["train", str(files[0]), "--vocab-size", "300", "--superbpe", "280",
                    "--ties", "tokenizers", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and "--ties tokenizers" in err and "SuperBPE" in err


def test_cli_unknown_ties_exits_2(files, tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["train", str(files[0]), "--vocab-size", "300", "--ties", "hf", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert not out.exists() and err.count("\n") == 1 and "--ties" in err


def test_cli_train_then_export_equals_bpe_trainer(files, tmp_path, capsys):
    pattern = str(tmp_path / "m{vocab_size}.json")
    assert main(["train", *map(str, files), "--vocab-size", "400,900", "--special", "<s>",
                    "--pretokenize", "cl100k", "--ties", "tokenizers", "-q", "-o", pattern]) == 0
    documents = [path.read_text("utf-8") for path in files]
    for size in (400, 900):
        out = tmp_path / f"tokenizer{size}.json"
        assert main(["export", str(tmp_path / f"m{size}.json"), "--to", "tokenizers",
                        "-o", str(out)]) == 0
        theirs = bpe_trainer(documents, size, ["<s>"], tok=documented_pipeline("cl100k"))
        assert_same_file(json.loads(out.read_text("utf-8")), json.loads(theirs.to_str()))
        assert out.read_bytes() == saved_text(theirs)


# -- like=: the user's own pipeline, so that every key of the file is the same ---------------

def _with_decoder(tok: tokenizers.Tokenizer, name: str) -> tokenizers.Tokenizer:
    if name == "ByteLevel(flags off)":
        # decoders.ByteLevel() takes no flags; a file (bytepair's own, say) can hold them.
        data = json.loads(tok.to_str())
        data["decoder"] = {"type": "ByteLevel", "add_prefix_space": False,
                           "trim_offsets": False, "use_regex": False}
        return tokenizers.Tokenizer.from_str(json.dumps(data))
    tok.decoder = {"none": None, "ByteLevel()": decoders.ByteLevel(),
                   "Sequence": decoders.Sequence([decoders.ByteLevel()])}[name]
    return tok


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(documents=st.lists(DOCUMENT, min_size=1, max_size=8), pattern=PATTERNS,
       specials=st.sampled_from([(), ("<s>",), ("<|endoftext|>", "<é\t\x01>")]),
       extra=st.integers(0, 40), min_frequency=st.integers(1, 3),
       decoder=st.sampled_from(["none", "ByteLevel()", "ByteLevel(flags off)", "Sequence"]),
       post_processor=st.booleans(),
       source=st.sampled_from(["untrained", "trained", "path", "dict"]))
def test_hyp_like_file_equals_bpe_trainer_file(documents, pattern, specials, extra, min_frequency,
                                                decoder, post_processor, source):
    from tokenizers import processors

    assume(any(documents))
    vocab_size = 256 + len(specials) + extra
    pipeline = _with_decoder(documented_pipeline(pattern, None), decoder)
    if post_processor:
        pipeline.post_processor = processors.ByteLevel(trim_offsets=False)
    untrained = pipeline.to_str()
    trained = bpe_trainer(documents, vocab_size, specials, min_frequency, pipeline)
    ours = train(documents, vocab_size, pattern, specials, min_frequency=min_frequency)
    with tempfile.TemporaryDirectory() as root:
        Path(root, "untrained.json").write_text(untrained, encoding="utf-8")
        like = {"untrained": tokenizers.Tokenizer.from_str(untrained), "trained": trained,
                "path": Path(root, "untrained.json"), "dict": json.loads(trained.to_str())}[source]
        text = exported_text(ours, like=like)
    assert text == saved_text(trained)
    # It loads back in both libraries and encodes as bytepair does.
    sample = "".join(documents) + "".join(specials) + documents[0]
    assert tokenizers.Tokenizer.from_str(text.decode()).encode(sample).ids == ours.encode(
        sample, allowed_special="all")
    from bytepair.formats.imports import from_tokenizers_json
    back = from_tokenizers_json(json.loads(text))  # a file holds no counts: compare the rest
    assert [(m.left, m.right) for m in back.merges] == [(m.left, m.right) for m in ours.merges]
    assert (back.pattern, back.special_tokens, back.ids) == (ours.pattern, ours.special_tokens,
                                                             ours.ids)
    # Without like, only the pipeline's own choices differ: decoder, post-processor.
    default, theirs = json.loads(exported_text(ours)), json.loads(trained.to_str())
    differ = [key for key in theirs if default[key] != theirs[key]]
    assert list(default) == list(theirs)
    assert differ == [key for key, chosen in [("post_processor", post_processor),
                                               ("decoder", decoder != "ByteLevel()")] if chosen]


def test_default_export_of_an_imported_bpe_trainer_file_is_that_file(files, tmp_path):
    # Read a BpeTrainer file (documented pipeline, decoders.ByteLevel()), write it back.
    documents = [path.read_text("utf-8")[:20000] for path in files]
    for pattern in ("gpt2", "cl100k", None):
        trained = bpe_trainer(documents, 700, ["<s>", "<pad>"], 2, documented_pipeline(pattern))
        trained.save(str(tmp_path / "theirs.json"))
        imported = bytepair.load(tmp_path / "theirs.json")
        assert exported_text(imported) == (tmp_path / "theirs.json").read_bytes()


def test_a_custom_pattern_is_spelled_as_bpe_trainer_spells_it(files):
    custom = r"\w+|\s+|[^\w\s]+"
    documents = [path.read_text("utf-8") for path in files]
    pipeline = documented_pipeline(None)
    pipeline.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(custom), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trained = bpe_trainer(documents, 600, ["<s>"], tok=pipeline)
    ours = train(documents, 600, custom, ["<s>"])
    assert exported_text(ours) == exported_text(ours, like=trained) == saved_text(trained)


def test_like_spells_a_model_with_bytepair_ties_too():
    # The pipeline is the user's, the model bytepair's: with ties="bytepair" its own merges.
    documents = ["a a", "low lower lowest"]
    model = bytepair.train(documents, vocab_size=262, pretokenize="gpt2", progress=False)
    like = documented_pipeline("gpt2", None)
    document = tokenizers_json(model, like=like)
    assert document["model"] == tokenizers_json(model)["model"]
    assert document["decoder"] is None
    assert document["pre_tokenizer"] == json.loads(like.to_str())["pre_tokenizer"]
    assert tokenizers.Tokenizer.from_str(json.dumps(document)).encode("a lowest").ids == \
        model.encode("a lowest")


def _like_with(change: str):
    from tokenizers import normalizers, processors

    pattern = "cl100k" if change == "cl100k" else None if change == "no regex" else "gpt2"
    tok = documented_pipeline(pattern)
    if change == "dropout":
        tok = tokenizers.Tokenizer(models.BPE(dropout=0.1))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    elif change == "normalizer":
        tok.normalizer = normalizers.NFKC()
    elif change == "Whitespace":
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
    elif change == "add_prefix_space":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    elif change == "truncation":
        tok.enable_truncation(8)
    elif change == "padding":
        tok.enable_padding()
    elif change == "template":
        tok.post_processor = processors.TemplateProcessing(single="<s> $A",
                                                           special_tokens=[("<s>", 0)])
    elif change == "Metaspace decoder":
        tok.decoder = decoders.Metaspace()
    return tok


REFUSED_LIKES = [
    ("normalizer", r"^like: the normalizer \(NFKC\)"),
    ("Whitespace", r"^like: the pre_tokenizer does not end with ByteLevel"),
    ("add_prefix_space", r"^like: ByteLevel add_prefix_space"),
    ("cl100k", r"^like: the pre_tokenizer splits with the pattern 'cl100k', the model with "
               r"GPT-2's"),
    ("no regex", r"^like: the pre_tokenizer splits with none .*, the model with GPT-2's"),
    ("truncation", r"^like: truncation is set"),
    ("padding", r"^like: padding is set"),
    ("template", r"^like: the post_processor \(TemplateProcessing\) adds tokens"),
    ("Metaspace decoder", r"^like: the decoder \(Metaspace\)"),
    ("dropout", r"^like: models.BPE dropout=0.1"),
]


@pytest.fixture(scope="module")
def gpt2_model():
    return train(["low lower lowest", "a a aa"], 262, "gpt2", ["<s>"])


@pytest.mark.parametrize("change, message", REFUSED_LIKES, ids=[c for c, _ in REFUSED_LIKES])
def test_like_that_would_encode_otherwise_is_refused_in_one_line(gpt2_model, tmp_path, change,
                                                                  message):
    from bytepair.formats.imports import ImportRefused

    out = tmp_path / "tokenizer.json"
    with pytest.raises(ImportRefused, match=message) as err:
        to_tokenizers_json(gpt2_model, out, like=_like_with(change))
    assert "\n" not in str(err.value) and not out.exists()


@pytest.mark.parametrize("like, message", [
    (42, r"^like must be a tokenizers.Tokenizer, the path of its tokenizer.json or that file "
         r"parsed, got int$"),
    ([], r"^like must be"),
    ({"version": "1.0"}, r"^like: the tokenizer.json has no 'truncation'$"),
    ("missing.json", r"^like: cannot read 'missing.json': No such file"),
])
def test_like_that_is_no_tokenizer_is_refused_in_one_line(gpt2_model, tmp_path, monkeypatch,
                                                           like, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=message):
        to_tokenizers_json(gpt2_model, tmp_path / "out.json", like=like)
    assert not (tmp_path / "out.json").exists()


def test_cli_export_like_equals_bpe_trainer_file(files, tmp_path):
    # The user's untrained pipeline, saved; bytepair trains with its settings; the files match.
    documents = [path.read_text("utf-8") for path in files]
    pipeline = documented_pipeline("cl100k", None)
    pipeline.save(str(tmp_path / "pipeline.json"))
    trained = bpe_trainer(documents, 500, ["<|endoftext|>"], 2, pipeline)
    assert main(["train", *map(str, files), "--vocab-size", "500", "--special", "<|endoftext|>",
                 "--min-frequency", "2", "--pretokenize", "cl100k", "--ties", "tokenizers",
                 "-q", "-o", str(tmp_path / "model.json")]) == 0
    out = tmp_path / "tokenizer.json"
    assert main(["export", str(tmp_path / "model.json"), "--to", "tokenizers", "--like",
                 str(tmp_path / "pipeline.json"), "-q", "-o", str(out)]) == 0
    assert out.read_bytes() == saved_text(trained)
    # Without --like the decoder is decoders.ByteLevel()'s, where this pipeline has none.
    assert main(["export", str(tmp_path / "model.json"), "--to", "tokenizers", "-q",
                 "-o", str(tmp_path / "default.json")]) == 0
    default = json.loads((tmp_path / "default.json").read_text("utf-8"))
    assert default["decoder"]["type"] == "ByteLevel"
    assert {**default, "decoder": None} == json.loads(trained.to_str())


@pytest.mark.parametrize("setup, args, message", [
    ("normalizer", ["--to", "tokenizers"], "--like: the normalizer (NFKC)"),
    ("cl100k", ["--to", "tokenizers"], "--like: the pre_tokenizer splits with the pattern"),
    ("not json", ["--to", "tokenizers"], "--like: "),
    ("missing", ["--to", "tokenizers"], "--like: cannot read"),
    ("gpt2", ["--to", "tiktoken"], "--like: only for --to tokenizers"),
    ("gpt2", ["--to", "transformers"], "--like: only for --to tokenizers"),
])
def test_cli_export_like_refused_in_one_line_and_no_file(gpt2_model, tmp_path, capsys, setup,
                                                         args, message):
    model = tmp_path / "model.json"
    gpt2_model.save(model)
    like = tmp_path / "like.json"
    if setup == "not json":
        like.write_text("{not json", encoding="utf-8")
    elif setup != "missing":
        _like_with(setup).save(str(like))
    out = tmp_path / "out"
    code = main(["export", str(model), *args, "--like", str(like), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and message in err, err


# -- real text ------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["gpt2", "cl100k"])
def test_real_text_equals_bpe_trainer(pattern):
    # All of the King James Version (4.4 MB), German, Russian and Japanese Debian
    # documentation, and a sample of many scripts.
    documents = KJV.read_text("utf-8").splitlines()
    with gzip.open(KJV_REST_GZ, "rt", encoding="utf-8") as rest:
        documents += rest.read().splitlines()
    for name in ("debian-non-english-sample.txt", "multilingual-sample.txt"):
        documents += (DATA / name).read_text("utf-8").splitlines()
    theirs = bpe_trainer_json(documents, 8192, pattern, ["<|endoftext|>"], 2)
    assert not reuses_a_token(theirs)
    ours = train(documents, 8192, pattern, ["<|endoftext|>"], min_frequency=2)
    assert_same_file(tokenizers_json(ours), theirs)


def _bench_corpus(language: str) -> Path:
    """The 10 MB benchmark corpus of ``language``, when its text is built (it is never built
    here: that needs apt-get)."""
    from benches import corpus as corpora

    if language == "english":
        built = corpora.cache_dir() / f"english-v{corpora.RECIPE}-10000000.txt"
    else:
        built = corpora.cache_dir() / f"multilingual-v{corpora.WORLD_RECIPE}-all.txt"
    if not (built.exists() and built.with_suffix(".json").exists()):
        pytest.skip(f"the {language} benchmark corpus is not built: python -m benches.corpus "
                    f"--fetch-corpora --size 10MB --language {language}")
    if language == "english":
        return built
    return corpora.corpus_path("10MB", language=language)


@pytest.mark.slow
@pytest.mark.parametrize("language, pattern", [("english", "gpt2"), ("multilingual", "cl100k")])
def test_ten_megabytes_equal_bpe_trainer(language, pattern, tmp_path):
    path = _bench_corpus(language)
    documents = path.read_text("utf-8").splitlines()
    theirs = bpe_trainer(documents, 32768, ["<|endoftext|>", "<pad>"],
                         tok=documented_pipeline(pattern))
    assert not reuses_a_token(json.loads(theirs.to_str()))
    ours = train(documents, 32768, pattern, ["<|endoftext|>", "<pad>"])
    out = tmp_path / "tokenizer.json"
    to_tokenizers_json(ours, out)
    assert_same_file(json.loads(out.read_text("utf-8")), json.loads(theirs.to_str()))
    assert out.read_bytes() == saved_text(theirs)


# -- train_options: a BpeTrainer configuration read, or refused in one line ------------------

def _fresh(pre_tokenizer=None):
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer or pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tok


def _trainer(**options):
    settings_ = dict(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                     show_progress=False)
    settings_.update(options)
    return trainers.BpeTrainer(**settings_)


GPT4_SPLIT = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(hf_pattern(resolve_pattern("cl100k"))), behavior="isolated"),
    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


@pytest.mark.parametrize("pre_tokenizer", [None, GPT4_SPLIT], ids=["ByteLevel", "Split-GPT-4"])
def test_train_options_reproduce_the_trainer(files, pre_tokenizer):
    from bytepair.formats.from_tokenizers import train_options

    documents = [path.read_text("utf-8") for path in files]
    tok = _fresh(pre_tokenizer)
    trainer = _trainer(special_tokens=["<|endoftext|>", "<pad>"], min_frequency=2)
    options = train_options(tok, trainer)
    tok.train_from_iterator(documents, trainer)
    ours = bytepair.train(documents, progress=False, **options)
    # The tokenizer has no decoder: like= spells the file as it does.
    assert_same_file(tokenizers_json(ours, like=tok), json.loads(tok.to_str()))
    assert exported_text(ours, like=tok) == saved_text(tok)


@pytest.mark.parametrize("change, named", [
    (dict(trainer=dict(initial_alphabet=[])), "initial_alphabet"),
    (dict(trainer=dict(limit_alphabet=100)), "limit_alphabet"),
    (dict(trainer=dict(continuing_subword_prefix="##")), "continuing_subword_prefix"),
    (dict(trainer=dict(end_of_word_suffix="</w>")), "end_of_word_suffix"),
    (dict(trainer=dict(max_token_length=8)), "max_token_length"),
    (dict(trainer=dict(special_tokens=[tokenizers.AddedToken("<s>", lstrip=True)])), "lstrip"),
    (dict(pre=pre_tokenizers.ByteLevel(add_prefix_space=True)), "add_prefix_space"),
    (dict(pre=pre_tokenizers.Whitespace()), "ByteLevel"),
    (dict(normalizer=True), "normalizer"),
    (dict(added=True), "added token"),
])
def test_train_options_refuse_what_bytepair_does_not_reproduce(change, named):
    from bytepair.formats.from_tokenizers import train_options
    from bytepair.formats.imports import ImportRefused
    from tokenizers import normalizers

    tok = _fresh(change.get("pre"))
    if change.get("normalizer"):
        tok.normalizer = normalizers.NFKC()
    if change.get("added"):
        tok.add_special_tokens(["<s>"])
    with pytest.raises(ImportRefused, match=named) as err:
        train_options(tok, _trainer(**change.get("trainer", {})))
    assert "\n" not in str(err.value)


def test_a_pattern_tokenizers_reads_otherwise_is_refused_before_any_work(files):
    with pytest.raises(ValueError, match=r"^pretokenize: ties='tokenizers' .*Oniguruma"):
        bytepair.train(files, vocab_size=300, pretokenize=r"(?m)^\w+|\s+", ties="tokenizers",
                       progress=False)


def test_special_token_spelled_like_a_token_is_refused():
    # BpeTrainer would give the special token and the byte (or merged token) one ID.
    theirs = bpe_trainer_json(["low low low"], 262, special_tokens=["Ġlow"])
    assert theirs["model"]["vocab"]["Ġlow"] == 0
    with pytest.raises(ValueError, match=r"^special_tokens: 'Ġ' is spelled like .* b' '"):
        train(["low low low"], 262, special_tokens=["Ġ"])
    with pytest.raises(ValueError, match=r"^special_tokens: 'Ġlow' is spelled like .* b' low'"):
        train(["low low low"], 262, special_tokens=["Ġlow"])
    assert train(["low low low"], 262, special_tokens=["<s>"]).special_tokens == {"<s>": 0}


def test_cli_special_token_spelled_like_a_learned_token_writes_no_file(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low low low\n", encoding="utf-8")
    out = tmp_path / "m.json"
    assert main(["train", str(corpus), "--vocab-size", "262", "--special", "Ġlow",
                 "--ties", "tokenizers", "-q", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert not out.exists() and err.count("\n") == 1 and "--special: 'Ġlow' is spelled like" in err


def test_learn_takes_the_tie_order_too(files):
    from bytepair.training import learn

    table = bytepair.count(files, pretokenize="gpt2", workers=1)
    rules = learn(table, 500, ties="tokenizers")
    assert rules == train(files, 756, "gpt2").merges
    assert rules != learn(table, 500)


def test_bench_script_finds_the_outputs_identical(tmp_path, capsys):
    from benches import ties as bench

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(KJV.read_text("utf-8").splitlines()[:400]) + "\n", encoding="utf-8")
    bench.main(["--corpus", str(corpus), "--size", "1MB", "--vocab-size", "400", "--threads", "1",
                "--no-save"])
    result = json.loads(capsys.readouterr().out)
    assert result["identity"]["bytepair_model_identical"]
    assert result["identity"]["gigabpe_merges_identical"]
    assert result["identity"]["gigabpe_vocab_identical_to_bpe_trainer_without_initial_alphabet"]
