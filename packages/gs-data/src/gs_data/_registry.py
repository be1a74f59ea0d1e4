"""The table of node-classification datasets: names, raw files, URLs, checksums, paper stats.

Plain data (no torch): one :class:`DatasetSpec` per accepted name, built explicitly in
``_SPECS_LIST`` below (no registration by import side effect). Your own dataset joins the
table with :func:`register_dataset` (and leaves it with :func:`unregister_dataset`); every
consumer (:func:`gs_data.load`, :func:`available_datasets`, ``make_split``, gs-bench's
suites) reads the table, so nothing else needs editing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gs_data import _readers as R
from gs_data._readers import RawGraph

__all__ = [
    "RawFile",
    "PaperStats",
    "DatasetSpec",
    "SPECS",
    "resolve_name",
    "available_datasets",
    "register_dataset",
    "unregister_dataset",
    "DATA_KINDS",
    "data_kind",
]

#: What a dataset's data is, as reports say it (:func:`data_kind`): measured data of a paper
#: (or of its source), a graph generated here, events simulated as the paper did, or an offline
#: stand-in for a paper's dataset that is not on the machine.
DATA_KINDS = ("real", "synthetic", "simulated", "stand-in")


@dataclass(frozen=True)
class RawFile:
    """One raw file: path relative to the data root, standard URL (None: manual placement)."""

    relpath: str
    url: str | None = None
    sha256: str | None = None
    #: when set, ``url`` is a zip archive saved at ``archive`` and extracted into ``extract_to``
    archive: str | None = None
    extract_to: str | None = None
    #: other accepted paths for the same file (e.g. the UDAGCN release's short prefixes)
    alternatives: tuple[str, ...] = ()


@dataclass(frozen=True)
class PaperStats:
    """Statistics printed in a paper's dataset table (``edges`` as that table counts them).

    ``edges_kind``: ``"directed"`` (each undirected edge counted twice, PyG's count),
    ``"undirected"`` or ``"undirected+selfloops"``.
    """

    source: str
    nodes: int | None
    edges: int | None
    classes: int | None
    features: int | None
    edges_kind: str = "directed"
    note: str = ""


@dataclass(frozen=True)
class DatasetSpec:
    """How to obtain and parse one dataset.

    ``reader(root) -> RawGraph`` parses the raw files under the data root ``root`` (a
    dataset without ``raw_files`` is built in memory by its reader and is not cached on
    disk); ``aliases`` are other accepted names; ``where`` tells a user where to get the
    files when they are missing.
    """

    name: str
    title: str
    raw_files: tuple[RawFile, ...]
    reader: Callable[[Path], RawGraph] | None
    aliases: tuple[str, ...] = ()
    paper_stats: tuple[PaperStats, ...] = ()
    where: str = ""
    fixture_only: bool = False
    extras: dict[str, str] = field(default_factory=dict)
    #: :data:`DATA_KINDS`: ``"real"`` unless generated (``"synthetic"``) or a stand-in
    kind: str = "real"

    def __post_init__(self) -> None:
        if self.kind not in DATA_KINDS:
            raise ValueError(f"{self.name}: kind must be one of {', '.join(DATA_KINDS)}, got {self.kind!r}")


_PLANETOID_URL = "https://github.com/kimiyoung/planetoid/raw/master/data"
_ACDNE_URL = "https://raw.githubusercontent.com/shenxiaocam/ACDNE/master/ACDNE_codes/input"
_SHCHUR_URL = "https://github.com/shchur/gnn-benchmark/raw/master/data/npz"
_OGB_URL = "http://snap.stanford.edu/ogb/data/nodeproppred"

# SHA-256 of the files as published (computed on the copies in the project's shared folder).
_SHA = {
    "planetoid/Cora/raw/ind.cora.allx": "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543",
    "planetoid/Cora/raw/ind.cora.ally": "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71",
    "planetoid/Cora/raw/ind.cora.graph": "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d",
    "planetoid/Cora/raw/ind.cora.test.index": "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875",
    "planetoid/Cora/raw/ind.cora.tx": "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a",
    "planetoid/Cora/raw/ind.cora.ty": "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad",
    "planetoid/Cora/raw/ind.cora.x": "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab",
    "planetoid/Cora/raw/ind.cora.y": "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1",
    "planetoid/CiteSeer/raw/ind.citeseer.allx": "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668",
    "planetoid/CiteSeer/raw/ind.citeseer.ally": "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95",
    "planetoid/CiteSeer/raw/ind.citeseer.graph": "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7",
    "planetoid/CiteSeer/raw/ind.citeseer.test.index": "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4",
    "planetoid/CiteSeer/raw/ind.citeseer.tx": "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21",
    "planetoid/CiteSeer/raw/ind.citeseer.ty": "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce",
    "planetoid/CiteSeer/raw/ind.citeseer.x": "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6",
    "planetoid/CiteSeer/raw/ind.citeseer.y": "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924",
    "structural-shifts/cora-ml/data.mat": "8e798199595af26316a4720cb43e32098bb72b7c169df2c2f4ea13856fb5bc37",
    "structural-shifts/citeseer/data.mat": "4b75dbe19b29d39f29876e5dbcebd30f97e391e033b2c5af3cfa01ef4eef9d57",
    "acdne/acmv9.mat": "ee072387b0ea6599d9e9b4e60957b7b690aae4eb30adb3b9968a1e2c4e36cd74",
    "acdne/citationv1.mat": "98f8f96b4d6141ad6d413bbc43116da54462e10a6b5e10d1b056202f82520c25",
    "acdne/dblpv7.mat": "986b5505025a188a2526be37225408bbb1eef2da8b643775ad3f7e1c12768932",
}

_SS = "structural-shifts (Bazhenov et al.), Appendix E, Table 8"
_EW = "edgewise calibration (Hsu et al.), Appendix C.1, Table 2"
_LB = "LeBed (online GNN evaluation), Section 3.1, Table 1"
_ACDNE = "ACDNE (Shen et al., AAAI 2020), Table 1; node counts also in ../shared/datasets/README.md"


def _ss_mat(key: str, title: str, aliases: tuple[str, ...], stats: PaperStats) -> DatasetSpec:
    rel = f"structural-shifts/{key}/data.mat"
    return DatasetSpec(
        name=key,
        title=title,
        raw_files=(RawFile(rel, None, _SHA.get(rel)),),
        reader=lambda root, rel=rel: R.read_structural_shifts_mat(root / rel),
        aliases=aliases,
        paper_stats=(stats,),
        where=(
            "the structural-shifts authors' public repository (data/<name>/data.mat); no stable "
            "download URL is known, place the file by hand"
        ),
    )


def _planetoid(name: str, prefix: str, stats: tuple[PaperStats, ...]) -> DatasetSpec:
    folder = f"planetoid/{name}/raw"
    files = tuple(
        RawFile(
            f"{folder}/ind.{prefix}.{suf}",
            f"{_PLANETOID_URL}/ind.{prefix}.{suf}",
            _SHA.get(f"{folder}/ind.{prefix}.{suf}"),
        )
        for suf in R.PLANETOID_SUFFIXES
    )
    return DatasetSpec(
        name=f"planetoid-{name.lower()}",
        title=f"Planetoid {name} (PyG raw layout)",
        raw_files=files,
        reader=lambda root, folder=folder, prefix=prefix: R.read_planetoid(root / folder, prefix),
        paper_stats=stats,
        where="the Planetoid repository (github.com/kimiyoung/planetoid, data/)",
    )


def _acdne(key: str, stats: PaperStats) -> DatasetSpec:
    rel = f"acdne/{key}.mat"
    return DatasetSpec(
        name=key,
        title=f"{key} (ACDNE .mat)",
        raw_files=(RawFile(rel, f"{_ACDNE_URL}/{key}.mat", _SHA.get(rel)),),
        reader=lambda root, rel=rel: R.read_acdne_mat(root / rel),
        paper_stats=(stats,),
        where="the ACDNE repository (github.com/shenxiaocam/ACDNE, ACDNE_codes/input/)",
    )


def _udagcn(key: str, prefixes: tuple[str, ...], stats: PaperStats, aliases: tuple[str, ...]) -> DatasetSpec:
    folder = f"udagcn/{key}/raw"

    def reader(root: Path, folder: str = folder, prefixes: tuple[str, ...] = prefixes) -> RawGraph:
        for p in prefixes:
            if (root / folder / f"{p}_docs.txt").exists():
                return R.read_udagcn(root / folder, p)
        return R.read_udagcn(root / folder, prefixes[0])

    return DatasetSpec(
        name=f"udagcn-{key}",
        title=f"{key} (UDAGCN text format)",
        raw_files=tuple(
            RawFile(f"{folder}/{prefixes[0]}_{s}.txt", alternatives=tuple(f"{folder}/{p}_{s}.txt" for p in prefixes[1:]))
            for s in ("docs", "edgelist", "labels")
        ),
        reader=reader,
        aliases=aliases,
        paper_stats=(stats,),
        where=(
            "the UDAGCN data release (Wu et al., WWW 2020); files named "
            f"{prefixes[0]}_docs.txt / _edgelist.txt / _labels.txt (prefix {' or '.join(prefixes)})"
        ),
    )


def _shchur(key: str, file: str, title: str, stats: tuple[PaperStats, ...], aliases: tuple[str, ...]) -> DatasetSpec:
    rel = f"shchur/{file}.npz"
    return DatasetSpec(
        name=key,
        title=title,
        raw_files=(RawFile(rel, f"{_SHCHUR_URL}/{file}.npz"),),
        reader=lambda root, rel=rel: R.read_shchur_npz(root / rel),
        aliases=aliases,
        paper_stats=stats,
        where="the gnn-benchmark repository (github.com/shchur/gnn-benchmark, data/npz/)",
    )


def _ogb(key: str, short: str, split: str, stats: tuple[PaperStats, ...], aliases: tuple[str, ...]) -> DatasetSpec:
    base = f"ogb/{short}"
    files = tuple(
        RawFile(f"{base}/raw/{f}", f"{_OGB_URL}/{short}.zip", None, archive=f"ogb/{short}.zip", extract_to="ogb")
        for f in ("edge.csv.gz", "node-feat.csv.gz", "node-label.csv.gz")
    )
    return DatasetSpec(
        name=key,
        title=f"{key} (OGB raw CSV)",
        raw_files=files,
        reader=lambda root, base=base, split=split: R.read_ogb(root / base, split),
        aliases=aliases,
        paper_stats=stats,
        where=f"the OGB archive {_OGB_URL}/{short}.zip, extracted (folder {short}/raw/)",
    )


_SPECS_LIST: list[DatasetSpec] = [
    # structural-shifts paper, its .mat format
    _ss_mat("cora-ml", "CoraML (structural-shifts .mat)", ("coraml", "cora_ml"), PaperStats(_SS, 2995, 16316, 7, 2879)),
    _ss_mat(
        "citeseer",
        "CiteSeer (structural-shifts .mat)",
        (),
        PaperStats(
            _SS, 3327, 4732, 6, 3703, edges_kind="undirected",
            note="Table 8 prints 4,732 edges: the link count of the original CiteSeer release; the "
            "file holds 4,552 undirected edges (9,104 directed), the same graph as Planetoid CiteSeer.",
        ),
    ),
    _ss_mat(
        "pubmed",
        "PubMed (structural-shifts .mat)",
        (),
        PaperStats(
            _SS, 19717, 44338, 3, 8415, edges_kind="undirected",
            note="Table 8 prints 8,415 features for PubMed, a copy of the CoauthorPhysics row: "
            "PubMed has 500 features. 44,338 is the link count of the original release (PyG: 44,324 undirected).",
        ),
    ),
    _ss_mat("amazon-computer", "AmazonComputer (structural-shifts .mat)", ("amazoncomputer",), PaperStats(_SS, 13381, 259159, 10, 767, edges_kind="undirected")),
    _ss_mat("amazon-photo", "AmazonPhoto (structural-shifts .mat)", ("amazonphoto",), PaperStats(_SS, 7484, 126530, 8, 745, edges_kind="undirected")),
    _ss_mat("coauthor-cs", "CoauthorCS (structural-shifts .mat)", ("coauthorcs",), PaperStats(_SS, 18333, 163788, 15, 6805, edges_kind="undirected")),
    _ss_mat("coauthor-physics", "CoauthorPhysics (structural-shifts .mat)", ("coauthorphysics",), PaperStats(_SS, 34493, 495924, 5, 8415, edges_kind="undirected")),
    # edgewise calibration paper + LeBed feature shift: Planetoid
    _planetoid(
        "Cora",
        "cora",
        (
            PaperStats(_EW, 2708, 10556, 7, 1433, note="Table 2 labels this row 'Citeseer' (the dataset names are shifted by one row)."),
            PaperStats(
                _LB, 2703, 5278, 10, None, edges_kind="undirected",
                note="Table 1 prints 2,703 nodes (typo for 2,708) and 10 classes: the EERM-style synthetic labels, not Cora's 7.",
            ),
        ),
    ),
    _planetoid("CiteSeer", "citeseer", (PaperStats(_EW, 3327, 9104, 6, 3703, note="Table 2 prints this row without a name."),)),
    _planetoid("PubMed", "pubmed", (PaperStats(_EW, 19717, 88648, 3, 500, note="Table 2 prints this row without a name."),)),
    # LeBed domain shift: ACDNE .mat siblings and UDAGCN text versions
    _acdne("acmv9", PaperStats(_ACDNE, 9360, 15602, 5, 6775, edges_kind="undirected+selfloops")),
    _acdne("citationv1", PaperStats(_ACDNE, 8935, 15113, 5, 6775, edges_kind="undirected+selfloops")),
    _acdne("dblpv7", PaperStats(_ACDNE, 5484, 8130, 5, 6775, edges_kind="undirected+selfloops")),
    _udagcn("acmv9", ("acmv9", "acm"), PaperStats(_LB, 7410, 22270, 6, None, edges_kind="undirected"), ()),
    _udagcn("dblpv8", ("dblpv8", "dblp"), PaperStats(_LB, 5578, 14682, 6, None, edges_kind="undirected"), ("dblpv8",)),
    _udagcn("citationv2", ("citationv2", "citation"), PaperStats(_LB, 4715, 13466, 6, None, edges_kind="undirected"), ("citationv2",)),
    # Shchur et al. npz (PyG Amazon / Coauthor): LeBed's Amazon-Photo
    _shchur("shchur-amazon-computers", "amazon_electronics_computers", "Amazon Computers (gnn-benchmark npz)", (), ()),
    _shchur(
        "shchur-amazon-photo", "amazon_electronics_photo", "Amazon Photo (gnn-benchmark npz)",
        (PaperStats(_LB, 7650, 119081, 10, None, edges_kind="undirected", note="10 classes: the EERM-style synthetic labels (the raw data has 8)."),),
        ("lebed-amazon-photo",),
    ),
    _shchur("shchur-coauthor-cs", "ms_academic_cs", "Coauthor CS (gnn-benchmark npz)", (), ()),
    _shchur("shchur-coauthor-physics", "ms_academic_phy", "Coauthor Physics (gnn-benchmark npz)", (), ()),
    # OGB
    _ogb(
        "ogbn-arxiv", "arxiv", "time",
        (PaperStats(_LB, 169343, 1166243, 40, 128, edges_kind="raw-directed", note="Table 1 counts the raw directed citations; gs-data symmetrises them."),),
        ("ogb-arxiv", "arxiv"),
    ),
    _ogb(
        "ogbn-products", "products", "sales_ranking",
        (PaperStats(_SS, 2449029, 61859140, 47, 100, edges_kind="undirected"),),
        ("ogb-products", "products"),
    ),
    DatasetSpec(
        name="synthetic-default",
        title="synthetic default graph (embedded, no download)",
        raw_files=(),
        reader=None,
        aliases=("synthetic", "default"),
        where="generated in memory by gs_data.synthetic.default_graph",
        kind="synthetic",
    ),
]

SPECS: dict[str, DatasetSpec] = {s.name: s for s in _SPECS_LIST}
_BUILTIN = frozenset(SPECS)
_ALIASES: dict[str, str] = {}
for _s in _SPECS_LIST:
    _ALIASES[_s.name] = _s.name
    for _a in _s.aliases:
        _ALIASES[_a] = _s.name


def available_datasets() -> list[str]:
    """Canonical names accepted by :func:`gs_data.load` (aliases are accepted too)."""
    return sorted(SPECS)


def resolve_name(name: str) -> DatasetSpec:
    """Case-insensitive look-up; ``_`` and spaces count as ``-``."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}; accepted: {available_datasets()}")
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    if key in _ALIASES:
        return SPECS[_ALIASES[key]]
    if key.replace("-", "") in _ALIASES:
        return SPECS[_ALIASES[key.replace("-", "")]]
    raise ValueError(f"unknown dataset name {name!r}; accepted names: {', '.join(available_datasets())}")


def data_kind(name: str) -> tuple[str, str]:
    """``(kind, what)`` of a node-classification or geometric dataset name: ``kind`` one of
    :data:`DATA_KINDS`, ``what`` a few words a report can print beside it, e.g.
    ``("synthetic", "synthetic default graph (embedded, no download)")`` or
    ``("stand-in", "offline stand-in for qmof-hse06 (shipped with gs-data)")``. Reads the
    tables only (no data, no torch); ``ValueError`` for an unknown name."""
    from gs_data.geometric import geometric_spec, is_geometric

    if is_geometric(name):
        g = geometric_spec(name)
        what = {"stand-in": f"offline stand-in for {g.stand_in_for} ({g.paper})",
                "simulated": "events simulated with PYTHIA 8 + ACTS as GeSS did, not GeSS's files",
                "real": g.paper}[g.kind]
        return g.kind, what
    spec = resolve_name(name)
    return spec.kind, spec.title


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def register_dataset(spec: DatasetSpec, *, overwrite: bool = False) -> DatasetSpec:
    """Add ``spec`` to the table: :func:`gs_data.load` then accepts its name and aliases.

    ``spec.reader(root)`` must return a :class:`~gs_data._readers.RawGraph` (exported as
    ``gs_data.RawGraph``). ``overwrite=True`` replaces a dataset registered earlier under the
    same name; a name or alias taken by another dataset (or by a geometric dataset) is refused.
    """
    if not isinstance(spec, DatasetSpec):
        raise TypeError(f"register_dataset needs a DatasetSpec, got {type(spec).__name__}")
    if spec.reader is None or not callable(spec.reader):
        raise TypeError(f"dataset {spec.name!r}: reader must be a callable root -> RawGraph")
    from gs_data.geometric import is_geometric

    name = _key(spec.name)
    if name != spec.name or not name:
        raise ValueError(f"dataset name must be lower case with '-' (e.g. {name!r}), got {spec.name!r}")
    if name in SPECS and not overwrite:
        raise ValueError(f"dataset {name!r} exists already; pass overwrite=True to replace it")
    if name in SPECS:
        unregister_dataset(name)
    for key in (name, *(_key(a) for a in spec.aliases)):
        taken = _ALIASES.get(key) or _ALIASES.get(key.replace("-", ""))
        if taken is not None or is_geometric(key):
            raise ValueError(f"dataset {spec.name!r}: the name {key!r} is taken by "
                             f"{taken or 'a geometric dataset'}")
    SPECS[name] = spec
    for key in (name, *(_key(a) for a in spec.aliases)):
        _ALIASES[key] = name
    return spec


def unregister_dataset(name: str) -> None:
    """Remove a dataset added by :func:`register_dataset` (the shipped ones stay)."""
    spec = resolve_name(name)
    if spec.name in _BUILTIN:
        raise ValueError(f"dataset {spec.name!r} ships with gs-data and cannot be unregistered")
    del SPECS[spec.name]
    for key in [k for k, v in _ALIASES.items() if v == spec.name]:
        del _ALIASES[key]
