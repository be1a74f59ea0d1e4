"""gs_algos: training engine, OOD-robustness and uncertainty methods.

``import gs_algos`` loads nothing but the version (no torch): every name lives in the module
that defines it, imported from there.

* :mod:`gs_algos.engine`: :func:`~gs_algos.engine.fit_node` / :func:`~gs_algos.engine.fit_graph`,
  :func:`~gs_algos.engine.predict_node` / :func:`~gs_algos.engine.predict_graph`,
  :class:`~gs_algos.engine.FitResult`, :class:`~gs_algos.engine.Track`,
  :class:`~gs_algos.engine.EpochInfo`, :func:`~gs_algos.engine.evaluate_outputs`,
  :func:`~gs_algos.engine.seeded`;
* :mod:`gs_algos.config`: :class:`~gs_algos.config.TrainConfig` (paper presets
  :meth:`~gs_algos.config.TrainConfig.structural_shifts`, ``edgewise``, ``gess``);
* :mod:`gs_algos.methods`: :data:`~gs_algos.methods.METHODS`, :class:`~gs_algos.methods.Method`
  and the methods; :mod:`gs_algos.registry`: ``register_method``, ``unregister_method``,
  ``available_methods``; :mod:`gs_algos.names`: the method names and settings' values
  without torch;
* :mod:`gs_algos.batch` (``Batch``, ``TaskSpec``, ``call_model``), :mod:`gs_algos.device`
  (``TrainConfig.device``: ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:1"``;
  ``resolve_device``, ``as_device``, ``check_device``, ``DEVICE_CHOICES``; the names alone,
  without torch, in :mod:`gs_algos.device_names`);
* :mod:`gs_algos.uncertainty` (uncertainty estimators), :mod:`gs_algos.node_methods` (the
  named structural-shifts methods: SE, DE, GPN, NatPN, GPE, NatPE and the robustness methods,
  one trained run each), :mod:`gs_algos.ensemble` (batched Deep Ensemble training),
  :mod:`gs_algos.finetune` (Par-Label fine-tuning), :mod:`gs_algos.search` (the GeSS search),
  :mod:`gs_algos.em` (EM training of GMNN and EPFGNN: ``EMConfig``, ``fit_gmnn``,
  ``fit_epfgnn``) and :mod:`gs_algos.lebed` (LeBed re-training).
"""

from gs_algos.__about__ import __version__

__all__ = ["__version__"]
