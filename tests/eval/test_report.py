"""tokfx eval: the report files, and its numbers against a direct computation."""
import json
import math
import struct
import sys
from collections import Counter

import pytest

import tokfx
from tokfx.cli.main import main
from tokfx.eval.report import corpus_documents, evaluate, write_report
from tokfx.reference.neighbours import distinct_neighbours
from conftest import corpus_path, corpus_text

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which follows the signature."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def tokenizer_dirs(tmp_path_factory):
    """Two BPE tokenizers trained on corpus.en: vocabularies of 500 and 1000."""
    text = corpus_text("cs336/corpus.en")
    root = tmp_path_factory.mktemp("tokenizers")
    dirs = []
    for size in (500, 1000):
        tokfx.train(text, vocab_size=size).save(root / f"bpe{size}")
        dirs.append(root / f"bpe{size}")
    return dirs


def test_eval_writes_every_file(tokenizer_dirs, tmp_path, capsys):
    corpus = corpus_path("cs336/tinystories_sample.txt")
    out = tmp_path / "report"
    assert main(["eval", *map(str, tokenizer_dirs), "--corpus", str(corpus), "-o", str(out), "-q"]) == 0
    expected = {"metrics.json", "metrics.md", "index.html", "token_lengths.png", "frequency_rank.png",
                "ctc_bytes_per_token.png", "vocabulary_overlap.png"}
    assert {p.name for p in out.iterdir()} == expected
    assert sorted(capsys.readouterr().out.split()) == sorted(str(out / f) for f in expected)
    for png in out.glob("*.png"):
        width, height = png_size(png)
        assert width >= 400 and height >= 300 and png.stat().st_size > 10_000
    page = (out / "index.html").read_text()
    assert all(f'src="{png.name}"' in page for png in out.glob("*.png"))
    assert "<td>corpus token count (CTC)</td>" in page
    table = (out / "metrics.md").read_text()
    assert table.startswith("| metric | bpe500 | bpe1000 |\n|---|---|---|\n")


def test_metrics_json_equals_a_direct_computation(tokenizer_dirs, tmp_path):
    corpus = corpus_path("cs336/tinystories_sample.txt")
    out = tmp_path / "report"
    main(["eval", *map(str, tokenizer_dirs), "--corpus", str(corpus), "-o", str(out), "-q", "--no-plots"])
    report = json.loads((out / "metrics.json").read_text())
    # The documents: the pieces between <|endoftext|> separators, empty pieces dropped.
    docs = [d for d in corpus.read_text(encoding="utf-8").split("<|endoftext|>") if d]
    assert report["corpus"] == {"documents": len(docs), "characters": sum(map(len, docs)),
                                "bytes": sum(len(d.encode()) for d in docs),
                                "words": sum(len(d.split()) for d in docs)}
    assert len(docs) == 6
    bytes_total = sum(len(d.encode()) for d in docs)
    token_sets = {}
    for directory in tokenizer_dirs:
        tok = tokfx.Tokenizer.load(directory)
        got = report["tokenizers"][directory.name]["metrics"]
        outputs = [tok.encode_ordinary(d) for d in docs]
        counts = Counter(i for ids in outputs for i in ids)
        ctc = sum(map(len, outputs))
        regular = [i for i in range(tok.vocab_size) if i not in tok.special_tokens.values()]
        tokens = tok.tokens
        p = [c / ctc for c in counts.values()]
        renyi = math.log(sum(q ** 2.5 for q in p)) / (1 - 2.5) / math.log(tok.vocab_size)
        neighbours = distinct_neighbours(outputs, 2, tok.vocab_size)
        assert got["ctc"] == ctc
        assert got["bytes_per_token"] == pytest.approx(bytes_total / ctc)
        assert got["chars_per_token"] == pytest.approx(sum(map(len, docs)) / ctc)
        assert got["fertility"] == pytest.approx(ctc / sum(len(d.split()) for d in docs))
        assert got["renyi_efficiency"] == pytest.approx(renyi)
        assert got["unused_vocabulary_share"] == pytest.approx(
            sum(1 for i in regular if i not in counts) / len(regular))
        assert got["context_diversity"] == pytest.approx(sum(neighbours) / ctc)
        assert got["frequency_rank"] == sorted(counts.values(), reverse=True)
        assert got["token_length_corpus"] == {
            str(n): sum(c for i, c in counts.items() if len(tokens[i]) == n)
            for n in sorted({len(tokens[i]) for i in counts})}
        assert sum(got["token_length_vocabulary"].values()) == len(regular)
        assert got["decode_errors"] == 0
        token_sets[directory.name] = {tokens[i] for i in regular}
    # Both trained on the same counts: bpe1000's first 500 - 1 tokens are bpe500's.
    small, large = token_sets["bpe500"], token_sets["bpe1000"]
    assert small <= large
    assert report["overlap"]["regions"] == {"10": 0, "01": len(large - small), "11": len(small)}
    assert report["overlap"]["jaccard"]["bpe500"]["bpe1000"] == pytest.approx(len(small) / len(large))
    assert report["tokenizers"]["bpe1000"]["metrics"]["unique_tokens"] == len(large) - len(small) == 500


def test_jsonl_corpus_and_a_heatmap_for_four_tokenizers(tokenizer_dirs, tmp_path):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("\n".join(json.dumps({"text": t}) for t in ["the cat sat", "on the mat"]) + "\n")
    assert list(corpus_documents([corpus])) == ["the cat sat", "on the mat"]
    dirs = [*map(str, tokenizer_dirs), *map(str, tokenizer_dirs)]
    out = tmp_path / "report"
    assert main(["eval", *dirs, "--corpus", str(corpus), "-o", str(out), "-q"]) == 0
    report = json.loads((out / "metrics.json").read_text())
    # Names repeat, so each gets its position.
    assert list(report["tokenizers"]) == ["1:bpe500", "2:bpe1000", "3:bpe500", "4:bpe1000"]
    assert report["corpus"]["documents"] == 2 and "regions" not in report["overlap"]
    assert report["overlap"]["jaccard"]["1:bpe500"]["3:bpe500"] == 1.0
    assert png_size(out / "vocabulary_overlap.png")[0] >= 400  # the heatmap


def test_figures_are_deterministic(tokenizer_dirs, tmp_path):
    tokenizers = {d.name: tokfx.Tokenizer.load(d) for d in tokenizer_dirs}
    report = evaluate(tokenizers, ["the cat sat on the mat", "a dog"])
    first, second = tmp_path / "a", tmp_path / "b"
    write_report(report, first)
    write_report(report, second)
    for path in first.iterdir():
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name


def test_without_matplotlib_metrics_still_come_out(tokenizer_dirs, tmp_path, monkeypatch, capsys):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")
                 or m == "tokfx.eval.plots"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    tokenizers = {d.name: tokfx.Tokenizer.load(d) for d in tokenizer_dirs}
    written = write_report(evaluate(tokenizers, ["the cat"]), tmp_path)
    assert [p.name for p in written] == ["metrics.json", "metrics.md", "index.html"]
    assert "pip install 'tokfx[plot]'" in capsys.readouterr().err
    assert "pip install &#x27;tokfx[plot]&#x27;" in (tmp_path / "index.html").read_text()


def test_bad_input_is_refused(tokenizer_dirs, tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["eval", str(tokenizer_dirs[0]), "--corpus", str(empty), "-o", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err == f"tokfx: error: {empty}: empty file\n"
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n")
    assert main(["eval", str(tokenizer_dirs[0]), "--corpus", str(blank), "-o", str(tmp_path / "r")]) == 2
    assert "no documents" in capsys.readouterr().err
    assert main(["eval", str(tokenizer_dirs[0]), "--corpus", str(tmp_path / "missing.txt"),
                 "-o", str(tmp_path / "r")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_scaffold_share_only_for_a_scaffold_tokenizer(tokenizer_dirs, tmp_path):
    scaffold = tokfx.train(corpus_text("cs336/corpus.en"), "scaffold-bpe", vocab_size=1000)
    vocab = scaffold.scaffold
    assert vocab.scaffold, "corpus.en at 1000 should flag some scaffold tokens"
    scaffold.save(tmp_path / "scaffold1000")
    out = tmp_path / "report"
    assert main(["eval", str(tokenizer_dirs[1]), str(tmp_path / "scaffold1000"), "--corpus",
                 str(corpus_path("cs336/tinystories_sample.txt")), "-o", str(out), "-q",
                 "--no-plots"]) == 0
    report = json.loads((out / "metrics.json").read_text())["tokenizers"]
    assert report["bpe1000"]["metrics"]["scaffold_share"] is None
    # Scaffold tokens over base symbols + every merge of the expanded vocabulary.
    expected = len(vocab.scaffold) / (256 + len(vocab.merges))
    assert report["scaffold1000"]["metrics"]["scaffold_share"] == pytest.approx(expected)
    row = next(line for line in (out / "metrics.md").read_text().splitlines() if "scaffold share" in line)
    assert row == f"| scaffold share of the expanded vocabulary | – | {expected:.2%} |"


def test_no_scaffold_row_without_a_scaffold_tokenizer(tokenizer_dirs, tmp_path):
    out = tmp_path / "report"
    main(["eval", *map(str, tokenizer_dirs), "--corpus",
          str(corpus_path("cs336/tinystories_sample.txt")), "-o", str(out), "-q", "--no-plots"])
    assert "scaffold share" not in (out / "metrics.md").read_text()
