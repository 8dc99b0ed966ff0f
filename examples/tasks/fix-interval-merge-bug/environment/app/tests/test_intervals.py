import pytest

from schedkit import free_slots, merge, total_length


def test_merge_sorted_overlapping():
    assert merge([(1, 3), (2, 4), (5, 8)]) == [(1, 4), (5, 8)]


def test_merge_unsorted():
    assert merge([(5, 8), (1, 3), (2, 4)]) == [(1, 4), (5, 8)]


def test_merge_touching():
    assert merge([(1, 2), (2, 3)]) == [(1, 3)]


def test_merge_rejects_reversed():
    with pytest.raises(ValueError):
        merge([(3, 1)])


def test_total_length_counts_overlap_once():
    assert total_length([(0, 10), (5, 15)]) == 15


def test_free_slots():
    assert free_slots([(10, 20), (30, 40)], (0, 50)) == [(0, 10), (20, 30), (40, 50)]
