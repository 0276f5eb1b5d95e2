"""Threshold / reader selection from sweep output: parse, pool, pick, compare."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest
from typer.testing import CliRunner

import models.selection
from models.evaluate import format_scene_report
from models.metrics import SceneReport, Tally
from models.selection import (
    JOKER_FLOOR,
    WINDOW,
    SweepFormatError,
    SweepRow,
    compare,
    parse_sweep,
    pick,
    pool,
    real_gate,
    sweep_label,
)


def _report(
    tp: int, fp: int, fn: int, jtp: int = 0, jfp: int = 0, jfn: int = 0, plays: int = 10, exact: int = 4
):
    r = SceneReport()
    r.cards, r.jokers = Tally(tp, fp, fn), Tally(jtp, jfp, jfn)
    r.images, r.plays, r.exact_plays = plays, plays, exact
    return r


def _sweep_text(rows: dict) -> str:
    """What `tractorcam eval --sweep` prints (models.cli): label, colon, the indented report."""
    lines = ["weights: x.onnx, classifier: c.onnx, det_conf 0.005, conf 0.05"]
    for setting, rep in rows.items():
        text = format_scene_report(rep, title="synthetic val")
        lines.append(f"{sweep_label(setting)}: " + text.replace("\n", "\n    "))
    return "\n".join(lines) + "\n"


def _row(tp: int, fp: int, fn: int, setting=(0.3, 0.4, None)) -> SweepRow:
    return SweepRow(setting, Tally(tp, fp, fn), Tally(), 10, 5)


def test_parse_reads_back_what_the_sweep_prints() -> None:
    text = _sweep_text(
        {
            (0.3, 0.4, None): _report(2457, 175, 297, 30, 1, 40, plays=468, exact=296),
            (0.005, 0.05, 0.95): _report(10, 0, 3),
        }
    )
    rows = parse_sweep(text)
    assert set(rows) == {(0.3, 0.4, None), (0.005, 0.05, 0.95)}
    r = rows[(0.3, 0.4, None)]
    assert (r.cards.tp, r.cards.fp, r.cards.fn) == (2457, 175, 297)
    assert (r.jokers.tp, r.jokers.fp, r.jokers.fn) == (30, 1, 40)
    assert (r.plays, r.exact_plays) == (468, 296)


def test_parse_refuses_other_text() -> None:
    with pytest.raises(SweepFormatError):
        parse_sweep("synthetic heldout: 300 images\n  cards: precision 90%\n")


def test_pick_takes_the_most_precise_within_a_tenth_of_a_point() -> None:
    a = _row(90, 10, 10, (0.2, 0.4, None))  # F1 180/200 = 0.9000, P 0.900
    b = _row(895, 47, 153, (0.3, 0.4, None))  # F1 1790/1990 = 0.8995, P 0.950
    c = _row(80, 1, 27, (0.4, 0.9, None))  # F1 160/188 = 0.851, P 0.988: outside the window
    assert pick([a, b, c], joker_floor=0.0).setting == (0.3, 0.4, None)
    assert pick([a, b, c], window=0.0, joker_floor=0.0).setting == (0.2, 0.4, None)
    with pytest.raises(ValueError):
        pick([])


def test_pick_only_takes_settings_that_hold_jokers_to_the_floor() -> None:
    """A setting that lets a joker through below JOKER_FLOOR is never picked, however good."""
    assert JOKER_FLOOR == 0.8
    best = _row(950, 40, 50, (0.4, 0.5, None))  # jokers held to conf 0.5: below the floor
    low = _row(948, 41, 52, (0.3, 0.5, 0.7))
    floored = _row(940, 45, 60, (0.4, 0.5, 0.8))
    strict_conf = _row(700, 5, 300, (0.3, 0.9, None))  # conf 0.9 holds jokers to 0.9 as well
    assert pick([best, low, floored, strict_conf]).setting == (0.4, 0.5, 0.8)
    assert pick([best, low, strict_conf]).setting == (0.3, 0.9, None)
    assert pick([best, low, floored], joker_floor=0.0).setting == (0.4, 0.5, None)
    with pytest.raises(ValueError, match="0.8"):
        pick([best, low])


def test_pool_sums_counts_of_settings_found_in_every_set() -> None:
    s1 = {(0.3, 0.4, None): _row(10, 2, 3), (0.2, 0.4, None): _row(1, 1, 1, (0.2, 0.4, None))}
    s2 = {(0.3, 0.4, None): _row(5, 1, 0)}
    pooled = pool([s1, s2])
    assert list(pooled) == [(0.3, 0.4, None)]
    t = pooled[(0.3, 0.4, None)].cards
    assert (t.tp, t.fp, t.fn) == (15, 3, 3)


def test_a_candidate_worse_on_unseen_designs_does_not_replace() -> None:
    k = (0.3, 0.4, None)
    shipped = [{k: _row(900, 60, 100)}, {k: _row(800, 90, 200)}]  # pooled F1 3400/3850, heldout_val 1600/1890
    # better on the training designs, worse on heldout_val (1560/1880): pooled F1 3420/3860 is higher
    cand = [{k: _row(930, 50, 70)}, {k: _row(780, 100, 220)}]
    v = compare(cand, shipped, joker_floor=0.0)
    assert v.better_pooled and not v.unseen_not_worse and not v.replaces
    better = [{k: _row(930, 50, 70)}, {k: _row(810, 80, 190)}]
    assert compare(better, shipped, joker_floor=0.0).replaces


def test_two_unseen_sets_are_pooled_for_the_not_worse_check() -> None:
    """--unseen 2: heldout_val and heldout_val_proc count together; one of them alone does not decide."""
    k = (0.3, 0.4, None)
    shipped = [{k: _row(900, 60, 100)}, {k: _row(800, 90, 200)}, {k: _row(400, 30, 100)}]
    # worse on heldout_val (780 < 800 found), better on heldout_val_proc by more (430 > 400)
    cand = [{k: _row(900, 60, 100)}, {k: _row(780, 90, 220)}, {k: _row(430, 30, 70)}]
    v1 = compare(cand, shipped, joker_floor=0.0)  # default unseen=1: the last sweep alone
    assert v1.candidate_unseen.cards.tp == 430 and v1.unseen_not_worse
    assert not compare(cand[:2], shipped[:2], joker_floor=0.0).unseen_not_worse  # heldout_val alone
    v2 = compare(cand, shipped, joker_floor=0.0, unseen=2)
    assert (v2.candidate_unseen.cards.tp, v2.shipped_unseen.cards.tp) == (1210, 1200)
    assert v2.unseen_not_worse and v2.replaces
    worse = [cand[0], {k: _row(700, 90, 300)}, cand[2]]  # now the pooled unseen F1 is lower
    assert not compare(worse, shipped, joker_floor=0.0, unseen=2).unseen_not_worse
    for bad in (0, 4):
        with pytest.raises(ValueError, match="unseen must be"):
            compare(cand, shipped, joker_floor=0.0, unseen=bad)


def test_a_candidate_with_fewer_exact_plays_does_not_replace() -> None:
    """Better pooled and unseen F1 bought by losing whole plays is refused (twentieth session)."""
    k = (0.3, 0.4, None)

    def row(tp: int, fp: int, fn: int, plays: int, exact: int) -> SweepRow:
        return SweepRow(k, Tally(tp, fp, fn), Tally(), plays, exact)

    shipped = [{k: row(900, 60, 100, 400, 240)}, {k: row(800, 90, 200, 400, 200)}]  # exact 440 / 800
    fewer = [{k: row(930, 70, 70, 400, 240)}, {k: row(830, 100, 170, 400, 199)}]  # 439 / 800
    v = compare(fewer, shipped, joker_floor=0.0)
    assert v.better_pooled and v.unseen_not_worse and not v.exact_not_worse and not v.replaces
    same = [{k: row(930, 70, 70, 400, 240)}, {k: row(830, 100, 170, 400, 200)}]  # 440 / 800: equal
    assert compare(same, shipped, joker_floor=0.0).replaces
    # compared as fractions: 221 of 400 plays beats 440 of 800
    other_size = [{k: row(930, 70, 70, 200, 121)}, {k: row(830, 100, 170, 200, 100)}]
    assert compare(other_size, shipped, joker_floor=0.0).exact_not_worse


def test_equal_f1_goes_to_the_more_precise_reader() -> None:
    """F1s within WINDOW count as equal, as in pick: a hair more F1 bought with false cards loses."""
    k = (0.3, 0.4, None)
    hv = {k: _row(800, 90, 200)}
    shipped = [{k: _row(2000, 150, 250)}, hv]  # pooled tp 2800 fp 240 fn 450
    noisier = [{k: _row(2010, 160, 240)}, hv]  # one card more found, ten more false: F1 +0.09 pt
    v = compare(noisier, shipped, joker_floor=0.0)
    assert 0 < v.candidate.cards.f1 - v.shipped.cards.f1 <= WINDOW
    assert v.candidate.cards.precision < v.shipped.cards.precision
    assert not v.better_pooled and not v.replaces
    cleaner = [{k: _row(1990, 140, 260)}, hv]  # F1 a hair lower, 10 fewer false cards
    v = compare(cleaner, shipped, joker_floor=0.0)
    assert abs(v.candidate.cards.f1 - v.shipped.cards.f1) <= WINDOW and v.better_pooled and v.replaces
    clearly = [{k: _row(2060, 170, 190)}, hv]  # F1 well above the window, less precise
    v = compare(clearly, shipped, joker_floor=0.0)
    assert v.candidate.cards.f1 - v.shipped.cards.f1 > WINDOW and v.better_pooled


def test_cli_prints_the_verdict(tmp_path: Path) -> None:
    k = (0.3, 0.4, 0.8)
    files = {}
    for name, (tp, fp, fn) in {
        "cand_val": (930, 50, 70),
        "cand_hv": (780, 100, 220),
        "ship_val": (900, 60, 100),
        "ship_hv": (800, 90, 200),
    }.items():
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text(_sweep_text({k: _report(tp, fp, fn)}))
    from tractorcam_cli.main import app

    runner = CliRunner()
    candidate = [str(files["cand_val"]), str(files["cand_hv"])]
    shipped = ["--shipped", str(files["ship_val"]), "--shipped", str(files["ship_hv"])]
    result = runner.invoke(app, ["select", *candidate, *shipped])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "det_conf 0.3 conf 0.4 joker_conf 0.8" in out and "keep the shipped reader" in out
    # no setting of these sweeps holds jokers to 0.9
    result = runner.invoke(app, ["select", *candidate, "--joker-floor", "0.9"])
    assert result.exit_code == 2 and result.stderr.startswith("error: "), result.output
    bad = tmp_path / "bad.txt"
    bad.write_text("nothing here")
    result = runner.invoke(app, ["select", str(bad)])
    assert result.exit_code == 2 and result.stderr.startswith("error: "), result.output


def test_select_writes_the_pick_into_the_reader_settings_and_keeps_the_rest(tmp_path: Path) -> None:
    from tractorcam_cli.main import app
    from vision.settings import SETTINGS_FILE, load_settings

    settings = tmp_path / "reader.json"
    settings.write_text(SETTINGS_FILE.read_text())
    sweep = tmp_path / "val.txt"
    sweep.write_text(
        _sweep_text({(0.25, 0.45, 0.85): _report(930, 50, 70), (0.3, 0.4, 0.8): _report(900, 90, 100)})
    )
    runner = CliRunner()
    result = runner.invoke(app, ["select", str(sweep), "--write", str(settings)])
    assert result.exit_code == 0, result.output
    got, shipped = load_settings(settings), load_settings(SETTINGS_FILE)
    assert (got.det_conf, got.conf, got.joker_conf) == (0.25, 0.45, 0.85)
    assert got.suit_head == shipped.suit_head and got.classifier == shipped.classifier
    # a candidate that does not replace the shipped reader writes nothing
    worse = tmp_path / "worse.txt"
    worse.write_text(_sweep_text({(0.3, 0.4, 0.8): _report(700, 200, 300)}))
    before = settings.read_text()
    result = runner.invoke(app, ["select", str(worse), "--shipped", str(sweep), "--write", str(settings)])
    assert result.exit_code == 2 and "nothing written" in result.stderr
    assert settings.read_text() == before
    # nor does a settings file that does not validate
    settings.write_text('{"conf": 0.5}')
    result = runner.invoke(app, ["select", str(sweep), "--write", str(settings)])
    assert result.exit_code == 2 and "det_conf" in result.stderr


def test_module_doctests() -> None:
    result = doctest.testmod(models.selection)
    assert result.attempted >= 1 and result.failed == 0


def test_the_candidate_is_picked_among_settings_that_keep_the_shipped_exact_plays() -> None:
    """A candidate whose most precise setting loses whole plays is judged at its best setting that
    keeps them (the soup of run 3: better on every figure at the shipped setting, refused at its
    unconstrained pick)."""
    a, b = (0.3, 0.6, 0.8), (0.3, 0.7, 0.9)

    def row(setting, tp: int, fp: int, fn: int, exact: int) -> SweepRow:
        return SweepRow(setting, Tally(tp, fp, fn), Tally(), 400, exact)

    shipped = [{a: row(a, 900, 60, 100, 240), b: row(b, 850, 50, 150, 230)}]  # picks a: F1 .9184 vs .8947
    # b is within the window of a's F1 (.9228 vs .9221) and more precise, but loses 4 of the shipped
    # reader's 240 exact plays; a keeps them and is better than the shipped reader
    cand = [{a: row(a, 905, 58, 95, 241), b: row(b, 903, 54, 97, 236)}]
    assert pick(pool(cand).values(), joker_floor=0.0).setting == b
    v = compare(cand, shipped, joker_floor=0.0)
    assert v.candidate.setting == a and v.exact_not_worse and v.better_pooled and v.replaces
    # when no setting keeps them, the unconstrained pick is judged, and refused
    fewer = [{a: row(a, 905, 58, 95, 230), b: row(b, 903, 54, 97, 236)}]
    v = compare(fewer, shipped, joker_floor=0.0)
    assert v.candidate.setting == b and not v.exact_not_worse and not v.replaces


def _real_text(rank: Tally, fp: int, fn: int) -> str:
    """What ``tractorcam eval --n 0`` prints: the rank report, then the card-labelled one with a
    phone2022 view of 10 cards of which ``fn`` are missed and ``fp`` false ones read."""
    from collections import Counter

    from models.evaluate import CardPhotoReport, format_real_cards_report, format_real_report
    from models.metrics import RealReport

    ranks = RealReport()
    ranks.add(rank)
    cards = CardPhotoReport()
    truth = Counter({"AS": 10})
    cards.add(Counter({"AS": 10 - fn, "KH": fp}), truth, "phone2022")
    cards.add(Counter({"KD": 3}), Counter({"QD": 1}), "phone")  # the gold-on-black view: not gated
    return format_real_report(ranks) + "\n" + format_real_cards_report(cards)


def test_the_real_photo_gate_holds_rank_precision_and_card_precision_on_other_designs(tmp_path: Path) -> None:
    from tractorcam_cli.main import app
    from vision.settings import SETTINGS_FILE

    shipped = _real_text(Tally(96, 4, 1), fp=2, fn=2)  # phone2022 precision 8/10
    assert real_gate(shipped, shipped) == []
    assert real_gate(_real_text(Tally(99, 1, 0), fp=1, fn=3), shipped) == []  # 7/8: more precise
    more_false = real_gate(_real_text(Tally(99, 1, 0), fp=3, fn=1), shipped)  # 9/12 < 8/10
    assert len(more_false) == 1 and "phone2022" in more_false[0]
    low_rank = real_gate(_real_text(Tally(90, 10, 0), fp=2, fn=2), shipped)
    assert len(low_rank) == 1 and "rank precision" in low_rank[0]
    with pytest.raises(SweepFormatError):
        real_gate("no report here", shipped)
    # on the command line: a candidate the sweeps let through writes nothing when the gate fails
    settings = tmp_path / "reader.json"
    settings.write_text(SETTINGS_FILE.read_text())
    sweep = tmp_path / "val.txt"
    sweep.write_text(_sweep_text({(0.25, 0.45, 0.85): _report(930, 50, 70)}))
    files = {}
    for name, text in (("cand", _real_text(Tally(99, 1, 0), fp=3, fn=1)), ("ship", shipped)):
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text(text)
    runner = CliRunner()
    args = ["select", str(sweep), "--real", str(files["cand"]), "--shipped-real", str(files["ship"])]
    before = settings.read_text()
    result = runner.invoke(app, [*args, "--write", str(settings)])
    assert result.exit_code == 2 and "real-photo gate" in result.stderr and settings.read_text() == before
    assert "real-photo gate: failed" in result.output
    result = runner.invoke(app, ["select", str(sweep), "--real", str(files["ship"])])
    assert result.exit_code == 2 and "go together" in result.stderr
