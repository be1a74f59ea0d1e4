

def test_good_cora_preset_is_goods_goodcora_training():
    """GOOD's GOODCora/degree/covariate configs: Adam lr 1e-3, no weight decay, 100 epochs
    (EERM lr 5e-3, 50 epochs), no early stopping, best ID-validation accuracy, one pass per
    step; an unknown method names the accepted ones."""
    import pytest

    from gs_algos.config import TrainConfig

    for method in ("erm", "dann", "coral", "mixup"):
        cfg = TrainConfig.good_cora(method)
        assert (cfg.lr, cfg.weight_decay, cfg.max_epochs, cfg.patience) == (1e-3, 0.0, 100, None)
        assert (cfg.metric, cfg.select_on, cfg.norm_updates_per_step) == ("accuracy", ("in_valid",), 1)
    eerm = TrainConfig.good_cora("eerm")
    assert (eerm.lr, eerm.max_epochs) == (5e-3, 50)
    assert TrainConfig.good_cora("dann", max_epochs=3).max_epochs == 3
    with pytest.raises(ValueError, match="GOODCora"):
        TrainConfig.good_cora("irm")
