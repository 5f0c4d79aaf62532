"""Data that ships inside the package: the small sample corpus (sample/README.md)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def sample_corpus() -> list[Path]:
    """The shards of the sample corpus, which commands read when given no input."""
    folder = resources.files("tokfx.data").joinpath("sample")
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".jsonl.zst"))
