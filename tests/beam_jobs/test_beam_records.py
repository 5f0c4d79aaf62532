"""The records between the pipeline's transforms (beam_jobs.records)."""
import json
from array import array
from importlib import resources

from apache_beam.coders import FastPrimitivesCoder

import tokfx
from beam_jobs.records import EncodedDoc, EncodedDocCoder, TokenizerFile, WrittenShard
from tokfx.formats.tokfx_json import tokenizer_hash, tokenizer_json_bytes

DOC = EncodedDoc("doc-1", array("i", [5, 0, 70_000, 2**31 - 1]).tobytes(), "corpus.jsonl:1", 12)


def test_a_tokenizer_file_loads_the_tokenizer_it_was_made_of():
    tokenizer = tokfx.train(["the cat sat on the mat"] * 3, vocab_size=520, alphabet="cjk",
                            cjk_groups=[0x39])
    file = TokenizerFile.of(tokenizer)
    assert file == (tokenizer_hash(tokenizer), tokenizer_json_bytes(tokenizer))
    assert tokenizer_hash(file.load()) == file.hash
    assert file.load().encode("the mat") == tokenizer.encode("the mat")
    assert file.alphabet() == {"name": "cjk", "groups": [0x39]}


def test_encoded_doc_ids_are_its_int32_bytes():
    assert DOC.ids() == array("i", [5, 0, 70_000, 2**31 - 1])


def test_encoded_doc_coder_round_trip_without_pickling():
    coder = EncodedDocCoder()
    decoded = coder.decode(coder.encode(DOC))
    assert decoded == DOC and type(decoded) is EncodedDoc
    # Beam's default coder pickles the record, naming its class in every element.
    assert b"EncodedDoc" in FastPrimitivesCoder().encode(DOC)
    assert b"EncodedDoc" not in coder.encode(DOC)


def test_written_shard_is_a_manifest_shard_entry_field_for_field():
    schema = json.loads(resources.files("tokfx.schemas").joinpath("manifest.schema.json").read_text())
    entry = schema["properties"]["shards"]["items"]
    assert list(WrittenShard._fields) == list(entry["properties"])
    assert set(entry["required"]) <= set(WrittenShard._fields)
