"""Where the tests find their data: small fixtures in tests/fixtures, large corpora in ../shared."""
import os
import subprocess
import sys
from array import array
from pathlib import Path

import pytest
from hypothesis import strategies as st

FIXTURES = Path(__file__).parent / "fixtures"
SHARED = Path(os.environ.get("TOKFX_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CORPORA = SHARED / "corpora"

# Every real-text corpus file in ../shared/corpora (not the GPT-2 vocab/merges fixtures).
CORPUS_FILES = [
    "english/pg2600_war_and_peace.txt",
    "english/pg135_les_miserables.txt",
    "english/pg2701_moby_dick.txt",
    "english/wikitext2_valid.txt",
    "english/wikitext2_test.txt",
    "chinese/hongloumeng.txt",
    "chinese/shuihu.txt",
    "korean/nsmc_reviews_4M.txt",
    "sentencepiece/botchan.txt",
    "sentencepiece/wagahaiwa_nekodearu.txt",
    "cs336/corpus.en",
    "cs336/address.txt",
    "cs336/german.txt",
    "cs336/tinystories_sample.txt",
]


# Characters assigned in Python's Unicode database (14.0 for 3.11), for texts compared with a
# peer's pre-tokenization: `regex` (whose tables the native splitter takes) ships newer Unicode
# than the Rust engines of tiktoken and tokenizers, so for a code point unassigned in 14.0 but a
# letter since (U+3D000, U+323B0, found by fuzzing) `regex` sees a letter where the peers do not.
ASSIGNED = st.characters(codec="utf-8", exclude_categories=("Cs", "Cn"))


def installed_outside_the_source_tree() -> bool:
    """Whether a fresh interpreter outside this checkout finds beam_jobs: Beam's
    multi_processing and portable workers must, since the source folder has no built extensions
    (run such a test from another directory: monkeypatch.chdir)."""
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('beam_jobs') is None)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", probe], cwd="/", env=env).returncode == 0


INSTALLED_ONLY = "multi_processing workers import tokfx from the installed package only: pip install . to run this test"


def fixture_path(name: str) -> Path:
    return FIXTURES / name


def corpus_path(relative: str) -> Path:
    """A file of ../shared/corpora, or skip the test with the reason when it is absent."""
    path = CORPORA / relative
    if not path.exists():
        pytest.skip(f"{path} not found: the large corpora live in ../shared (set TOKFX_SHARED)")
    return path


def corpus_text(relative: str) -> str:
    return corpus_path(relative).read_bytes().decode("utf-8")


@pytest.fixture(scope="session")
def gpt2_vocab_merges():
    """GPT-2's (vocab: {id: bytes}, merges: [(bytes, bytes)]) from the fixtures."""
    from tokfx.formats.gpt2 import read_gpt2_files

    return read_gpt2_files(fixture_path("gpt2_vocab.json"), fixture_path("gpt2_merges.txt"))


@pytest.fixture(scope="session")
def sentencepiece_models(tmp_path_factory):
    """sentencepiece models trained by sentencepiece itself when first asked for
    (tests/sentencepiece_models.py)."""
    from sentencepiece_models import TrainedModels

    return TrainedModels(tmp_path_factory.mktemp("sentencepiece"))


def ends_of(pieces: list[bytes]) -> array:
    """The int64 exclusive end offsets of consecutive pieces, as BPEEncoder.encode_pieces takes them."""
    ends, offset = array("q"), 0
    for piece in pieces:
        offset += len(piece)
        ends.append(offset)
    return ends
