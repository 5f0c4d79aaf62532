"""Mistral tekken.json (Tokenizer.from_tekken) against tiktoken used as mistral_common's Tekkenizer
uses it: tiktoken.Encoding over the vocabulary cut to default_vocab_size, no special tokens, ids
offset by the number of special tokens. The file is built here from GPT-2's tokens."""
import base64
import copy
import json

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ASSIGNED, corpus_text
from tokfx import Tokenizer, TokenizerFileError
from tokfx.formats.tekken import read_tekken

# Mistral's tekken pattern, as its tekken.json files hold it.
TEKKEN_PATTERN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"
                  r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+"
                  r"|\s+(?!\S)|\s+")
LISTED = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]"]
NUM_SPECIAL = 200  # LISTED, then <SPECIAL_7> .. <SPECIAL_199>
CUT = 40_000  # ordinary tokens kept of GPT-2's 50,256 + ...


def tekken_doc(gpt2_vocab: dict[int, bytes]) -> dict:
    """The bytes in order (as tekken requires), then GPT-2's other tokens in GPT-2's order."""
    tokens = [bytes([b]) for b in range(256)] + [t for i, t in sorted(gpt2_vocab.items())
                                                  if len(t) > 1 and i != 50256]
    return {
        "config": {"pattern": TEKKEN_PATTERN, "num_vocab_tokens": len(tokens),
                   "default_vocab_size": NUM_SPECIAL + CUT, "default_num_special_tokens": NUM_SPECIAL,
                   "version": "v7"},
        "vocab": [{"rank": i, "token_bytes": base64.b64encode(t).decode(), "token_str": t.decode("utf-8", "replace")}
                  for i, t in enumerate(tokens)],
        "special_tokens": [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(LISTED)],
        "version": 1, "type": "Tekken",
    }


class Reference:
    """mistral_common's Tekkenizer.encode(text, bos=False, eos=False) and decode (IGNORE policy)."""

    def __init__(self, doc):
        ranks = {base64.b64decode(v["token_bytes"]): v["rank"] for v in doc["vocab"][:CUT]}
        self.model = tiktoken.Encoding("tekken", pat_str=doc["config"]["pattern"], mergeable_ranks=ranks,
                                       special_tokens={})

    def encode(self, text):
        return [t + NUM_SPECIAL for t in self.model.encode(text)]

    def decode(self, ids):
        return self.model.decode([t - NUM_SPECIAL for t in ids if t >= NUM_SPECIAL])


@pytest.fixture(scope="module")
def doc(gpt2_vocab_merges):
    return tekken_doc(gpt2_vocab_merges[0])


@pytest.fixture(scope="module")
def pair(doc, tmp_path_factory):
    path = tmp_path_factory.mktemp("tekken") / "tekken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return Tokenizer.from_tekken(path), Reference(doc)


def assert_agree(text, pair):
    tok, reference = pair
    expected = reference.encode(text)
    assert tok.encode(text) == expected
    assert tok.decode(expected) == reference.decode(expected)


def test_ids_as_the_reference(pair):
    tok, _ = pair
    assert tok.vocab_size == NUM_SPECIAL + CUT
    assert tok.control_tokens == {**{s: i for i, s in enumerate(LISTED)},
                                  **{f"<SPECIAL_{i}>": i for i in range(len(LISTED), NUM_SPECIAL)}}
    assert tok.special_tokens == {}
    assert tok.token_to_id(b"a") == NUM_SPECIAL + ord("a")


def test_special_token_text_stays_text(pair):
    text = "<s>[INST] hello <SPECIAL_12></s>"
    assert_agree(text, pair)
    assert not set(pair[0].encode(text)) & set(range(NUM_SPECIAL))
    assert pair[0].decode([1, 3] + pair[0].encode("hi") + [2]) == "hi"  # control ids decode as nothing


TRICKY = [" ", "\n", "\r\n", "\t", "'s", "0", "12345", "é", "中文", "한국", "🙂", ".", "/", "<s>", "[INST]"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(TRICKY), st.text(ASSIGNED, max_size=8)), max_size=20).map("".join))
def test_fuzzed_text(pair, text):
    assert_agree(text, pair)


@pytest.mark.parametrize("relative", ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt"])
def test_corpus_files(relative, pair):
    assert_agree(corpus_text(relative)[:100_000], pair)


def test_read_tekken_records_bos_and_eos(doc, tmp_path):
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    found = read_tekken(path)
    assert (found["bos"], found["eos"]) == ("<s>", "</s>")
    assert found["control_tokens"]["<s>"] == 1
    doc = copy.deepcopy(doc)
    doc["special_tokens"] = doc["special_tokens"][:1]
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert (read_tekken(path)["bos"], read_tekken(path)["eos"]) == (None, None)


def test_old_files_without_special_tokens_get_the_deprecated_ones(doc, tmp_path):
    doc = copy.deepcopy(doc)
    del doc["special_tokens"]
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    control = Tokenizer.from_tekken(path).control_tokens
    assert control["[TOOL_CONTENT]"] == 19 and control["<SPECIAL_20>"] == 20


def test_save_and_load_keep_the_ids(pair, tmp_path):
    tok, reference = pair
    tok.save(tmp_path)
    loaded = Tokenizer.load(tmp_path)
    text = corpus_text("english/wikitext2_valid.txt")[:30_000] + "<s>[INST]"
    assert loaded.encode(text) == reference.encode(text)
    assert loaded.control_tokens == tok.control_tokens


# --- faults -------------------------------------------------------------------------------------

def _set(path, value):
    def change(doc):
        *parents, last = path
        for key in parents:
            doc = doc[key]
        doc[last] = value
    return change


def _delete(path):
    def change(doc):
        *parents, last = path
        for key in parents:
            doc = doc[key]
        del doc[last]
    return change


@pytest.mark.parametrize("change, message", [
    (_set(["vocab", 300, "token_bytes"], "YW*="), r"vocab\[300\].token_bytes: \"YW\*=\" is not base64"),
    (_set(["vocab", 300, "token_bytes"], base64.b64encode(b"the").decode()),
     r"vocab\[\d+\].token_bytes: the token of vocab\[\d+\] too"),
    (_set(["vocab", 300, "rank"], 301), r"vocab\[300\].rank: 301 is outside 300..300"),
    (_set(["vocab", 300, "rank"], "300"), r"vocab\[300\].rank: expected an int, got \"300\""),
    (_set(["vocab", 65, "token_bytes"], base64.b64encode(b"B").decode()),
     r"vocab\[65\].token_bytes: expected the byte 0x41"),
    (_set(["vocab", 300, "extra"], 1), r"vocab\[300\]: unknown field \"extra\""),
    (_set(["vocab", 300], [1]), r"vocab\[300\]: expected an object"),
    (_set(["config", "default_vocab_size"], 10**7), r"config.default_vocab_size: 10000000 is outside"),
    (_set(["config", "default_vocab_size"], 300), r"config.default_vocab_size: 300 is outside 456"),
    (_set(["config", "default_num_special_tokens"], 3), r"config.default_num_special_tokens: 3 is outside 7"),
    (_set(["config", "default_num_special_tokens"], 2.0), r"config.default_num_special_tokens: expected an int"),
    (_set(["config", "version"], "7"), r"config.version: expected v<number>"),
    (_delete(["config", "version"]), r"config: missing 'version'"),
    (_set(["config", "pattern"], "(unclosed"), r"config.pattern: "),
    (_set(["config", "version"], "v13"), None),  # fine with special tokens listed
    (_set(["special_tokens", 2, "rank"], 5), r"special_tokens\[2\].rank: 5 is outside 2..2"),
    (_set(["special_tokens", 2, "token_str"], "<s>"), r"special_tokens\[2\].token_str: \"<s>\" is also special_tokens\[1\]'s"),
    (_set(["special_tokens", 2, "is_control"], 1), r"special_tokens\[2\].is_control: expected true or false"),
    (_set(["special_tokens", 2, "token_str"], ""), r"special_tokens\[2\].token_str: is empty"),
    (_set(["special_tokens"], {}), r"special_tokens: expected an array"),
    (_set(["vocab"], "abc"), r"vocab: expected an array"),
])
def test_malformed_files_name_the_field(change, message, doc, tmp_path):
    doc = copy.deepcopy(doc)
    change(doc)
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    if message is None:
        Tokenizer.from_tekken(path)
        return
    with pytest.raises(TokenizerFileError, match=rf"tekken.json: {message}"):
        Tokenizer.from_tekken(path)


def test_newer_files_must_list_their_special_tokens(doc, tmp_path):
    doc = copy.deepcopy(doc)
    del doc["special_tokens"]
    doc["config"]["version"] = "v11"
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=r"special_tokens: missing: a file of version v11"):
        Tokenizer.from_tekken(path)


def test_oversize_file_is_refused(doc, tmp_path, monkeypatch):
    monkeypatch.setattr("tokfx.formats.untrusted.MAX_FILE_BYTES", 1000)
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=r"tekken.json: larger than 1,000 bytes"):
        Tokenizer.from_tekken(path)
