"""--train-sample: tokfx run trains on the stated sample of whole read tasks (the tokenizer is
the library's, trained in process on exactly those tasks' documents), the same sample every
run, and still encodes every document."""
import json
from pathlib import Path

import pytest

import tokfx
from beam_jobs.pipelines import run
from beam_jobs.plan import ReadTask
from beam_jobs.sample import sample_tasks, task_sizes
from pipeline_corpus import EOT, SOURCES, paragraphs, read_shards, write_zst_shards
from tokfx.cli.main import main
from tokfx.formats.tokfx_json import tokenizer_json_bytes

VOCAB = 350


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    docs = [p for source in SOURCES for p in paragraphs(source, 10_000)]
    directory = tmp_path_factory.mktemp("corpus")
    return directory, write_zst_shards(directory, docs, shards=5)


def _run(corpus, out, *extra):
    run("run", ["--input", str(corpus[0] / "*.jsonl.zst"), "--output", str(out), "--vocab-size", str(VOCAB),
                "-q", *extra])
    return json.loads((out / "manifest.json").read_text())


@pytest.fixture(scope="module")
def sampled(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    return out, _run(corpus, out, "--train-sample", "40%")


def test_the_tokenizer_is_trained_on_the_stated_sample_and_every_document_is_encoded(corpus, sampled):
    out, manifest = sampled
    files = sorted(corpus[0].glob("*.jsonl.zst"))  # one read task each, in the plan's order
    record = manifest["config"]["train_sample"]
    sizes = {str(f): f.stat().st_size for f in files}
    chosen = [str(files[i]) for i in record["read_tasks"]]
    assert record["requested"] == {"share": 0.4} and record["corpus_bytes"] == sum(sizes.values())
    assert record["bytes"] == sum(sizes[f] for f in chosen) >= 0.4 * record["corpus_bytes"]
    assert 0 < len(chosen) < len(files)
    # As few tasks as reach the share: without the largest of them it would not.
    assert record["bytes"] - max(sizes[f] for f in chosen) < 0.4 * record["corpus_bytes"]
    texts = [text for doc_id, text in corpus[1].items() if doc_id.rsplit(":", 1)[0] in chosen]
    expected = tokfx.train(texts, vocab_size=VOCAB, special_tokens=[EOT])
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    everything = tokfx.train(list(corpus[1].values()), vocab_size=VOCAB, special_tokens=[EOT])
    assert tokenizer_json_bytes(expected) != tokenizer_json_bytes(everything)
    rows = read_shards(out)
    assert sorted(r["id"] for r in rows) == sorted(corpus[1])
    assert all(r["input_ids"] == expected.encode(corpus[1][r["id"]]) for r in rows)


def test_the_same_sample_every_run(corpus, sampled, tmp_path):
    manifest = _run(corpus, tmp_path / "again", "--train-sample", "0.4")
    assert manifest == sampled[1]
    assert (tmp_path / "again" / "tokenizer" / "tokfx.json").read_bytes() == \
        (sampled[0] / "tokenizer" / "tokfx.json").read_bytes()


def test_a_sample_in_bytes_takes_tasks_until_it_reaches_them(corpus, tmp_path):
    record = _run(corpus, tmp_path / "out", "--train-sample", "1")["config"]["train_sample"]
    assert record["requested"] == {"bytes": 1} and len(record["read_tasks"]) == 1


def _tasks(sizes_and_parts):
    return tuple(ReadTask(i, path, size, part) for i, (path, size, part) in enumerate(sizes_and_parts))


def test_a_files_bytes_are_shared_among_its_tasks_by_their_parts():
    tasks = _tasks([("a.txt", 1000, (0, 300)), ("a.txt", 1000, (300, 1000)), ("b.zst", 500, None),
                    ("c.parquet", 900, (0, 1)), ("c.parquet", 900, (1, 3))])
    assert task_sizes(tasks) == [300, 700, 500, 300, 600]


def test_the_sample_does_not_depend_on_the_plans_order_or_on_other_files():
    tasks = _tasks([(f"f{k:02d}.zst", 100, None) for k in range(40)])
    chosen = {t.path for t in sample_tasks(tasks, ("share", 0.25))}
    assert len(chosen) == 10
    assert chosen != {t.path for t in tasks[:10]}  # spread, not the plan's first files
    more = _tasks([(f"f{k:02d}.zst", 100, None) for k in range(40)] + [("new.zst", 100, None)])
    with_one_more = {t.path for t in sample_tasks(more, ("bytes", 1000))}
    assert with_one_more == chosen or len(with_one_more ^ chosen) == 2 and "new.zst" in with_one_more


@pytest.mark.parametrize("argv, message", [
    (["encode", "{tokenizer}", "--output-dir", "{out}", "--train-sample", "10%"],
     "--train-sample is for tokfx run, not tokfx encode"),
    (["run", "--tokenizer", "{tokenizer}", "--output", "{out}", "--train-sample", "10%"],
     "tokfx run --tokenizer encodes with that tokenizer and trains none: leave out --train-sample"),
    (["count", "--output", "{out}.parquet", "--train-sample", "10%"],
     "--train-sample is for tokfx run, not tokfx count"),
])
def test_train_sample_is_refused_where_nothing_is_trained(corpus, sampled, tmp_path, capsys, argv, message):
    given = {"{tokenizer}": str(sampled[0] / "tokenizer"), "{out}": str(tmp_path / "out")}
    argv = [given.get(a, a.replace("{out}", given["{out}"])) for a in argv]
    argv += ["--input", str(corpus[0] / "*.jsonl.zst")]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"tokfx: error: {message}\n"
    assert not Path(given["{out}"], "manifest.json").exists()
