"""The records between the pipeline's transforms (beam_jobs.records, beam_jobs.receipts)."""
import json
from importlib import resources

import tokfx
from beam_jobs.receipts import ShardReceipt
from beam_jobs.records import TokenizerFile
from tokfx.formats.tokfx_json import tokenizer_hash, tokenizer_json_bytes

def test_a_tokenizer_file_loads_the_tokenizer_it_was_made_of():
    tokenizer = tokfx.train(["the cat sat on the mat"] * 3, vocab_size=520, alphabet="cjk",
                            cjk_groups=[0x39])
    file = TokenizerFile.of(tokenizer)
    assert file.hash == tokenizer_hash(tokenizer)
    assert tokenizer_json_bytes(file.load()) == tokenizer_json_bytes(tokenizer)
    assert file.load().encode("the mat") == tokenizer.encode("the mat")
    assert file.alphabet == {"name": "cjk", "groups": [0x39]}
    assert file.alphabet == json.loads(tokenizer_json_bytes(tokenizer))["alphabet"]


def test_a_shard_receipts_manifest_entry_is_the_schemas_shard_entry():
    schema = json.loads(resources.files("tokfx.schemas").joinpath("manifest.schema.json").read_text())
    entry = schema["properties"]["shards"]["items"]
    receipt = ShardReceipt("shard-00000-0000", 0, 0, "k", 3, {"shards/a": "0" * 64}, {"shards/a": 1},
                           3, 0, 10, 20)
    assert list(receipt.manifest_entry()) == list(entry["properties"])
    assert set(entry["required"]) <= set(receipt.manifest_entry())
