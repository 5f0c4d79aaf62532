"""tokfx run --eval-fraction: held-out documents are not trained on, and are evaluated."""
import json

import mmh3
import pytest

import tokfx
from beam_jobs.pipelines import run
from pipeline_corpus import paragraphs, read_shards
from tokfx.formats.shards.placement import is_held_out

FRACTION = 0.25
RARE = " zqxwv"  # a pre-token found in one held-out document only


def held_out_id() -> str:
    """The first id doc-rare-K that the hold-out chooses."""
    return next(f"doc-rare-{k}" for k in range(1000) if is_held_out(f"doc-rare-{k}", FRACTION))


def test_is_held_out_by_hand():
    # The definition: mmh3 with seed 1, unsigned, below fraction * 2**32.
    doc_id = held_out_id()
    assert mmh3.hash(doc_id.encode(), 1, signed=False) < FRACTION * 2 ** 32
    assert not is_held_out(doc_id, 0.0)
    ids = [f"d{i}" for i in range(4000)]
    share = sum(is_held_out(i, FRACTION) for i in ids) / len(ids)
    assert abs(share - FRACTION) < 0.03  # 4000 draws: standard deviation ~0.007


@pytest.fixture(scope="module")
def held_out_run(tmp_path_factory):
    docs = {f"doc-{i}": text for i, text in enumerate(paragraphs("english/pg2701_moby_dick.txt", 20_000))}
    docs[held_out_id()] = "The" + RARE * 2000
    corpus = tmp_path_factory.mktemp("corpus") / "docs.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs.items()))
    out = tmp_path_factory.mktemp("run") / "out"
    run("run", ["--input", str(corpus), "--output", str(out), "--id-field", "id", "--vocab-size", "400",
                "--eval-fraction", str(FRACTION), "-q"])
    return docs, out


def test_held_out_documents_never_reach_training(held_out_run):
    docs, out = held_out_run
    held = {i for i in docs if is_held_out(i, FRACTION)}
    assert 0 < len(held) < len(docs)
    tokenizer = tokfx.Tokenizer.load(out / "tokenizer")
    kept = [t for i, t in docs.items() if i not in held]
    assert tokenizer.merge_ids == tokfx.train(kept, vocab_size=400).merge_ids
    # Trained on everything, the rare pre-token would be one token; held out, it is not.
    assert len(tokfx.train(list(docs.values()), vocab_size=400).encode(RARE)) == 1
    assert len(tokenizer.encode(RARE)) > 1
    # They are still encoded into the shards.
    assert sorted(r["id"] for r in read_shards(out)) == sorted(docs)


def test_eval_report_of_the_held_out_documents(held_out_run):
    docs, out = held_out_run
    assert {"metrics.json", "metrics.md", "index.html"} <= {p.name for p in (out / "eval").iterdir()}
    report = json.loads((out / "eval" / "metrics.json").read_text())
    tokenizer = tokfx.Tokenizer.load(out / "tokenizer")
    held = [t for i, t in docs.items() if is_held_out(i, FRACTION)]
    assert report["corpus"]["documents"] == len(held)
    assert report["tokenizers"]["tokenizer"]["metrics"]["ctc"] == sum(
        len(tokenizer.encode_ordinary(t)) for t in held)
    assert "unique_tokens" not in report["tokenizers"]["tokenizer"]["metrics"]  # no other tokenizer
    assert "tokens in no other vocabulary" not in (out / "eval" / "metrics.md").read_text()


def test_eval_fraction_out_of_range(tmp_path):
    with pytest.raises(ValueError, match="eval-fraction"):
        run("run", ["--output", str(tmp_path), "--eval-fraction", "1.5", "-q"])
