"""The structural-shifts authors' published split files (real files of ../shared/datasets;
skipped when absent) and the reader's errors (on temporary files)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import gs_data
from gs_data.splits import AUTHORS_SPLIT_KEYS, authors_split, load_authors_split

_LOADED: dict = {}


@pytest.mark.parametrize("name", ["cora-ml", "citeseer"])
@pytest.mark.parametrize("strategy", ["popularity", "locality", "density", "random"])
def test_authors_masks_equal_the_files_exactly(shared_datasets, name, strategy):
    path = shared_datasets / "structural-shifts" / name / "splits" / f"{strategy}.pth"
    if not path.is_file():
        pytest.skip(f"{path} not on this machine")
    raw = torch.load(path, weights_only=True)  # independent read of the same file
    if name not in _LOADED:
        _LOADED[name] = gs_data.load(name, root=shared_datasets, download=False, use_cache=False)
    data = _LOADED[name]
    out = authors_split(data, name, strategy, root=shared_datasets)
    for theirs, ours in AUTHORS_SPLIT_KEYS.items():
        assert torch.equal(getattr(out, f"{ours}_mask"), raw[theirs].bool()), ours
    # the five parts tile the graph
    total = sum(getattr(out, f"{p}_mask").long() for p in AUTHORS_SPLIT_KEYS.values())
    assert bool((total == 1).all())
    assert out.split_metadata["source"] == "authors"
    # appendix-F domains from the authors' splitting values: 10 bins, 0 = most ID-like
    assert out.domain.shape == (data.num_nodes,) and int(out.domain.max()) == 9
    sigma = np.load(path.with_name(f"{strategy}-values.npy"))
    assert sigma[out.domain.numpy() == 0].max() <= sigma[out.domain.numpy() == 9].min()
    # cut over the training nodes (appendix F): 10 domains of equal size (within 1) among them
    counts = np.bincount(out.domain[out.in_train_mask].numpy(), minlength=10)
    assert counts.size == 10 and counts.max() - counts.min() <= 1
    old = authors_split(data, name, strategy, root=shared_datasets, domain_scope="all")
    assert np.bincount(old.domain.numpy()).max() - np.bincount(old.domain.numpy()).min() <= 1


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(gs_data.MissingRawFileError, match=r"cora-ml/splits/locality\.pth"):
        load_authors_split("cora-ml", "locality", root=tmp_path)


def test_file_with_other_keys_is_refused(tmp_path):
    target = tmp_path / "structural-shifts" / "citeseer" / "splits"
    target.mkdir(parents=True)
    torch.save({"train": torch.zeros(3, dtype=torch.bool)}, target / "density.pth")
    with pytest.raises(ValueError, match="expected a dict with keys"):
        load_authors_split("citeseer", "density", root=tmp_path)
