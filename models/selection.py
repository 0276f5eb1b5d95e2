"""Choosing a reader's thresholds (and between readers) from ``tractorcam eval --sweep`` output.

The rule (model card, *Thresholds*): pool the validation sweeps by summing each setting's counts,
then among the settings within ``window`` points of the best pooled card F1 take the **most
precise** one, because a card that is not there (a false revoke alert) costs more than one missed.
The sets pooled are ``val_all`` (training designs, with and without printed sheets),
``heldout_val`` (unseen KDE decks, never the test's) and
``heldout_val_proc`` (unseen random decks with small indices and jokers): the test split
``heldout`` is never an input.

Only settings that hold jokers to at least :data:`JOKER_FLOOR` are eligible (``joker_conf`` ≥ 0.8, or
``conf`` ≥ 0.8 when jokers are held to ``conf``): a false joker is a false top trump, and printed
text read as a joker is most of the real photos' false cards (a best pooled setting without the
floor read 10 jokers on the real photos, where there are none; docs/experiments/reader-history.md).

A candidate's own pick is made among its settings whose pooled per-play exact match is not lower than
the shipped pick's: exact match is a bar the candidate must keep, so the threshold rule optimises F1
and precision under it (without that, a candidate better on every figure at one setting was refused
because its unconstrained pick traded plays for precision; ``docs/gpu.md``, run 3). A candidate
reader replaces the shipped one only if, at that pick, its pooled F1 is better *and*
its F1 on the unseen-design sets (pooled; ``--unseen``) is not lower than the shipped reader's
(unseen designs must not get worse), and its pooled per-play exact match is not lower (the bars are
exact match *and* F1, and a reader that buys F1 with a lower ``conf`` can lose whole plays), and then only if it passes the real-photo gate
(``tractorcam eval --n 0`` at the pick's thresholds, the shipped reader beside it: rank precision
≥ 95 % on the rank-labelled photos, and card precision on the card-labelled photos of designs other
than the gold-on-black deck not lower than the shipped reader's, since a false card on a real photo
is what a false alert is made of; ``docs/gpu.md``, run 4). :func:`compare` states the first three;
:func:`real_gate` the gate, from the two readers' ``eval --n 0`` outputs (``tractorcam select …
--real CANDIDATE.txt --shipped-real SHIPPED.txt``; ``--write`` is then refused when it fails).
"Better" uses the pick's own notion of equal F1: more than :data:`WINDOW` higher, or within
:data:`WINDOW` and more precise (0.01 pt is one card in 5,313).

``tractorcam select VAL_ALL_SWEEP HELDOUT_VAL_SWEEP [--shipped VAL_ALL_SWEEP --shipped HELDOUT_VAL_SWEEP]
[--write vision/weights/reader.json]``: ``--write`` puts the pick's thresholds into the reader's
settings file (:func:`write_pick`), refused when ``--shipped`` says the candidate does not replace
the shipped reader.

A third set, ``heldout_val_proc`` (unseen random decks with the test's
small indices and with jokers), is pooled too and counts as unseen with heldout_val:
``tractorcam select ALL HV HVP --unseen 2 --shipped ALL --shipped HV --shipped HVP``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from models.metrics import Tally
from vision.settings import ReaderSettings, load_settings, save_settings

#: one sweep row as ``tractorcam eval --sweep`` prints it (models.cli / evaluate.format_scene_report)
_ROW = re.compile(
    r"det_conf (?P<det>[\d.]+) conf (?P<conf>[\d.]+)(?: joker_conf (?P<joker>[\d.]+))?: "
    r"[^\n]*?(?P<plays>\d+) plays, per-play exact match (?P<exact>[\d.]+)%\n"
    r"\s+cards:[^\n]*\(tp (?P<tp>\d+) fp (?P<fp>\d+) fn (?P<fn>\d+)\)\n"
    r"\s+jokers:[^\n]*\(tp (?P<jtp>\d+) fp (?P<jfp>\d+) fn (?P<jfn>\d+)\)"
)

Setting = tuple[float, float, float | None]  # det_conf, conf, joker_conf (None: jokers held to conf)


#: The least classifier probability a joker may need in an eligible setting.
JOKER_FLOOR = 0.8
#: Card F1s this close (a fraction: 0.001 = 0.1 pt) count as equal; then precision decides.
WINDOW = 0.001


class SweepFormatError(ValueError):
    """A sweep file holds no sweep rows (not the output of ``tractorcam eval --sweep``)."""


@dataclass(frozen=True)
class SweepRow:
    """One setting's counts on one set (or pooled over several)."""

    setting: Setting
    cards: Tally
    jokers: Tally
    plays: int
    exact_plays: int

    @property
    def exact_match(self) -> float:
        return self.exact_plays / self.plays if self.plays else 0.0


def sweep_label(setting: Setting) -> str:
    """The label ``tractorcam eval --sweep`` prints before a setting's report (read by :func:`parse_sweep`).

    >>> sweep_label((0.3, 0.4, 0.8))
    'det_conf 0.300 conf 0.40 joker_conf 0.80'
    """
    d, c, j = setting
    return f"det_conf {d:.3f} conf {c:.2f}" + ("" if j is None else f" joker_conf {j:.2f}")


def parse_sweep(text: str) -> dict[Setting, SweepRow]:
    """The rows of one sweep's printed output, keyed by setting.

    Raises :class:`SweepFormatError` when there is none."""
    rows: dict[Setting, SweepRow] = {}
    for m in _ROW.finditer(text):
        joker = m["joker"]
        setting = (float(m["det"]), float(m["conf"]), None if joker is None else float(joker))
        plays = int(m["plays"])
        rows[setting] = SweepRow(
            setting,
            Tally(int(m["tp"]), int(m["fp"]), int(m["fn"])),
            Tally(int(m["jtp"]), int(m["jfp"]), int(m["jfn"])),
            plays,
            round(float(m["exact"]) / 100 * plays),
        )
    if not rows:
        raise SweepFormatError("no sweep rows found (expected `tractorcam eval --sweep` output)")
    return rows


def pool(sweeps: Sequence[dict[Setting, SweepRow]]) -> dict[Setting, SweepRow]:
    """Counts summed per setting over several sets; only settings present in every set are kept."""
    common = set(sweeps[0]).intersection(*sweeps[1:])
    out = {}
    for s in common:
        cards, jokers = Tally(), Tally()
        for sw in sweeps:
            cards.add(sw[s].cards)
            jokers.add(sw[s].jokers)
        out[s] = SweepRow(
            s, cards, jokers, sum(sw[s].plays for sw in sweeps), sum(sw[s].exact_plays for sw in sweeps)
        )
    return out


def joker_threshold(setting: Setting) -> float:
    """The probability a joker needs under ``setting`` (``conf`` when it sets no joker threshold).

    >>> joker_threshold((0.3, 0.4, 0.8)), joker_threshold((0.4, 0.5, None))
    (0.8, 0.5)
    """
    return setting[1] if setting[2] is None else setting[2]


def pick(rows: Iterable[SweepRow], window: float = WINDOW, joker_floor: float = JOKER_FLOOR) -> SweepRow:
    """The most precise row within ``window`` (a fraction: 0.001 = 0.1 pt) of the best card F1, among
    the rows whose jokers need at least ``joker_floor`` (:func:`joker_threshold`; 0 admits all).

    Ties on precision go to the higher F1, then to the lower thresholds (a stable order). Raises
    ``ValueError`` when no row is eligible."""
    rows = [r for r in rows if joker_threshold(r.setting) >= joker_floor - 1e-9]
    if not rows:
        raise ValueError(f"no rows to pick from (none holds jokers to {joker_floor} or more)")
    best = max(r.cards.f1 for r in rows)
    near = [r for r in rows if r.cards.f1 >= best - window - 1e-12]
    return max(near, key=lambda r: (r.cards.precision, r.cards.f1, _neg(r.setting)))


def _neg(s: Setting) -> tuple[float, float, float]:
    return (-s[0], -s[1], -(s[2] if s[2] is not None else 0.0))


@dataclass(frozen=True)
class Verdict:
    """A candidate against the shipped reader, each at its own pick."""

    candidate: SweepRow
    shipped: SweepRow
    candidate_unseen: SweepRow  # the candidate's unseen-design row(s) at its pick, pooled
    shipped_unseen: SweepRow
    window: float = WINDOW

    @property
    def better_pooled(self) -> bool:
        """Pooled F1 more than ``window`` higher, or within ``window`` (equal) and more precise."""
        c, s = self.candidate.cards, self.shipped.cards
        if abs(c.f1 - s.f1) <= self.window + 1e-12:
            return c.precision > s.precision
        return c.f1 > s.f1

    @property
    def unseen_not_worse(self) -> bool:
        return self.candidate_unseen.cards.f1 >= self.shipped_unseen.cards.f1

    @property
    def exact_not_worse(self) -> bool:
        """Pooled per-play exact match not lower than the shipped reader's."""
        return self.candidate.exact_match >= self.shipped.exact_match

    @property
    def replaces(self) -> bool:
        """Whether the candidate may go on to the real-photo gate."""
        return self.better_pooled and self.unseen_not_worse and self.exact_not_worse


def compare(
    candidate: Sequence[dict[Setting, SweepRow]],
    shipped: Sequence[dict[Setting, SweepRow]],
    joker_floor: float = JOKER_FLOOR,
    unseen: int = 1,
) -> Verdict:
    """Each reader's pick on its pooled sweeps, the candidate's among its settings whose pooled
    per-play exact match is not lower than the shipped pick's (when none is, its pick among all, which
    then fails :attr:`Verdict.exact_not_worse`); the last ``unseen`` sweeps of each are the
    unseen-design sets (heldout_val and heldout_val_proc), pooled for
    the not-worse check. Raises ``ValueError`` unless 1 ≤ ``unseen`` ≤ the number of sweeps."""
    if not 1 <= unseen <= min(len(candidate), len(shipped)):
        raise ValueError(f"unseen must be 1 to {min(len(candidate), len(shipped))}, not {unseen}")
    s = pick(pool(shipped).values(), joker_floor=joker_floor)
    rows = list(pool(candidate).values())
    keeping = [r for r in rows if r.exact_match >= s.exact_match]
    try:
        c = pick(keeping, joker_floor=joker_floor)
    except ValueError:  # no eligible setting keeps the shipped reader's exact plays
        c = pick(rows, joker_floor=joker_floor)
    cu, su = pool(candidate[-unseen:]), pool(shipped[-unseen:])
    return Verdict(c, s, cu[c.setting], su[s.setting])


#: The card-labelled photos' view whose card precision the real-photo gate holds (designs other than
#: the gold-on-black deck, which no reader reads yet).
GATE_VIEW = "phone2022"
#: The least rank precision on the rank-labelled photos.
GATE_RANK_PRECISION = 0.95

_RANK = re.compile(r"^\s+rank precision [^\n]*\(micro; tp (?P<tp>\d+) fp (?P<fp>\d+) fn (?P<fn>\d+)\)", re.M)
_VIEW = re.compile(
    r"^\s+(?P<view>[\w-]+): \d+ photos, \d+ cards: [^\n]*?\(tp (?P<tp>\d+) fp (?P<fp>\d+) fn (?P<fn>\d+)\)",
    re.M,
)


def parse_real(text: str) -> tuple[Tally, dict[str, Tally]]:
    r"""The rank tally and the card tallies per view (and ``all``) of ``tractorcam eval --n 0``'s
    printed real-photo reports. Raises :class:`SweepFormatError` when either report is missing.

    >>> rank, views = parse_real(
    ...     "real photos: 2 photos, 3 labelled cards\n  rank precision 100.00% recall 66.67% (micro; tp 2 fp 0 fn 1)\n"
    ...     "real card-labelled photos: 1 photos, 2 labelled cards\n"
    ...     "  phone2022: 1 photos, 2 cards: P 50.00% R 50.00% F1 50.00% (tp 1 fp 1 fn 1); jokers P – R – (tp 0 fp 0 fn 0)")
    >>> rank, views["phone2022"]
    (Tally(tp=2, fp=0, fn=1), Tally(tp=1, fp=1, fn=1))
    """
    rank = _RANK.search(text)
    views = {m["view"]: Tally(int(m["tp"]), int(m["fp"]), int(m["fn"])) for m in _VIEW.finditer(text)}
    if rank is None or not views:
        raise SweepFormatError("no real-photo reports found (expected `tractorcam eval --n 0` output)")
    return Tally(int(rank["tp"]), int(rank["fp"]), int(rank["fn"])), views


def real_gate(candidate: str, shipped: str, view: str = GATE_VIEW) -> list[str]:
    r"""The real-photo gate on ``tractorcam eval --n 0`` outputs of the candidate (at its pick's
    thresholds) and of the shipped reader: the reasons it fails, none when it passes. Rank precision
    at least :data:`GATE_RANK_PRECISION`, and card precision on ``view`` not lower than the shipped
    reader's (a false card on a real photo is what a false alert is made of).

    >>> ship = ("  rank precision 96.67% recall 99.05% (micro; tp 522 fp 18 fn 5)\n"
    ...         "  phone2022: 420 photos, 505 cards: P 82.80% R 77.23% F1 79.92% (tp 390 fp 81 fn 115)")
    >>> cand = ("  rank precision 99.43% recall 99.43% (micro; tp 524 fp 3 fn 3)\n"
    ...         "  phone2022: 420 photos, 505 cards: P 75.91% R 78.61% F1 77.24% (tp 397 fp 126 fn 108)")
    >>> real_gate(cand, ship)
    ["card precision on phone2022 75.91% is lower than the shipped reader's 82.80%"]
    >>> real_gate(ship, ship)
    []
    """
    c_rank, c_views = parse_real(candidate)
    _, s_views = parse_real(shipped)
    reasons = []
    if c_rank.precision < GATE_RANK_PRECISION:
        reasons.append(f"rank precision {c_rank.precision:.2%} is under {GATE_RANK_PRECISION:.0%}")
    if view not in c_views or view not in s_views:
        reasons.append(f"no card-labelled figures for {view!r} in both outputs")
    elif c_views[view].precision < s_views[view].precision:
        reasons.append(
            f"card precision on {view} {c_views[view].precision:.2%} is lower than the shipped "
            f"reader's {s_views[view].precision:.2%}"
        )
    return reasons


def write_pick(row: SweepRow, path: Path) -> ReaderSettings:
    """The reader settings file ``path`` (:mod:`vision.settings`) with the thresholds of ``row``
    (``det_conf``, ``conf``, ``joker_conf``), written back and returned; the rest of the file is
    kept. Raises :class:`vision.settings.SettingsError` for a file that does not validate."""
    det_conf, conf, joker_conf = row.setting
    settings = load_settings(path).model_copy(
        update={"det_conf": det_conf, "conf": conf, "joker_conf": joker_conf}
    )
    settings = ReaderSettings.model_validate(settings.model_dump())
    save_settings(settings, path)
    return settings


def describe(row: SweepRow) -> str:
    d, c, j = row.setting
    thr = f"det_conf {d:g} conf {c:g}" + ("" if j is None else f" joker_conf {j:g}")
    t = row.cards
    return (
        f"{thr}: F1 {t.f1:.2%} P {t.precision:.2%} R {t.recall:.2%} (tp {t.tp} fp {t.fp} fn {t.fn}), "
        f"exact {row.exact_match:.2%}, jokers {row.jokers.tp} found {row.jokers.fp} false"
    )
