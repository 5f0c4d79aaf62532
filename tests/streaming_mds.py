"""MosaicML streaming's own MDS reader and writer, for the tests of `--format mds`, without
what `import streaming` brings.

`pip install mosaicml-streaming` asks for torchvision, transformers, numpy<2.2 and the cloud
SDKs, and `import streaming` imports them all (its `__init__` re-exports the vision, text and
dataloader classes); reading an MDS shard needs none of them. So the tests install the wheel
alone (`pip install --no-deps mosaicml-streaming==0.13.0`, README's test command) and import
the reader's own modules: `streaming`, `streaming.base`, `streaming.base.format` and
`streaming.base.format.mds`, the packages above `MDSReader`, are registered as the installed
packages (their real paths) with their `__init__` not run; everything below them runs as
installed: `streaming.base.format.mds.reader` (MDSReader), its encodings, the base reader and
`streaming.base.util`, which imports torch.distributed: without torch (the megatron extra's
CPU build) or the wheel, the tests that read MDS skip. Nothing of streaming is replaced.
`MDSWriter`'s modules import its compressors and hashes too (brotli, python-snappy, zstd,
xxhash) and tqdm: the test extra has them.

`read_mds(folder)` then does what streaming's LocalDataset does with a local folder (its own
`__init__` needs `streaming.base.format`'s writers' compressors): index.json, a reader per
shard entry (`MDSReader.from_json`), and every sample by `get_item`.
"""
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys

import pytest

_UNINITIALISED = ("streaming", "streaming.base", "streaming.base.format", "streaming.base.format.mds")


def _register_packages() -> None:
    for name in _UNINITIALISED:
        if name in sys.modules:
            continue
        parent, _, _ = name.rpartition(".")
        if parent:
            spec = importlib.machinery.PathFinder.find_spec(name, sys.modules[parent].__path__)
        else:
            spec = importlib.util.find_spec(name)  # a top-level package's spec: nothing is run
        if spec is None or spec.submodule_search_locations is None:
            pytest.skip("MosaicML streaming reads the MDS shards (pip install --no-deps mosaicml-streaming)")
        sys.modules[name] = importlib.util.module_from_spec(spec)


def _streaming_module(name: str):
    """A module of the installed streaming (skips without torch or the streaming wheel)."""
    pytest.importorskip("torch", reason="streaming's reader imports torch.distributed (the megatron extra's torch)")
    _register_packages()
    return importlib.import_module(name)


def mds_reader_class():
    return _streaming_module("streaming.base.format.mds.reader").MDSReader


def mds_writer_class():
    for module in ("brotli", "snappy", "zstd", "xxhash", "tqdm"):
        pytest.importorskip(module, reason="streaming's MDSWriter imports its compressors and hashes"
                                           " (pip install '.[test]')")
    return _streaming_module("streaming.base.format.mds.writer").MDSWriter


def read_mds(folder) -> list[dict]:
    """Every sample of the MDS dataset in `folder`, in the order of its index.json, by streaming's reader."""
    reader_class = mds_reader_class()
    index = json.loads(open(os.path.join(folder, "index.json")).read())
    assert index["version"] == 2
    samples = []
    for entry in index["shards"]:
        reader = reader_class.from_json(str(folder), None, entry)
        reader.validate(allow_unsafe_types=False)
        samples.extend(reader.get_item(i) for i in range(reader.samples))
    return samples
