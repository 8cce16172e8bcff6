"""A ``Measure`` built by hand that no name parses to (a cutoff family without its cutoff)
is refused in one line where it enters, never scored as a silent 0; every measure a name
parses to still passes."""

from __future__ import annotations

import pytest

from heta_eval.evaluation import evaluate_run
from heta_eval.measures.measure import (
    FAMILIES,
    IR_NAMES,
    Measure,
    UnknownMeasureError,
    parse_measures,
)

QRELS = {"q1": {"d1": 1}}
RUN = {"q1": {"d1": 1.0, "d2": 0.5}}


@pytest.mark.parametrize("measure", [Measure("judged"), Measure("mrr"), Measure("P")])
def test_a_measure_no_name_parses_to_is_refused(measure):
    with pytest.raises(UnknownMeasureError, match="no measure heta-eval scores"):
        evaluate_run(QRELS, RUN, measures=[measure])


def test_every_parsed_measure_is_accepted_and_scored():
    names = [f.name for f in FAMILIES] + list(IR_NAMES)
    measures = []
    for name in names:
        for suffix in ("", "@10"):
            try:
                measures.extend(parse_measures(name + suffix))
            except UnknownMeasureError:
                continue
    assert len(measures) > 100
    for measure in measures:
        assert Measure.parse(measure) is measure
    scored = evaluate_run(QRELS, RUN, measures=[Measure.parse("Judged@10"), "RR@10"])
    assert scored.per_query["q1"] == {"Judged@10": 0.5, "RR@10": 1.0}
