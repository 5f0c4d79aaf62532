"""Tokenizer files are untrusted input: each hostile file found in issue 16 is one
TokenizerFileError naming the file and the field, in bounded time; random mutations of a valid
tokfx.json load or raise TokenizerFileError, never another exception, never a hang."""
import copy
import json
import signal
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokfx
from conftest import fixture_path
from tokfx import Tokenizer, TokenizerFileError
from tokfx.pre_tokenizers.patterns import GPT2


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tok")
    tokfx.train([fixture_path("corpus.en").read_text(encoding="utf-8")[:100_000]], vocab_size=320).save(directory)
    return json.loads((directory / "tokfx.json").read_text(encoding="utf-8"))


def _refused(tmp_path, content) -> TokenizerFileError:
    path = tmp_path / "tokfx.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    start = time.monotonic()
    with pytest.raises(TokenizerFileError) as info:
        Tokenizer.load(tmp_path).encode("hello world")
    assert time.monotonic() - start < 10
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"{path}: ")
    return info.value


def _scaffold_bomb(doc):
    # 60 merges of the last token with itself, all scaffold: 2^60 symbols if built.
    doc["algorithm"] = "scaffold-bpe"
    merges = [[97, 97]] + [[256 + i, 256 + i] for i in range(59)]
    doc["scaffold"] = {"merges": merges, "is_scaffold": [True] * 60, "model_ids": list(range(256)) + [None] * 60}


HOSTILE = [
    (lambda d: d["merges"][3].__setitem__(0, 116.0), r"merges\[3\]\[0\]: expected an int, got 116\.0"),
    (lambda d: d["merges"][3].__setitem__(1, True), r"merges\[3\]\[1\]: expected an int, got true"),
    (lambda d: d["tokens"][300].__setitem__(0, "32"), r"tokens\[300\]\[0\]: expected an int, got \"32\""),
    (lambda d: d["params"].__setitem__("vocab_size", "2000"), r"params\.vocab_size: expected an int, got \"2000\""),
    (lambda d: d.__setitem__("algorithm", "sentencepiece"), r"algorithm: unknown algorithm \"sentencepiece\""),
    (lambda d: d["pattern"].__setitem__("regex", r"\S+|\s+"), r"pattern\.regex: is not the regex of the pattern 'gpt2'"),
    (lambda d: d["pattern"].__setitem__("name", "gpt3"), r"pattern\.name: unknown pattern name \"gpt3\""),
    (lambda d: d.__setitem__("pattern", {"name": None, "regex": r"(a|aa)+$|\s+|."}),
     r"pattern\.regex: pattern .* ran for more than 1\.0 s"),
    (lambda d: d.__setitem__("pattern", {"name": None, "regex": r"\w+"}), r"pattern\.regex: .* does not cover the text"),
    (lambda d: d.__setitem__("pattern", {"name": None, "regex": "a|" * 5_000_000 + "."}),
     r"pattern\.regex: a string of 10,000,001 characters: at most 4,096"),
    (lambda d: d.__setitem__("pattern", {"name": None, "regex": "((a{1000}){1000}){1000}|[\\s\\S]"}),
     r"pattern\.regex: .* counted repeats multiply"),
    (lambda d: d.__setitem__("segmenter", {"name": "greedy", "params": {"max_width": 10**12}}),
     r"segmenter\.params\.max_width: 1000000000000 is outside 1\.\.65536"),
    (lambda d: d.__setitem__("segmenter", {"name": "wordpiece", "params": {}}), r"segmenter\.name: unknown segmenter"),
    (lambda d: d["special_tokens"][0].__setitem__("content", "x" * 10_000_000),
     r"special_tokens\[0\]\.content: a string of 10,000,000 characters: at most 256"),
    (lambda d: d["special_tokens"][0].__setitem__("content", ""), r"special_tokens\[0\]\.content: is empty"),
    (lambda d: d["special_tokens"][0].__setitem__("id", 3), r"tokens: null at ids \[319\]"),
    (lambda d: d["tokens"].__setitem__(300, [32] * 70_000), r"tokens\[300\]: 70,000 items: expected 1\.\.65,536"),
    (lambda d: d["params"].__setitem__("x", 1), r"params: unknown field \"x\""),
    (lambda d: d.__setitem__("format_version", 1.0), r"format_version: expected an int, got 1\.0"),
    (lambda d: d.pop("tokens"), r"tokfx\.json: missing 'tokens'"),
    (_scaffold_bomb, r"scaffold\.merges\[\d+\]: its tokens would spell more than"),
]


def _unigram_scores(value):
    """A Unigram file's scores replaced (the file is otherwise the BPE one, segmented by
    likelihood)."""
    def edit(doc):
        doc["algorithm"], doc["params"] = "unigram", {"vocab_size": doc["params"]["vocab_size"]}
        doc["segmenter"] = {"name": "likelihood", "params": {"max_width": 16}}
        doc["scores"] = [None if t is None else -1.0 for t in doc["tokens"]]
        value(doc["scores"])
    return edit


HOSTILE += [
    (_unigram_scores(lambda s: s.__setitem__(3, "-1.5")), r"scores\[3\]: expected a finite number, got \"-1\.5\""),
    (_unigram_scores(lambda s: s.__setitem__(3, float("nan"))), r"scores\[3\]: expected a finite number"),
    (_unigram_scores(lambda s: s.__setitem__(319, -2.0)), r"scores\[319\]: expected null, got -2\.0"),
    (_unigram_scores(lambda s: s.pop()), r"scores: 319 items: expected one per token, 320"),
]


@pytest.mark.parametrize("edit, message", HOSTILE)
def test_a_hostile_field_is_one_error_naming_the_file_and_field(saved, tmp_path, edit, message):
    doc = copy.deepcopy(saved)
    edit(doc)
    assert _refused(tmp_path, doc).args[0].split(": ", 1)[1] != ""
    with pytest.raises(TokenizerFileError, match=message):
        Tokenizer.load(tmp_path)


@pytest.mark.parametrize("content", [
    "[" * 200_000 + "]" * 200_000,                       # deeper than any parser's stack
    '{"format": "tokfx", "x": ' + "[" * 200_000,         # unclosed, as deep
    '{"format": "tokfx", "x": ' + "[" * 40 + "]" * 40 + "}",
])
def test_deep_nesting_is_refused_before_parsing(tmp_path, content):
    assert "JSON nested deeper than 32 levels" in str(_refused(tmp_path, content))


def test_brackets_inside_strings_are_not_nesting(saved, tmp_path):
    doc = copy.deepcopy(saved)
    doc["tokfx_version"] = '[[[[{{{{\\"' * 6
    (tmp_path / "tokfx.json").write_text(json.dumps(doc), encoding="utf-8")
    assert Tokenizer.load(tmp_path).vocab_size == len(saved["tokens"])


def test_gpt2_files_are_read_as_untrusted(tmp_path):
    vocab = {"a": 0, "b": 1.0}
    (tmp_path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=r"vocab\.json: token \"b\": expected an int, got 1\.0"):
        Tokenizer.from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    (tmp_path / "vocab.json").write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=r"vocab\.json: JSON nested deeper"):
        Tokenizer.from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0}), encoding="utf-8")
    (tmp_path / "merges.txt").write_bytes(b"a \xff\n")
    with pytest.raises(TokenizerFileError, match=r"merges\.txt: not UTF-8"):
        Tokenizer.from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    (tmp_path / "merges.txt").write_text("a a\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=r"vocab\.json \+ .*merges\.txt: the vocabulary lacks|is not in the vocabulary"):
        Tokenizer.from_gpt2_files(tmp_path / "vocab.json", tmp_path / "merges.txt")


# --- random mutations ---------------------------------------------------------------------------
HUGE = [10**30, -1, 2**63, 1e308, float("inf")]
REPLACEMENTS = st.one_of(st.none(), st.booleans(), st.integers(-3, 600), st.sampled_from(HUGE),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
                         st.sampled_from([GPT2, r"\w+", r"(a|aa)+$|\s+|.", "x" * 5000, [], {}, [[]]]),
                         st.integers(33, 200).map(lambda depth: json.loads("[" * depth + "]" * depth)))


def _paths(value, path=()):
    """Every path into the document, sampled: all of its objects' keys, a few items of arrays."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index in sorted({0, 1, len(value) // 2, len(value) - 1} & set(range(len(value)))):
            yield from _paths(value[index], (*path, index))


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_files_load_or_raise_tokenizer_file_error(saved, tmp_path, data):
    doc = copy.deepcopy(saved)
    paths = list(_paths(doc))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths[1:]))
        parent = doc
        try:
            for step in path[:-1]:
                parent = parent[step]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(REPLACEMENTS)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation changed the path's parents
    (tmp_path / "tokfx.json").write_text(json.dumps(doc), encoding="utf-8")
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)  # a load is ~1 ms; a user pattern's probe may take its 1 s timeout
    try:
        tok = Tokenizer.load(tmp_path)
        tok.decode(tok.encode("hello world <|endoftext|> 123"))
    except TokenizerFileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(tmp_path / "tokfx.json"))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
