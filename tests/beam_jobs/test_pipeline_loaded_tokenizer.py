"""tokfx encode --output-dir and tokfx run --tokenizer with a Hugging Face tokenizer.json (the
llama2 shape: its post-processor adds <s>), the shard ids against `tokenizers` reading the same
file; --prepend-bos / --append-eos and the manifest's record of the file."""
import hashlib
import json

import pytest
import tokenizers

from beam_jobs import pipelines
from beam_jobs.output_dir import GIVEN_TOKENIZER
from beam_jobs.pipelines import run
from beam_jobs.records import TokenizerFile
from tokfx import Tokenizer
from huggingface_files import write_shape
from pipeline_corpus import SOURCES, paragraphs, read_shards, stderr_lines, write_zst_shards
from tokfx.cli.main import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    docs = [p for source in SOURCES for p in paragraphs(source, 3_000)]
    directory = tmp_path_factory.mktemp("corpus")
    return directory, write_zst_shards(directory, docs, shards=2)


@pytest.fixture(scope="module")
def llama2(tmp_path_factory):
    path = write_shape("llama2", tmp_path_factory.mktemp("hf"))
    return path, tokenizers.Tokenizer.from_file(str(path))


def _encode(corpus, tokenizer, out, *flags):
    assert main(["encode", str(tokenizer), "--output-dir", str(out), "--input",
                 str(corpus[0] / "*.jsonl.zst"), "--shard-size", "4K", "-q", *flags]) == 0
    return json.loads((out / "manifest.json").read_text())


def _check_ids(out, corpus, expected):
    rows = read_shards(out)
    assert sorted(r["id"] for r in rows) == sorted(corpus[1])
    for row in rows:
        assert row["input_ids"] == expected(corpus[1][row["id"]])


def _source(path) -> dict:
    return {"file": str(path), "format": "huggingface",
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


@pytest.fixture(scope="module")
def encoded(corpus, llama2, tmp_path_factory):
    out = tmp_path_factory.mktemp("enc") / "out"
    return out, _encode(corpus, llama2[0], out)


def test_encode_frames_documents_as_the_tokenizer_does(corpus, llama2, encoded):
    out, manifest = encoded
    hf = llama2[1]
    # By default <s> before every document, as tokenizers' own post-processor adds it.
    assert hf.encode("a").ids[0] == hf.token_to_id("<s>")
    _check_ids(out, corpus, lambda text: hf.encode(text).ids)
    assert (manifest["config"]["prepend_bos"], manifest["config"]["append_eos"]) == (True, False)
    assert manifest["tokenizer_source"] == _source(llama2[0])
    assert "tokenizer_files" not in manifest


def test_the_tokenizer_reaches_the_workers_in_the_output_dir_not_in_the_graph(corpus, llama2, tmp_path,
                                                                           monkeypatch):
    seen = {}

    def run_pipeline(p, command, opts, output, built):
        graph = p.to_runner_api()
        seen["payloads"] = [len(t.spec.payload) for t in graph.components.transforms.values()
                            if t.unique_name.startswith("Tokenizer/")]
        return real_run(p, command, opts, output, built)

    real_run, real_write, written = pipelines._run_pipeline, TokenizerFile.write, []
    monkeypatch.setattr(pipelines, "_run_pipeline", run_pipeline)
    monkeypatch.setattr(TokenizerFile, "write", lambda self, path: written.append(path) or real_write(self, path))
    _encode(corpus, llama2[0], tmp_path / "out")
    # Beam's Create put its values into the graph: the tokenizer's pickle (22 KB here, 0.56 MB
    # for GPT-2) was a transform's payload, copied into the launcher and the workers.
    pickled = len(TokenizerFile.of(Tokenizer.load(llama2[0])).zstd_pickle)
    assert pickled > 20_000 and seen["payloads"] and max(seen["payloads"]) < 5_000
    # It was written where the workers read it, and removed with the run.
    assert written == [str(tmp_path / "out" / GIVEN_TOKENIZER)]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json", "receipts", "settings.json",
                                                                    "shards"]


def test_encode_with_the_framing_forced(corpus, llama2, tmp_path):
    hf = llama2[1]
    manifest = _encode(corpus, llama2[0], tmp_path / "out", "--no-prepend-bos", "--append-eos")
    # The post-processor names no EOS: </s>, the model's end-of-sequence token, is appended.
    eos = hf.token_to_id("</s>")
    _check_ids(tmp_path / "out", corpus, lambda text: hf.encode(text, add_special_tokens=False).ids + [eos])
    assert (manifest["config"]["prepend_bos"], manifest["config"]["append_eos"]) == (False, True)


def test_run_with_a_tokenizer_encodes_with_it_and_trains_none(corpus, llama2, encoded, tmp_path):
    out = tmp_path / "run"
    run("run", ["--tokenizer", str(llama2[0]), "--input", str(corpus[0] / "*.jsonl.zst"),
                "--output", str(out), "--shard-size", "4K", "-q"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert read_shards(out) == read_shards(encoded[0])
    assert manifest["tokenizer_source"] == _source(llama2[0])
    # Its tokfx.json is in the output, named by the manifest, and is the tokenizer hash's.
    files = manifest["tokenizer_files"]
    assert files["tokenizer/tokfx.json"] == manifest["tokenizer_hash"] == encoded[1]["tokenizer_hash"]
    assert not (out / "counting").exists() and "vocab_size" not in manifest["config"]
    # A resume that would frame the documents otherwise is refused, as other changed settings are.
    with pytest.raises(ValueError, match="changed: prepend_bos"):
        run("run", ["--tokenizer", str(llama2[0]), "--input", str(corpus[0] / "*.jsonl.zst"),
                    "--output", str(out), "--shard-size", "4K", "-q", "--no-prepend-bos"])


@pytest.mark.parametrize("shape, args, message", [
    ("qwen2", ["encode", "{tokenizer}", "--output-dir", "{out}", "--prepend-bos"],
     "--prepend-bos: {tokenizer} has no BOS token"),
    ("every-component", ["encode", "{tokenizer}", "--output-dir", "{out}", "--append-eos"],
     "--append-eos: {tokenizer} has no EOS token"),
    (None, ["run", "--output", "{out}", "--prepend-bos"], "--prepend-bos: a tokenizer tokfx run trains has no BOS"),
    ("llama2", ["run", "--tokenizer", "{tokenizer}", "--output", "{out}", "--vocab-size", "300"],
     "trains none: leave out --vocab-size"),
])
def test_a_flag_the_tokenizer_cannot_honour_is_one_line_and_leaves_no_output(
        corpus, tmp_path, capsys, shape, args, message):
    tokenizer = write_shape(shape, tmp_path) if shape else None
    out = tmp_path / "nested" / "out"
    args = [a.format(tokenizer=tokenizer, out=out) for a in args]
    assert main([*args, "--input", str(corpus[0] / "*.jsonl.zst"), "-q"]) == 2
    lines = stderr_lines(capsys.readouterr().err)
    assert len(lines) == 1 and message.format(tokenizer=tokenizer) in lines[0], lines
    assert not (tmp_path / "nested").exists()
