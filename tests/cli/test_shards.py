"""`tokfx shards inspect / show / verify` on the outputs of tokfx run and tokfx encode
--output-dir: what they print is checked against the corpus itself, pyarrow's reading of the
shards, the file system, and the Hugging Face `tokenizers` library's decoding of the run's own
tokenizer.json."""
import json
import shutil
from collections import Counter

import pyarrow.parquet as pq
import pytest
import tokenizers

from beam_jobs.pipelines import run
from pipeline_corpus import SOURCES, paragraphs, read_shards, write_zst_shards
from tokfx.cli.main import main

VOCAB = 400


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    docs = [p for source in SOURCES for p in paragraphs(source, 8_000)]
    directory = tmp_path_factory.mktemp("corpus")
    return directory, write_zst_shards(directory, docs, shards=2)


@pytest.fixture(scope="module")
def output(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    run("run", ["--input", str(corpus[0] / "*.jsonl.zst"), "--output", str(out), "--vocab-size", str(VOCAB),
                "--shard-size", "4K", "--append-eos", "-q"])
    return out


def _shards(capsys, *argv):
    status = main(["shards", *map(str, argv)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _copy(output, tmp_path):
    shutil.copytree(output, tmp_path / "out")
    return tmp_path / "out"


def test_verify_passes_on_a_fresh_output_whose_manifest_has_every_files_size(output, capsys):
    manifest = json.loads((output / "manifest.json").read_text())
    assert len(manifest["shards"]) > 2
    for shard in manifest["shards"]:
        assert shard["sizes"] == {name: (output / name).stat().st_size for name in shard["files"]}
    status, out, err = _shards(capsys, "verify", output)
    assert (status, err) == (0, "")
    assert out.startswith(f"{output}: {3 * len(manifest['shards']) + 4} files match manifest.json")


def test_verify_catches_a_flipped_byte_a_missing_file_and_a_stray_one(output, tmp_path, capsys):
    out = _copy(output, tmp_path)
    bins = sorted((out / "shards").glob("*.bin"))
    data = bytearray(bins[1].read_bytes())
    data[len(data) // 2] ^= 0x01
    bins[1].write_bytes(bytes(data))
    (out / "shards" / f"{bins[2].stem}.parquet").unlink()
    (out / "shards" / "stray.bin").write_bytes(b"\0\0")
    (out / "tokenizer" / "vocab.json").write_text("{}")
    status, printed, _ = _shards(capsys, "verify", out)
    assert status == 1
    assert printed.splitlines() == [
        f"{out}/shards/{bins[1].name}: sha256 differs from the manifest's",
        f"{out}/shards/{bins[2].stem}.parquet: missing",
        f"{out}/tokenizer/vocab.json: sha256 differs from the manifest's",
        f"{out}/shards/stray.bin: not in the manifest"]


def test_verify_catches_counts_that_are_not_the_files(output, tmp_path, capsys):
    out = _copy(output, tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    shard = manifest["shards"][0]
    shard["tokens"] += 1
    (out / "manifest.json").write_text(json.dumps(manifest))
    status, printed, _ = _shards(capsys, "verify", out)
    assert status == 1
    tokens = shard["tokens"] - 1
    says = f"{shard['documents']:,} documents, {tokens:,} tokens; the manifest says {shard['documents']:,} and {tokens + 1:,}"
    assert printed.splitlines() == [f"{out}/shards/{shard['name']}.parquet: {says}",
                                    f"{out}/shards/{shard['name']}.idx: {says}",
                                    f"{out}/manifest.json: totals.tokens is {manifest['totals']['tokens']:,},"
                                    f" its shards hold {manifest['totals']['tokens'] + 1:,}"]


def test_verify_of_a_directory_without_a_manifest_is_one_line(tmp_path, capsys):
    status, printed, err = _shards(capsys, "verify", tmp_path)
    assert (status, printed) == (2, "")
    assert err == f"tokfx: error: {tmp_path}/manifest.json: not found (not a tokfx output directory, or its run did not finish)\n"


def _shown(printed: str) -> dict:
    head, text = printed.split("\ntext:\n", 1)
    fields = dict(line.split(":", 1) for line in head.splitlines())
    return {**{k: v.strip() for k, v in fields.items()}, "text": text[:-1]}


def test_show_by_index_and_by_id_gives_the_document_and_its_text(corpus, output, capsys):
    rows = read_shards(output)  # every shard, in order: the document indices
    hf = tokenizers.Tokenizer.from_file(str(output / "tokenizer" / "tokenizer.json"))
    for index in (0, 7, len(rows) - 1):
        row = rows[index]
        for argv in (["--index", index], ["--id", row["id"]]):
            status, printed, _ = _shards(capsys, "show", output, *argv)
            assert status == 0
            shown = _shown(printed)
            assert shown["id"] == shown["source"] == row["id"]
            assert json.loads(shown["ids"]) == row["input_ids"]
            assert shown["document"].startswith(f"{index:,} of {len(rows):,}")
            # The text is the input document's, as the peer decodes the ids (and the EOS).
            assert shown["text"] == hf.decode(row["input_ids"], skip_special_tokens=False)
            assert shown["text"] == corpus[1][row["id"]] + "<|endoftext|>"


def test_show_decodes_with_the_tokenizer_a_loaded_run_names(corpus, output, tmp_path, capsys):
    given = tmp_path / "tokenizer.json"
    shutil.copy(output / "tokenizer" / "tokenizer.json", given)
    encoded = tmp_path / "encoded"
    assert main(["encode", str(given), "--output-dir", str(encoded), "--input",
                 str(corpus[0] / "*.jsonl.zst"), "-q"]) == 0
    doc_id = read_shards(encoded)[3]["id"]
    status, printed, _ = _shards(capsys, "show", encoded, "--id", doc_id)
    assert status == 0 and _shown(printed)["text"] == corpus[1][doc_id]
    pristine = shutil.copy(given, tmp_path / "pristine.json")
    given.write_text(given.read_text().replace('"<|endoftext|>"', '"<|end|>"'))
    status, printed, err = _shards(capsys, "show", encoded, "--id", doc_id)
    assert status == 2
    assert err == (f"tokfx: error: {given}: changed since the shards were written (its sha256 is not"
                   f" the manifest's): give --tokenizer\n")
    status, printed, err = _shards(capsys, "show", encoded, "--id", doc_id, "--tokenizer", given)
    assert status == 2 and "not the tokenizer the shards were encoded with" in err
    status, printed, _ = _shards(capsys, "show", encoded, "--id", doc_id, "--tokenizer", pristine)
    assert status == 0 and _shown(printed)["text"] == corpus[1][doc_id]


@pytest.mark.parametrize("argv, message", [
    ([], "give --id ID or --index N (one of them)"),
    (["--index", "0", "--id", "x"], "give --id ID or --index N (one of them)"),
    (["--index", "100000"], "--index 100000: the output holds"),
    (["--id", "no-such-id"], "--id no-such-id: no document of"),
])
def test_show_refuses_what_it_cannot_show(output, capsys, argv, message):
    status, printed, err = _shards(capsys, "show", output, *argv)
    assert (status, printed) == (2, "") and err.startswith("tokfx: error: ") and message in err
    assert len(err.splitlines()) == 1


def test_inspect_counts_per_shard_and_per_source_file(corpus, output, capsys):
    manifest = json.loads((output / "manifest.json").read_text())
    status, printed, _ = _shards(capsys, "inspect", output)
    assert status == 0
    lines = printed.splitlines()
    totals = manifest["totals"]
    assert f"documents:  {len(corpus[1]):,} written of {len(corpus[1]):,} read, 0 rejected, 0 empty;" \
           " 0 files rejected" in lines
    assert f"tokens:     {totals['tokens']:,} from {totals['bytes']:,} bytes of text" in printed
    for path in sorted((output / "shards").glob("*.parquet")):
        table = pq.read_table(path)
        sizes = sum(path.with_suffix(s).stat().st_size for s in (".parquet", ".bin", ".idx"))
        assert (f"{path.stem:<24}{table.num_rows:>12,}{sum(table.column('num_tokens').to_pylist()):>14,}"
                in printed) and f"{sizes:>16,}" in printed
    documents = Counter(doc_id.rsplit(":", 1)[0] for doc_id in corpus[1])
    tokens = Counter()
    for row in read_shards(output):
        tokens[row["source"].rsplit(":", 1)[0]] += len(row["input_ids"])
    assert len(documents) == 2
    for file, count in documents.items():
        assert f"{count:>12,}{tokens[file]:>14,}  {file}" in lines

