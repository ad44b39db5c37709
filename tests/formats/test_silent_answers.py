"""Answers that must never be silently wrong: each compares bytepair with the other library,
with the tokenizer it claims to measure, or with an uninterrupted run.

Named patterns for tiktoken, size curves of SuperBPE models, tokenizer.json files
whose added tokens sit in a gap of the vocabulary, checkpoints whose rules are
damaged, truncating imported tokenizers, bare-word patterns from count files,
``inspect`` of imported rules, and count files that declare impossible sizes.
"""

from __future__ import annotations

import json
import random

import pytest
import tiktoken

import bytepair
from bytepair.split.pretokenize import PATTERNS

from helpers import KJV, MULTILINGUAL, run

HELLO = "Hello world, this is a test of 12345 numbers"
ENGLISH = KJV.read_text(encoding="utf-8")
WORLD = MULTILINGUAL.read_text(encoding="utf-8")


# -- tiktoken_pattern takes the names train takes --

@pytest.fixture(scope="module")
def by_pattern():
    """A tokenizer per named pattern, trained on English and multilingual text."""
    text = ENGLISH[:60_000] + WORLD
    return {name: bytepair.train([text], vocab_size=700, pretokenize=name, progress=False)
            for name in ("gpt2", "cl100k", "o200k", "whitespace")}


@pytest.mark.parametrize("name, trained_with", [
    ("cl100k", "cl100k"), ("cl100k_base", "cl100k"), ("o200k", "o200k"), ("o200k_base", "o200k"),
    ("gpt2", "gpt2"), ("r50k_base", "gpt2"), ("p50k_base", "gpt2"), ("whitespace", "whitespace"),
])
def test_tiktoken_pattern_resolves_names(by_pattern, name, trained_with):
    tok = by_pattern[trained_with]
    encoding = tiktoken.Encoding(name, pat_str=bytepair.tiktoken_pattern(name),
                                 mergeable_ranks=bytepair.tiktoken_ranks(tok), special_tokens={})
    for text in [HELLO, *WORLD.splitlines(), WORLD]:
        assert encoding.encode_ordinary(text) == tok.encode(text)
    # The name gives what the model's own pattern source gives.
    assert bytepair.tiktoken_pattern(name) == bytepair.tiktoken_pattern(tok.pattern)


def test_tiktoken_pattern_of_none_is_one_piece():
    assert bytepair.tiktoken_pattern("none") == bytepair.tiktoken_pattern(None) == r"[\s\S]+"


@pytest.mark.parametrize("name", ["cl100kk", "GPT2", "cl100k-base", "mypattern"])
def test_tiktoken_pattern_refuses_unknown_names_as_train_does(name):
    with pytest.raises(ValueError) as refused:
        bytepair.tiktoken_pattern(name)
    with pytest.raises(ValueError) as by_train:
        bytepair.train(["some text"], merges=1, pretokenize=name, progress=False)
    assert f"unknown pattern {name!r}" in str(refused.value)
    assert str(refused.value).split(":", 1)[1] == str(by_train.value).split(":", 1)[1]


# -- evaluate measures each size as truncate(size) encodes --

def numbered(count: int, seed: int) -> list[str]:
    """Lines with numbers: GPT-2 cuts " 123456" as one piece, the stage-2 pattern cuts digits
    in threes apart from the space, so stage-1 rules meet other pieces there."""
    rng = random.Random(seed)
    return [f"In {rng.randrange(10**6)} years, the {rng.randrange(1000)} men said: \"Go.\" "
            f"(see 1:{rng.randrange(40)})" for _ in range(count)]


TRAINING = ENGLISH.splitlines()[:1500] + WORLD.splitlines() * 3 + numbered(300, 5)
HELD_OUT = ENGLISH.splitlines()[3000:3400] + WORLD.splitlines() + numbered(50, 6)


@pytest.fixture(scope="module")
def superbpe():
    return bytepair.train(TRAINING, vocab_size=900, superbpe=600, per_line=True,
                          special_tokens=["<|end|>"], progress=False)


def test_evaluate_sizes_of_superbpe_equal_truncate(superbpe):
    tok = superbpe
    transition = tok.model.stages.transition + len(tok.special_tokens)  # as truncate counts sizes
    held_out = HELD_OUT
    sizes = [257, 400, transition - 1, transition, transition + 1, 750, tok.vocab_size - 1]
    table = bytepair.evaluate(tok, {"held out": held_out}, sizes=sizes)
    measured = {row["vocab_size"]: row["tokens"] for row in table.rows}
    assert sorted(measured) == sorted({*sizes, tok.vocab_size})
    for size, tokens in measured.items():
        truncated = tok.truncate(size)
        expected = sum(len(truncated.encode(text, disallowed_special=())) for text in held_out)
        assert tokens == expected, size
    # Below the transition SuperBPE is plain BPE with the stage-1 pattern.
    plain = bytepair.train(TRAINING, vocab_size=transition, per_line=True,
                           special_tokens=["<|end|>"], progress=False)
    assert measured[transition] == sum(len(plain.encode(text)) for text in held_out)


def test_evaluate_command_sizes_of_superbpe(capsys, tmp_path, superbpe):
    tok = superbpe
    model, sample = tmp_path / "model.json", tmp_path / "held-out.txt"
    tok.save(model)
    held_out = HELD_OUT
    sample.write_text("\n".join(held_out) + "\n", encoding="utf-8")
    transition = tok.model.stages.transition + 1
    code, out, _ = run(capsys, "evaluate", str(model), "--sample", str(sample), "--per-line",
                       "--sizes", f"300,{transition}", "--json")
    assert code == 0
    rows = {row["vocab_size"]: row["tokens"] for row in json.loads(out)["rows"]}
    for size in (300, transition):
        truncated = tok.truncate(size)
        assert rows[size] == sum(len(truncated.encode(text)) for text in held_out)


# -- tokenizer.json: added tokens are read with the IDs tokenizers gives them --

@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A tokenizer.json of a small model with two special tokens, as parsed JSON."""
    tok = bytepair.train([ENGLISH[:50_000]], vocab_size=302, pretokenize="gpt2",
                         special_tokens=["<|end|>", "<pad>"], progress=False)
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    bytepair.to_tokenizers_json(tok, path)
    return json.loads(path.read_text(encoding="utf-8"))


SPECIAL_TEXTS = ["In the beginning God created the heaven<|end|> and the earth.<pad><|end|>",
                 "<pad>Let there be light: and there was light.<|end|>", HELLO]


def same_as_tokenizers(data: dict, path) -> bool:
    """Whether bytepair reads ``data`` as tokenizers does; False when it refuses in one line."""
    import tokenizers

    path.write_text(json.dumps(data), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    try:
        tok = bytepair.load(path)
    except bytepair.ModelFormatError as exc:
        assert "\n" not in str(exc)
        return False
    for text in SPECIAL_TEXTS:
        assert tok.encode(text, allowed_special="all") == hf.encode(text).ids, text
    return True


def test_added_token_in_a_vocabulary_gap_is_refused(exported, tmp_path):
    data = json.loads(json.dumps(exported))
    vocab = data["model"]["vocab"]
    moved = next(token for token, token_id in vocab.items() if token_id == 286)
    end = next(t for t in data["added_tokens"] if t["content"] == "<|end|>")
    vocab.pop("<|end|>")
    vocab[moved], end["id"] = end["id"], 286  # the merged token moves to the end
    assert not same_as_tokenizers(data, tmp_path / "gap.json")
    with pytest.raises(bytepair.ModelFormatError,
                       match=r"added token '<\|end\|>' has ID 286 in the file, but tokenizers "
                             r"gives it ID \d+"):
        bytepair.load(tmp_path / "gap.json")


def test_added_tokens_out_of_the_vocabulary_are_read_as_tokenizers_reads_them(exported, tmp_path):
    rng = random.Random(30)
    read = refused = 0
    for case in range(40):
        data = json.loads(json.dumps(exported))
        vocab, added = data["model"]["vocab"], data["added_tokens"]
        for token in added:
            if rng.random() < 0.7:
                vocab.pop(token["content"], None)  # tokenizers then numbers it itself
        if rng.random() < 0.5:
            added.reverse()
        if rng.random() < 0.5:  # swap the IDs of a merged token and an added token
            token = rng.choice(added)
            learned = rng.choice([t for t, i in vocab.items() if 256 <= i < 300])
            vocab[learned], token["id"] = token["id"], vocab[learned]
            if token["content"] in vocab:
                vocab[token["content"]] = token["id"]
        if same_as_tokenizers(data, tmp_path / f"case{case}.json"):
            read += 1
        else:
            refused += 1
    assert read and refused  # both kinds of file were made


# -- a checkpoint resumes only from the rules it wrote --

@pytest.fixture(scope="module")
def checkpointed(tmp_path_factory):
    """(corpus, checkpoint with 60 rules, the model of an uninterrupted run to 120 merges)."""
    root = tmp_path_factory.mktemp("checkpointed")
    corpus = root / "corpus.txt"
    corpus.write_text(ENGLISH[:80_000] + WORLD, encoding="utf-8")
    bytepair.train(corpus, merges=60, checkpoint=root / "checkpoint", progress=False)
    whole = root / "whole.json"
    bytepair.train(corpus, merges=120, progress=False).save(whole)
    return corpus, root / "checkpoint", whole.read_bytes()


def resume_damaged(capsys, tmp_path, checkpointed, damage) -> bool:
    """Resume a copy of the checkpoint whose rules text ``damage`` changed: True when it is
    refused in one line (exit 2, nothing written), False when it gives the uninterrupted model."""
    import shutil

    corpus, saved, whole = checkpointed
    copy = tmp_path / "checkpoint"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(saved, copy)
    rules = copy / "rules"
    rules.write_text(damage(rules.read_text(encoding="utf-8")), encoding="utf-8")
    out = tmp_path / "model.json"
    out.unlink(missing_ok=True)
    code, _, err = run(capsys, "train", corpus, "--merges", 120, "--checkpoint", copy, "--resume",
                       "-q", "-o", out)
    if code == 0:
        assert out.read_bytes() == whole  # never a different model with exit 0
        return False
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "rules" in err and not out.exists()
    return True


def test_damaged_rules_are_refused(capsys, tmp_path, checkpointed):
    rng = random.Random(4)

    def change_a_number(text: str) -> str:
        body = text.index('"merges"')
        while True:
            at = rng.randrange(body, len(text))
            if text[at].isdigit():
                digit = rng.choice([d for d in "0123456789" if d != text[at]])
                if digit == "0" and not text[at - 1].isdigit():
                    continue  # a leading zero is not JSON: not the damage looked for here
                return text[:at] + digit + text[at + 1:]

    refused = [resume_damaged(capsys, tmp_path, checkpointed, change_a_number) for _ in range(12)]
    assert all(refused)


def test_undamaged_rules_resume_to_the_same_model(capsys, tmp_path, checkpointed):
    assert not resume_damaged(capsys, tmp_path, checkpointed, lambda text: text)
    # Re-indented by a JSON tool: the same content, the same model.
    assert not resume_damaged(capsys, tmp_path, checkpointed,
                              lambda text: json.dumps(json.loads(text), indent=2))


def test_rules_without_a_checksum_are_refused(capsys, tmp_path, checkpointed):
    def drop_checksum(text: str) -> str:
        data = json.loads(text)
        del data["checksum"]
        return json.dumps(data)

    assert resume_damaged(capsys, tmp_path, checkpointed, drop_checksum)


# -- a count file that declares impossible sizes is a format error --

def with_header(path, **changes) -> None:
    """Rewrite the count file's header line and its checksummed copy in the body alike."""
    import zlib

    data = path.read_bytes()
    line, body = data.split(b"\n", 1)
    inflated = zlib.decompress(body)
    assert inflated.startswith(line + b"\n")
    header = json.loads(line)
    header.update(changes)
    new = json.dumps(header).encode("ascii")
    path.write_bytes(new + b"\n" + zlib.compress(new + b"\n" + inflated[len(line) + 1:]))


@pytest.mark.parametrize("changes", [
    {"pieces": 2**63}, {"piece_bytes": 10**30}, {"pieces": 2**63, "piece_bytes": 10**30},
    {"pieces": 2**62, "piece_bytes": 2**64}, {"pieces": 10**6}, {"piece_bytes": 2**40},
])
def test_count_file_declaring_impossible_sizes_is_a_format_error(capsys, tmp_path, changes):
    path = tmp_path / "table.counts"
    bytepair.PieceCounts({"the": 3, " cat": 2, "é": 1}, pattern="gpt2").save(path)
    with_header(path, **changes)
    with pytest.raises(bytepair.CountsFormatError) as raised:
        bytepair.PieceCounts.load(path)
    assert "\n" not in str(raised.value)
    code, out, err = run(capsys, "train", "--counts", path, "--merges", 3, "-o", tmp_path / "m.json")
    assert (code, out) == (2, "") and len(err.splitlines()) == 1, err
    assert err.startswith("bytepair: error: ") and "is corrupt" in err
    assert not (tmp_path / "m.json").exists()


# -- an imported tokenizer with an ID map truncates --

@pytest.fixture(scope="module")
def bpe_trainer_file(tmp_path_factory):
    """A tokenizer.json trained by tokenizers' BpeTrainer: special tokens first, the byte
    alphabet by character, then the merges, so bytepair keeps it with an ID map."""
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers, trainers

    root = tmp_path_factory.mktemp("bpe-trainer")
    corpus = root / "corpus.txt"
    corpus.write_text(ENGLISH[:150_000] + WORLD, encoding="utf-8")
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<|end|>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train([str(corpus)], trainer)
    path = root / "tokenizer.json"
    tok.save(str(path))
    return path


@pytest.mark.parametrize("size", [258, 300, 700, 999, 1000])
def test_imported_tokenizer_truncates_as_cutting_the_file_by_hand(bpe_trainer_file, tmp_path, size):
    import tokenizers

    imported = bytepair.load(bpe_trainer_file)
    assert imported.ids is not None
    truncated = imported.truncate(size)
    assert truncated.vocab_size == size
    # By hand: keep the merges whose tokens have IDs below the size (BpeTrainer numbers the
    # merges last, in order), and the vocabulary below it.
    data = json.loads(bpe_trainer_file.read_text(encoding="utf-8"))
    data["model"]["vocab"] = {t: i for t, i in data["model"]["vocab"].items() if i < size}
    data["model"]["merges"] = data["model"]["merges"][:size - 258]
    by_hand = tmp_path / "cut.json"
    by_hand.write_text(json.dumps(data), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(by_hand))
    assert hf.get_vocab_size() == size
    for text in [HELLO, *SPECIAL_TEXTS, *WORLD.splitlines()]:
        assert truncated.encode(text, allowed_special="all") == hf.encode(text).ids
    assert truncated == bytepair.load(by_hand)


def test_truncating_closes_up_ids_that_follow_no_order(bpe_trainer_file):
    imported = bytepair.load(bpe_trainer_file)
    rng = random.Random(8)
    shuffled = imported.ids
    rng.shuffle(shuffled)
    permuted = bytepair.Tokenizer(imported.model, list(imported.special_tokens), ids=shuffled)
    truncated = permuted.truncate(600)
    assert sorted(truncated.ids) == list(range(600))
    # Every kept token keeps its bytes, and the IDs keep their order.
    old_of = {permuted.token_bytes(i): i for i in range(permuted.vocab_size)}
    olds = [old_of[truncated.token_bytes(i)] for i in range(600)]
    assert olds == sorted(olds)
    assert truncated.special_tokens.keys() == permuted.special_tokens.keys()


# -- a bare-word pattern from a count file round-trips through the model file --

@pytest.mark.parametrize("word", ["ab", "e\u0301", "\u00bd", "a\u200db", "x_1-y", "\u0939\u093f"])
def test_bare_word_pattern_from_a_count_file_round_trips(capsys, tmp_path, word):
    import regex

    counts = tmp_path / "table.counts"
    bytepair.PieceCounts({word * 2: 3, word: 2, "z": 1}, pattern=regex.compile(word)).save(counts)
    model = tmp_path / "model.json"
    code, _, err = run(capsys, "train", "--counts", counts, "--merges", 2, "--trust-pattern", "-q",
                       "-o", model)
    assert code == 0, err
    tok = bytepair.train(bytepair.PieceCounts.load(counts, trust_pattern=True), merges=2,
                         progress=False)
    loaded = bytepair.load(model, trust_pattern=True)
    assert loaded == tok and loaded.pattern == word
    tok.save(tmp_path / "again.json")
    assert bytepair.load(tmp_path / "again.json", trust_pattern=True) == tok
    code, out, err = run(capsys, "encode", model, word * 3 + "z", "--trust-pattern")
    assert code == 0, err
    assert out.split() == [str(i) for i in tok.encode(word * 3 + "z")]


# -- inspect says that an imported model's counts are unknown --

def test_inspect_of_imported_rules_says_counts_are_unknown(capsys, bpe_trainer_file):
    code, out, err = run(capsys, "inspect", bpe_trainer_file, "--top", 3)
    assert code == 0, err
    assert "top merges" not in out
    assert "first merges (3 by rank; counts unknown: the file holds no training counts)" in out
    imported = bytepair.load(bpe_trainer_file)
    table = out.split("counts unknown")[1].splitlines()[2:5]
    assert [int(row.split()[0]) for row in table] == [0, 1, 2]
    assert [int(row.split()[1]) for row in table] == [imported.ids[256 + r] for r in range(3)]
    header = out.split("counts unknown")[1].splitlines()[1]
    assert header.split() == ["rank", "token", "left", "right", "text"]  # no column of zeros


def test_inspect_of_trained_rules_keeps_the_counts(capsys, tmp_path, by_pattern):
    tok = by_pattern["gpt2"]
    tok.save(tmp_path / "model.json")
    code, out, _ = run(capsys, "inspect", tmp_path / "model.json", "--top", 3)
    assert code == 0 and "top merges (3 by count):" in out and "counts unknown" not in out
    first = out.split("top merges")[1].splitlines()[2].split()
    assert int(first[4]) == tok.merges[0].count
