"""One-off conversion of the structural-shifts authors' CoraML split masks to a torch-free fixture.

The authors publish their CoraML splits as ``torch.save`` dicts of bool tensors
(``../shared/datasets/structural-shifts/cora-ml/splits/{popularity,locality,density,random}.pth``,
keys ``train, valid_in, test_in, valid_out, test_out``). gs-splits never imports torch, so the
masks are converted ONCE into ``tests/data/coraml_author_masks.npz`` (keys
``<strategy>__<part>``, bool arrays of length 2995). Run in a separate virtual environment that
has torch (it is not a dependency of gs-splits)::

    uv venv /tmp/venv-torch --python 3.11
    UV_FIND_LINKS=/opt/wheels uv pip install --python /tmp/venv-torch/bin/python torch==2.13.0 numpy
    /tmp/venv-torch/bin/python packages/gs-splits/benchmarks/convert_coraml_pth.py \
        ../shared/datasets/structural-shifts/cora-ml/splits packages/gs-splits/tests/data
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def main(src: str, dst: str) -> None:
    import torch  # only in this one-off script

    arrays = {}
    for strategy in ("popularity", "locality", "density", "random"):
        masks = torch.load(Path(src) / f"{strategy}.pth", map_location="cpu", weights_only=True)
        for part in ("train", "valid_in", "test_in", "valid_out", "test_out"):
            arrays[f"{strategy}__{part}"] = masks[part].numpy().astype(bool)
    out = Path(dst) / "coraml_author_masks.npz"
    np.savez_compressed(out, **arrays)
    print(f"wrote {out} ({len(arrays)} arrays)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
