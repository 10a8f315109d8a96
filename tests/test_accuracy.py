import pytest

from onnxperf.products.accuracy import error_figures, rankdata, spearman


def test_rankdata_average_ties():
    assert list(rankdata([10, 20, 20, 5])) == [2, 3.5, 3.5, 1]


def test_spearman_perfect_and_reversed():
    assert spearman([1, 2, 3, 4], [10, 30, 35, 100]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2], [1, 2]) is None


def test_error_figures_by_hand():
    pred = [1.0, 2.2, 3.0, 10.0]
    meas = [1.0, 2.0, 4.0, 5.0]
    e = error_figures(pred, meas)
    # APEs: 0, 0.1, 0.25, 1.0 -> median 0.175; within 10%: 2/4; within 25%: 3/4
    assert e.median_ape == pytest.approx(0.175)
    assert e.within_10 == pytest.approx(0.5) and e.within_25 == pytest.approx(0.75)
    # by time: the nodes within 25% hold 1 + 2 + 4 of the 12 measured units
    assert e.within_25_time == pytest.approx(7 / 12)
    assert e.end_to_end_error == pytest.approx((16.2 - 12.0) / 12.0)
    assert e.spearman == pytest.approx(1.0)
