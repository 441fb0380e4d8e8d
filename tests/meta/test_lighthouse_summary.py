"""benchmarks/lighthouse.py: how runs whose first frame Chromium held back are told apart and
left out of the medians (the measuring itself needs Lighthouse and is not run here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "lighthouse_bench", Path(__file__).resolve().parents[2] / "benchmarks" / "lighthouse.py")
lighthouse = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lighthouse)


def test_a_page_that_loaded_before_its_first_paint_had_its_frame_held():
    # the timings of two real runs of the decoder page on this project's 2-core machine
    assert lighthouse.held_first_frame({"observedLoad": 637, "observedFirstContentfulPaint": 1231})
    assert not lighthouse.held_first_frame({"observedLoad": 739, "observedFirstContentfulPaint": 230})


def test_held_runs_are_counted_and_left_out_of_the_medians():
    def run(score, tbt, held):
        return {"score": score, "total-blocking-time": tbt, "frame-held": float(held)}

    summary = lighthouse.summarise([run(0.9, 300, False), run(0.67, 600, True), run(0.8, 400, False),
                                    run(0.7, 500, True), run(0.85, 350, False)])
    assert summary["score"] == 0.85 and summary["total-blocking-time"] == 350
    assert summary["frame-held"] == 2 and summary["runs"] == 5
    assert summary["score-all-runs"] == 0.8
    # every run held: the medians of all of them, not nothing
    assert lighthouse.summarise([run(0.6, 700, True), run(0.7, 500, True)])["total-blocking-time"] == 600


def test_the_report_gives_the_host_speed_and_load_beside_the_scores():
    def page(score, index):
        return {"score": score, "score-all-runs": score, "frame-held": 0.0, "runs": 5.0, "benchmark-index": index,
                **{audit: 1.0 for audit in lighthouse.AUDITS}}

    text = lighthouse.report({"/": page(0.99, 1500), "/notation/": page(0.95, 1250)}, 5, load=(0.13, 2.42))
    header = text.splitlines()[0]
    assert "benchmarkIndex 1,375 (pages 1,250-1,500" in header
    assert "load average 0.13 before and 2.42 after" in header
    assert any(line.startswith("/notation/") and " 0.95 " in line for line in text.splitlines())
    assert "load average" not in lighthouse.report({"/": page(0.99, 1500)}, 5)
