"""Rule sets as data: every difference between the seeds is a policy value here, not an if-chain.

The five rule sets of ``RULES.md``: ``national-1deck``, ``national-2deck``, ``national-3deck``
(seed 002), ``zhku-3deck`` (seed 001) and ``challenge-2deck`` (seed 004).

>>> RULE_SETS["national-2deck"].levels.outcome(0), RULE_SETS["national-2deck"].levels.outcome(125)
(('dealer', 3), ('defenders', 1))
>>> RULE_SETS["zhku-3deck"].levels.outcome(115), RULE_SETS["zhku-3deck"].levels.outcome(-5)
(('dealer', 1), ('dealer', 5))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.text import shown

#: Steps of a follow obligation, tried in order for one lead component (see ``engine.follow``):
#: ``tractor_full`` a tractor of the lead's width and length; ``tractors`` the longest tractors of
#: the lead's width, repeatedly (more-pair before fewer-pair); ``pair_tractors`` the same for pairs;
#: ``triples`` as many triples as fit; ``pairs`` as many pairs as fit (split from triples too);
#: ``pair_tractor_else_pairs`` the longest pair tractor that fits and nothing more, or failing
#: that as many pairs as the lead has units (seed 002: 连对加两张牌 → 两个对子加两张牌 → 一个对子加四个单张).
Step = Literal["tractor_full", "tractors", "pair_tractors", "triples", "pairs", "pair_tractor_else_pairs"]


class UnknownRuleSetError(ValueError):
    """A rule set id that is not one of ``RULE_SETS``."""


@dataclass(frozen=True, slots=True)
class FollowPolicy:
    """Fallback order for each lead component kind (seed 002 art. 13; seed 001 art. 11.2)."""

    pair: tuple[Step, ...]
    triple: tuple[Step, ...]
    pair_tractor: tuple[Step, ...]
    triple_tractor: tuple[Step, ...]

    def steps(self, width: int, length: int) -> tuple[Step, ...]:
        if width == 1:
            return ()
        if length == 1:
            return self.pair if width == 2 else self.triple
        return self.pair_tractor if width == 2 else self.triple_tractor


NATIONAL_FOLLOW = FollowPolicy(
    pair=("pairs",),
    triple=("triples", "pairs"),
    pair_tractor=("tractor_full", "pairs"),
    triple_tractor=("tractor_full", "triples", "pair_tractor_else_pairs"),
)
ZHKU_FOLLOW = FollowPolicy(
    pair=("pairs",),
    triple=("triples", "pairs"),
    pair_tractor=("tractors", "pairs"),
    triple_tractor=("tractors", "pair_tractors", "triples", "pairs"),
)

ThrowMultiplier = Literal["max3_largest", "sum_two_highest", "tractor_pair_or_3"]


@dataclass(frozen=True, slots=True)
class BottomPolicy:
    """抠底 multipliers by the shape of the last trick's lead (RULES.md table; seed 002 table 1,
    seed 001 table 1, seed 004 (11))."""

    single: int
    pair: int
    triple: int
    pair_tractor_base: int
    pair_tractor_step: int
    triple_tractor_base: int
    triple_tractor_step: int
    #: ``2 ** (n + 1)`` for an n-pair tractor instead of base + step·(n − 2) (seed 004).
    pair_tractor_power: bool
    throw: ThrowMultiplier

    def component(self, width: int, length: int) -> int:
        if length == 1:
            return (self.single, self.pair, self.triple)[width - 1]
        if width == 2:
            if self.pair_tractor_power:
                return int(2 ** (length + 1))
            return self.pair_tractor_base + self.pair_tractor_step * (length - 2)
        return self.triple_tractor_base + self.triple_tractor_step * (length - 2)


@dataclass(frozen=True, slots=True)
class LevelTable:
    """Deal outcome from the defenders' total D.

    ``style="national"`` (seed 002 tables 2/3, seed 004): defenders take over at D ≥ threshold and
    go up ⌊(D − threshold)/unit⌋; otherwise the dealer side goes up 1 (D ≥ threshold/2), 2
    (0 < D), 3 (D = 0) or 3 + ⌈−D/unit⌉ (D < 0).
    ``style="banded"`` (seed 001 table 2): defenders take over at D ≥ threshold and go up
    1 + ⌊(D − threshold)/unit⌋; otherwise the dealer side goes up 1 + ⌊(threshold − 5 − D)/unit⌋.
    """

    style: Literal["national", "banded"]
    threshold: int
    unit: int

    def outcome(self, total: int) -> tuple[str, int]:
        """``("dealer" | "defenders", levels)`` for a defenders' total."""
        t, u = self.threshold, self.unit
        if self.style == "banded":
            if total >= t:
                return ("defenders", 1 + (total - t) // u)
            return ("dealer", 1 + (t - 5 - total) // u)
        if total >= t:
            return ("defenders", (total - t) // u)
        if total >= t // 2:
            return ("dealer", 1)
        if total > 0:
            return ("dealer", 2)
        if total == 0:
            return ("dealer", 3)
        return ("dealer", 3 + (-total + u - 1) // u)


DeclareFallback = Literal["flip_bottom", "dealer_names", "no_trump", "redeal"]


@dataclass(frozen=True, slots=True)
class DeclarePolicy:
    """亮主 / 反主: who may fix the trump suit (seed 002 art. 8, 21; seed 001 art. 8, 10; seed 004 (7)).

    ``pairs_only_override``: an override must be a pair (seed 004: a level pair or a joker pair beats
    a single level card; a joker pair beats a level pair and makes no-trump; the declarer may
    reinforce a single to a pair). Otherwise any larger number of same-suit level cards overrides.
    """

    pairs_only_override: bool
    joker_pairs: bool
    fallback_first_deal: DeclareFallback
    fallback_later: DeclareFallback


@dataclass(frozen=True, slots=True)
class PenaltyPolicy:
    """Standard referee penalties (applied only through rulings, never automatically)."""

    #: Seed 002 table 4: points for penalty levels 1…4.
    table: tuple[int, int, int, int]
    revoke_points: int
    revoke_levels: int
    revoke_deals_next: bool
    failed_throw_points: int
    #: Points per card taken back after a failed throw (seed 004), added to ``failed_throw_points``.
    failed_throw_per_card: int
    other_points: int


@dataclass(frozen=True, slots=True)
class RuleSet:
    id: str
    title: str
    seed: str
    decks: int
    hand_size: int
    bottom_size: int
    follow: FollowPolicy
    bottom: BottomPolicy
    levels: LevelTable
    declare: DeclarePolicy
    penalties: PenaltyPolicy

    @property
    def triples(self) -> bool:
        return self.decks >= 3

    @property
    def total_points(self) -> int:
        return 100 * self.decks


_NATIONAL_DECLARE = DeclarePolicy(False, False, "redeal", "flip_bottom")


def _national(decks: int, hand: int, bottom_size: int, bottom: BottomPolicy) -> RuleSet:
    unit = 20 * decks
    table = (5 * decks, 10 * decks, 20 * decks, 40 * decks)
    return RuleSet(
        id=f"national-{decks}deck",
        title=f"中国升级竞赛规则 (2002), {decks} deck{'s' if decks > 1 else ''}",
        seed="002",
        decks=decks,
        hand_size=hand,
        bottom_size=bottom_size,
        follow=NATIONAL_FOLLOW,
        bottom=bottom,
        levels=LevelTable("national", threshold=2 * unit, unit=unit),
        declare=_NATIONAL_DECLARE,
        penalties=PenaltyPolicy(
            table=table,
            revoke_points=table[1],
            revoke_levels=0,
            revoke_deals_next=False,
            failed_throw_points=table[0],
            failed_throw_per_card=0,
            other_points=table[0],
        ),
    )


RULE_SETS: dict[str, RuleSet] = {
    rs.id: rs
    for rs in (
        _national(1, 12, 6, BottomPolicy(2, 0, 0, 0, 0, 0, 0, False, "max3_largest")),
        _national(2, 25, 8, BottomPolicy(2, 4, 0, 6, 2, 0, 0, False, "max3_largest")),
        _national(3, 39, 6, BottomPolicy(2, 3, 4, 5, 1, 6, 2, False, "max3_largest")),
        RuleSet(
            id="zhku-3deck",
            title="三副牌拖拉机竞赛规则 (university staff championship)",
            seed="001",
            decks=3,
            hand_size=39,
            bottom_size=6,
            follow=ZHKU_FOLLOW,
            bottom=BottomPolicy(2, 3, 4, 5, 1, 6, 2, False, "sum_two_highest"),
            levels=LevelTable("banded", threshold=120, unit=30),
            declare=DeclarePolicy(False, False, "dealer_names", "dealer_names"),
            penalties=PenaltyPolicy(
                table=(20, 20, 20, 20),
                revoke_points=0,
                revoke_levels=1,
                revoke_deals_next=True,
                failed_throw_points=20,
                failed_throw_per_card=0,
                other_points=20,
            ),
        ),
        RuleSet(
            id="challenge-2deck",
            title="升级挑战赛 (2 decks)",
            seed="004",
            decks=2,
            hand_size=25,
            bottom_size=8,
            follow=NATIONAL_FOLLOW,
            bottom=BottomPolicy(2, 4, 0, 0, 0, 0, 0, True, "tractor_pair_or_3"),
            levels=LevelTable("national", threshold=80, unit=40),
            declare=DeclarePolicy(True, True, "no_trump", "no_trump"),
            penalties=PenaltyPolicy(
                table=(10, 20, 40, 80),
                revoke_points=80,
                revoke_levels=0,
                revoke_deals_next=True,
                failed_throw_points=0,
                failed_throw_per_card=10,
                other_points=10,
            ),
        ),
    )
}
RULE_SET_IDS: tuple[str, ...] = tuple(RULE_SETS)


def get_rule_set(rule_id: object) -> RuleSet:
    """The rule set for an id; raises :class:`UnknownRuleSetError`."""
    if isinstance(rule_id, str) and rule_id in RULE_SETS:
        return RULE_SETS[rule_id]
    raise UnknownRuleSetError(f"unknown rule set {shown(rule_id)} (known: {', '.join(RULE_SETS)})")
