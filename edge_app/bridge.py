"""The table service's bridge side (seed 003): frames → card readings → dummy's cards as laid and
each seat's card trick by trick → the bridge log (``shared/spec/games.md``) → its score, revokes.

What a camera over a duplicate table sees, and how it is followed:

* **Where a card lies.** A bridge table has no centre area: a card belongs to the seat whose edge
  it lies nearest (the four triangles between the table's diagonals), at its depth, its distance
  from that edge (:func:`placed`); the calibration's play zones are Shengji's.
* **A card played** lies face up in front of its player until the trick is complete; then each
  player turns theirs face down (law 65). Face-down cards are not read, so a trick ends as a
  Shengji trick does, when no seat shows a played card: the same tracker
  (:class:`vision.tracking.TrickTracker`, zone inertia, votes over every reading).
* **Dummy's hand**, laid face up in front of dummy after the opening lead in columns running towards
  declarer, lies within :data:`DUMMY_LINE` of the table's depth from dummy's edge; **dummy's played
  card** is laid beyond that line, towards the centre (the table's set-up asks it: declarer or dummy
  pushes the card named forward). Dummy's cards as laid are each card read inside the line in at
  least :data:`DUMMY_SEEN` readings (:class:`DummyReader`), gathered over the board (an overlapped
  column shows only its cards' top indices, and more of them as the column shortens), and each
  card dummy plays. They are no play, and each card dummy plays is checked against them.
* **A play's picture** (for an alert or a look) is the seat's triangle of the latest frame that
  showed the play as decided (:func:`seat_area`).
* **The contract** is the table's to give (an operator, or the scoreboard), with the board and
  declarer (:class:`BoardInfo`): a trick's leader is the last one's winner, which only the strain
  tells. Bidding boxes are not read.
* **The log**: each trick's plays in order from its leader (the first: declarer's left-hand
  opponent; then each trick's winner, or, while unknown cards leave it open, the seat whose card
  was laid first). A play read as several cards that could all be one (two corners of a card
  not put together) is the most specific of them; one read as cards that cannot, a card no
  reading named, a card read
  twice, or a card read less surely that disagrees with dummy's columns (dummy's card not among
  them, another seat's among them) is written unknown (``??``, with a look for the referee): the
  rules' unknown-card reasoning then settles what it can (:mod:`bridge.play`), and an alert never
  rests on it. A play read surely is taken over the columns' strips.
* **Revokes** the rules prove are alerts when both cards of their proof were read by at least
  :data:`SURE_AGREEMENT` of the readings of their plays; otherwise a look. Dummy's revoke, proven
  by a card of its columns read from a strip of it, is always a look (and law 64 transfers nothing
  for it).
* **No joker** is a bridge card: one read is a misread, and is left out.

>>> r = DummyReader(seen=2)
>>> for _ in range(3):
...     r.see(["AS", "KS", "QS"])
>>> r.see(["10C", "KS"])
>>> r.see(["10C"])
>>> [str(c) for c in r.layout()]
['KS', 'AS', 'QS', '10C']
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from bridge.log import TRICKS, BridgeLogError, clockwise, parse_bridge_log
from bridge.play import score_log, winner_of
from calibration.table import TableGeometry
from contract.events import AlertIn, BoardStart, Play
from edge_app.events import evidence_images
from edge_app.outbox import DealKeys
from edge_app.pipeline import ReadCards, play_crop
from engine.cards import AnyCard, Card, UnknownCard, parse_any
from engine.seats import Seat
from vision.capture import Frame
from vision.instances import CardInstance
from vision.tracking import SEATS, TableState, TrackedPlay, TrackedTrick, TrickTracker, in_order

#: Dummy's laid hand lies within this share of the table's depth from dummy's edge; its played
#: card beyond it.
DUMMY_LINE: Final = 0.27
#: Readings that must name a card inside the line for it to count as one of dummy's as laid.
DUMMY_SEEN: Final = 3
#: A revoke is alerted when each play of its proof was read so by at least this share of its readings.
SURE_AGREEMENT: Final = 0.75
UNKNOWN: Final = UnknownCard()


class BoardInfoError(ValueError):
    """A board the table was given that bridge's rules refuse (board, contract, declarer)."""


@dataclass(frozen=True)
class BoardInfo:
    """What the table is told of a board before its play: the board (its dealer and vulnerability,
    law 2, unless ``vulnerable`` says otherwise), the contract and declarer.

    >>> BoardInfo(7, "4HX", "S").leader.name
    'W'
    >>> BoardInfo(7, "4HX", "Q")
    Traceback (most recent call last):
    ...
    edge_app.bridge.BoardInfoError: "declarer": unknown seat 'Q' (a contract needs its declarer: N, E, S or W)
    """

    board: int
    contract: str
    declarer: str
    vulnerable: str | None = None

    def __post_init__(self) -> None:
        try:
            log = parse_bridge_log(self.header())
        except BridgeLogError as exc:
            raise BoardInfoError(str(exc)) from None
        if log.declarer is None:
            raise BoardInfoError("a board passed out has no play to follow")

    def header(self) -> dict[str, Any]:
        """The log's keys before its play."""
        out: dict[str, Any] = {
            "game": "bridge",
            "board": self.board,
            "contract": self.contract,
            "declarer": self.declarer,
        }
        if self.vulnerable is not None:
            out["vulnerable"] = self.vulnerable
        return out

    @property
    def declarer_seat(self) -> Seat:
        return Seat[self.declarer.strip().upper()]

    @property
    def dummy(self) -> Seat:
        return self.declarer_seat.partner

    @property
    def leader(self) -> Seat:
        return clockwise(self.declarer_seat)

    @property
    def trump(self) -> str | None:
        return parse_bridge_log(self.header()).trump


def depth_from_edge(geometry: TableGeometry, seat: str, point: tuple[float, float]) -> float:
    """How far (mm) a table point lies from ``seat``'s edge towards the centre.

    >>> g = TableGeometry.model_construct(table_width_mm=900.0, table_height_mm=800.0)
    >>> depth_from_edge(g, "S", (450.0, 700.0)), depth_from_edge(g, "E", (850.0, 400.0))
    (100.0, 50.0)
    """
    x, y = point
    w, h = geometry.table_width_mm, geometry.table_height_mm
    return {"S": h - y, "N": y, "E": w - x, "W": x}[seat]


def nearest_seat(geometry: TableGeometry, point: tuple[float, float]) -> str:
    """The seat whose edge a table point lies nearest (ties: the first of ``N E S W``).

    >>> g = TableGeometry.model_construct(table_width_mm=900.0, table_height_mm=900.0)
    >>> nearest_seat(g, (450.0, 300.0)), nearest_seat(g, (700.0, 450.0))
    ('N', 'E')
    """
    return min(("N", "E", "S", "W"), key=lambda seat: depth_from_edge(geometry, seat, point))


def placed(cards: Sequence[CardInstance], geometry: TableGeometry) -> dict[str, list[tuple[AnyCard, float]]]:
    """Each seat's cards in one reading with their depth (:func:`depth_from_edge`), by the centre of
    each card's box, on the seat whose edge it lies nearest (:func:`nearest_seat`); jokers left out."""
    out: dict[str, list[tuple[AnyCard, float]]] = {s: [] for s in SEATS}
    if not cards:
        return out
    px = np.array([[(c.box[0] + c.box[2]) / 2, (c.box[1] + c.box[3]) / 2] for c in cards])
    for card, (x, y) in zip(cards, geometry.pixel_to_table(px), strict=True):
        if (isinstance(card.card, Card) and card.card.is_joker) or (
            isinstance(card.card, UnknownCard) and card.card.joker
        ):
            continue  # no bridge card: a misread
        at = (float(x), float(y))
        seat = nearest_seat(geometry, at)
        out[seat].append((card.card, depth_from_edge(geometry, seat, at)))
    return out


def seat_area(geometry: TableGeometry, seat: str) -> list[tuple[float, float]]:
    """The triangle of the table nearest ``seat``'s edge (its two corners and the middle), mm."""
    w, h = geometry.table_width_mm, geometry.table_height_mm
    corners = {
        "N": [(0.0, 0.0), (w, 0.0)],
        "E": [(w, 0.0), (w, h)],
        "S": [(w, h), (0.0, h)],
        "W": [(0.0, h), (0.0, 0.0)],
    }
    return [*corners[seat], (w / 2, h / 2)]


def dummy_line(geometry: TableGeometry, dummy: str) -> float:
    """The depth (mm from dummy's edge) beyond which a card of dummy's is its played card."""
    across = geometry.table_height_mm if dummy in ("N", "S") else geometry.table_width_mm
    return DUMMY_LINE * across


@dataclass
class DummyReader:
    """Dummy's cards as laid (see the module docstring): each card named inside the line in at least
    ``seen`` readings, the most read first (:meth:`layout`). A strip of an overlapped card is read
    less surely than a card played, so :func:`build_board` trusts a play read surely over these."""

    seen: int = DUMMY_SEEN
    counts: Counter[Card] = field(default_factory=Counter)

    def see(self, cards: Iterable[AnyCard | str]) -> None:
        """Take one reading of what lies inside the line in front of dummy."""
        named = {parse_any(c) if isinstance(c, str) else c for c in cards}
        self.counts.update(c for c in named if isinstance(c, Card))

    def layout(self) -> tuple[Card, ...] | None:
        """The cards read inside the line often enough, the most read first (None before any is)."""
        kept = tuple(c for c, n in self.counts.most_common() if n >= self.seen)
        return kept or None


@dataclass(frozen=True)
class RecognisedBoard:
    """A board as the camera saw it: its log (JSON, the spec's), the score (``score_log``; None when
    the rules refuse the log: ``problem`` says why), looks for the referee, the alerts (revokes
    proven by plays read surely) and each play's picture."""

    log: dict[str, Any]
    result: dict[str, Any] | None
    problem: str | None
    looks: tuple[str, ...] = ()
    alerts: tuple[dict[str, Any], ...] = ()
    crops: dict[tuple[int, str], bytes] = field(default_factory=dict)
    #: the revokes the rules prove that became looks (dummy's, or read with doubt), with their look
    doubts: tuple[tuple[dict[str, Any], str], ...] = ()

    @property
    def finished(self) -> bool:
        return bool(self.log.get("finished")) and self.problem is None


def _card_of(play: TrackedPlay, looks: list[str], trick: int) -> AnyCard:
    """The one card a play is: the card read, or, where the reading holds several (two corners of
    one card not put together), the most specific of them when each could be the same card
    (``2?`` and ``2?``, ``?S`` and ``2S``); else ``??`` with a look.

    >>> _card_of(TrackedPlay("W", ("2?", "2S"), 4, 4, 0), [], 7), _card_of(TrackedPlay("W", ("2?", "2?"), 4, 4, 0), [], 7)
    (Card('2S'), UnknownCard('2?'))
    """
    if len(play.cards) == 1:
        return play.cards[0]
    common = frozenset.intersection(*(c.candidates for c in play.cards)) if play.cards else frozenset()
    if common:
        best = min(play.cards, key=lambda c: len(c.candidates))
        if best.candidates <= common:
            return best
    looks.append(
        f"trick {trick}: {play.seat} laid {len(play.cards)} cards as read ({', '.join(map(str, play.cards)) or 'none named'})"
    )
    return UNKNOWN


def build_board(
    tricks: Sequence[TrackedTrick],
    layout: Sequence[Card] | None,
    info: BoardInfo,
    *,
    finished: bool = True,
) -> RecognisedBoard:
    """The board from the tracker's tricks and dummy's cards as laid, the most read first
    (:meth:`DummyReader.layout`; see the module docstring); ``finished=False`` for the board so far
    (its log unfinished even with 13 tricks). A play read surely (at least :data:`SURE_AGREEMENT` of
    its readings) is taken over dummy's columns where they disagree: a card another seat plays is no card of dummy's, and
    a card dummy plays is one; a play read less surely that disagrees with them is written ``??``.
    The log's dummy is the cards dummy played, then those read in its columns and played by no
    other seat, the most read first, to 13 (``??`` for those never read)."""
    looks: list[str] = []
    dummy, trump = info.dummy.name, info.trump
    laid = set(layout or ())
    played: set[Card] = set()
    leader = info.leader.name
    out_tricks: list[dict[str, Any]] = []
    plays_of: dict[tuple[int, str], TrackedPlay] = {}
    for k, trick in enumerate(tricks, 1):
        by_seat: dict[str, TrackedPlay] = {p.seat: p for p in trick.plays}
        order = [leader]
        for _ in range(3):
            order.append(clockwise(Seat[order[-1]]).name)
        complete = trick.complete or len(by_seat) == 4
        cards: dict[str, AnyCard] = {}
        for seat in order:
            play = by_seat.get(seat)
            if play is None:
                if complete:
                    looks.append(f"trick {k}: no card of {seat}'s was read")
                    cards[seat] = UNKNOWN
                continue
            card = _card_of(play, looks, k)
            if isinstance(card, Card):
                why = None
                if card in played:
                    why = "was played before"
                elif play.agreement < SURE_AGREEMENT and (seat == dummy) != (card in laid):
                    why = (
                        "is one of dummy's cards as laid"
                        if card in laid
                        else "is not among dummy's cards as laid"
                    )
                if why is not None:
                    looks.append(f"trick {k}: {seat}'s card read as {card}, which {why}")
                    card = UNKNOWN
                else:
                    played.add(card)
            cards[seat] = card
            plays_of[(k, seat)] = play
        written = [[s, str(cards[s])] for s in order if s in cards]
        if not written:
            continue
        out_tricks.append({"plays": written})
        if len(written) == 4:
            faces = [cards[s] for s in order]
            if all(isinstance(c, Card) for c in faces):
                leader = order[winner_of([c.code for c in faces if isinstance(c, Card)], trump)]
            else:  # the winner is open: the seat whose card was laid first in the next trick leads
                nxt = tricks[k] if k < len(tricks) else None
                if nxt is not None and nxt.plays:
                    leader = min(nxt.plays, key=lambda p: p.first_frame).seat
    log: dict[str, Any] = {**info.header()}
    if layout is not None:  # as laid: the cards dummy played (held from the start), then those read there
        as_written = [(seat, parse_any(card)) for t in out_tricks for seat, card in t["plays"]]
        theirs = {c for seat, c in as_written if seat != dummy}
        kept = [c for seat, c in as_written if seat == dummy and isinstance(c, Card)]
        kept += [c for c in layout if c not in theirs and c not in kept]
        kept = sorted(kept[:TRICKS], key=str)
        log["dummy"] = [str(c) for c in kept] + ["??"] * (TRICKS - len(kept))
    log["tricks"] = out_tricks
    done = len(out_tricks) == TRICKS and len(out_tricks[-1]["plays"]) == 4
    log["finished"] = finished and done
    try:
        result: dict[str, Any] | None = score_log(log)
        problem = None
    except BridgeLogError as exc:
        result, problem = None, str(exc)
        looks.append(f"the rules refuse the board as read: {exc}")
    alerts: list[dict[str, Any]] = []
    doubts: list[tuple[dict[str, Any], str]] = []
    for v in (result or {}).get("violations", []):
        proof = [plays_of.get((v["trick"], v["seat"])), plays_of.get((v["proven_at"], v["seat"]))]
        if v["seat"] == dummy:  # proven by a card of the layout, read from a strip of it: a referee looks
            doubts.append((v, f"trick {v['trick']}: dummy may have revoked ({v['reason']}); check its cards"))
        elif all(p is not None and p.agreement >= SURE_AGREEMENT and p.readings >= 2 for p in proof):
            alerts.append(v)
        else:
            doubts.append(
                (
                    v,
                    f"trick {v['trick']}: {v['seat']} may have revoked ({v['reason']}); the cards were not read surely",
                )
            )
    looks += [text for _, text in doubts]
    return RecognisedBoard(log, result, problem, tuple(looks), tuple(alerts), doubts=tuple(doubts))


@dataclass(frozen=True)
class BridgeResult:
    """The board as followed to the source's end (or ``stop()``), the frames seen and read, and the
    frame at which it was found finished (None: never)."""

    board: RecognisedBoard
    frames: int
    read: int
    finished_at: int | None = None
    stopped: bool = False


def run_bridge_pipeline(
    frames: Iterable[Frame],
    read: ReadCards,
    geometry: TableGeometry,
    info: BoardInfo,
    *,
    every: int = 1,
    inertia: int = 2,
    on_frame: Callable[[Frame, TableState], None] | None = None,
    on_trick: Callable[[RecognisedBoard], None] | None = None,
    on_finished: Callable[[RecognisedBoard], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> BridgeResult:
    """Follow one board over ``frames`` (each ``every``-th read): ``on_trick`` with the board so far
    after each trick, ``on_finished`` once with the finished board (13 tricks, the rules accepting
    it) at the frame it is first seen; the board found finished is the pipeline's from then on."""
    if every < 1:
        raise ValueError(f"every must be at least 1, got {every}")
    tracker = TrickTracker(inertia)
    dummy = DummyReader()
    dummy_seat = info.dummy.name
    line = dummy_line(geometry, dummy_seat)
    #: the latest frame that showed each play as the tracker holds it, its picture made when the
    #: board is next built
    shown: dict[tuple[int, str], tuple[npt.NDArray[np.uint8], TableGeometry]] = {}
    crops: dict[tuple[int, str], bytes] = {}
    finished: RecognisedBoard | None = None
    finished_at: int | None = None
    n = nread = 0
    last: int | None = None
    stopped = False

    def board(so_far: bool = False) -> RecognisedBoard:
        built = build_board(tracker.tricks(), dummy.layout(), info, finished=not so_far)
        crops.update(
            {
                key: play_crop(image, table, key[1], seat_area(table, key[1]))
                for key, (image, table) in shown.items()
            }
        )
        shown.clear()
        return RecognisedBoard(
            built.log, built.result, built.problem, built.looks, built.alerts, dict(crops), built.doubts
        )

    for frame in frames:
        if stop is not None and stop():
            stopped = True
            break
        n += 1
        if last is not None and frame.index - last < every:
            continue
        last = frame.index
        cards = read(frame.image)
        nread += 1
        zones = placed(cards, geometry)
        dummy.see(c for c, d in zones[dummy_seat] if d <= line)
        state_zones = {
            seat: in_order(c for c, d in zones[seat] if seat != dummy_seat or d > line) for seat in SEATS
        }
        state = TableState(zones=state_zones, frame=frame.index)
        done = tracker.completed
        tracker.update(state)
        for seat, seat_cards in tracker.in_play(state).zones.items():
            play = tracker.current(seat) if seat_cards else None
            if play is not None and play.cards == seat_cards:
                shown[(tracker.completed + 1, seat)] = (frame.image, geometry)
        if finished is None and tracker.completed > done:
            if on_trick is not None:
                on_trick(board(so_far=True))
            if tracker.completed >= TRICKS:
                built = board()
                if built.finished:
                    finished, finished_at = built, frame.index
                    if on_finished is not None:
                        on_finished(built)
        if on_frame is not None:
            on_frame(frame, state)
    return BridgeResult(finished or board(), n, nread, finished_at, stopped)


class BoardStream:
    """What is new to post of a board each time it is built again: its start, then each play of a
    finished trick (:mod:`contract.events`); at the end (:meth:`finish`) the revokes proven by
    plays read surely as alerts with the pictures of the plays they rest on (the lead, the
    offence, the proof), every doubt as a look (a revoke in doubt names its seat and trick, so the
    scoreboard holds the rules' own alert behind it), and a board not seen finished as a look.

    >>> stream = BoardStream(BoardInfo(3, "2S", "N"))
    >>> board = RecognisedBoard({"tricks": [{"plays": [["E", "AH"], ["S", "2H"], ["W", "3H"], ["N", "4H"]]},
    ...                                     {"plays": [["E", "KH"]]}]}, None, None)
    >>> [(e.type, getattr(e, "seat", None)) for e in stream.update(board)]
    [('board_start', None), ('play', 'E'), ('play', 'S'), ('play', 'W'), ('play', 'N')]
    >>> stream.update(board)
    []
    """

    def __init__(self, info: BoardInfo) -> None:
        self.info = info
        self.started = False
        self.sent: set[tuple[int, str]] = set()

    def update(self, board: RecognisedBoard) -> list[BoardStart | Play]:
        out: list[BoardStart | Play] = []
        if not self.started:
            self.started = True
            out.append(
                BoardStart(
                    type="board_start",
                    board=self.info.board,
                    contract=self.info.contract,
                    declarer=self.info.declarer_seat.name,
                )
            )
        for k, trick in enumerate(board.log.get("tricks", []), start=1):
            if len(trick["plays"]) < 4:
                continue
            for seat, card in trick["plays"]:
                if (k, seat) not in self.sent:
                    self.sent.add((k, seat))
                    out.append(Play(type="play", trick=k, seat=seat, cards=[card]))
        return out

    def finish(self, board: RecognisedBoard) -> list[AlertIn]:
        out = [
            AlertIn(
                type="alert",
                kind="revoke",
                seat=v["seat"],
                trick=v["trick"],
                proven_at=v["proven_at"],
                reasoning=str(v["reason"]),
                images=evidence_images(board.crops, _proof_plays(board, v)),
            )
            for v in board.alerts
        ]
        doubted = {text for _, text in board.doubts}
        out += [
            AlertIn(
                type="alert",
                kind="look",
                seat=v["seat"],
                trick=v["trick"],
                proven_at=v["proven_at"],
                reasoning=text,
                images=evidence_images(board.crops, _proof_plays(board, v)),
            )
            for v, text in board.doubts
        ]
        out += [
            AlertIn(type="alert", kind="look", reasoning=text) for text in board.looks if text not in doubted
        ]
        if not board.finished:
            tricks = len(board.log.get("tricks", []))
            out.append(
                AlertIn(
                    type="alert",
                    kind="look",
                    reasoning=f"board {self.info.board} was not seen finished ({tricks} tricks read): "
                    "its score was not posted; enter it from the table's log",
                )
            )
        return out


def _proof_plays(board: RecognisedBoard, v: dict[str, Any]) -> list[tuple[int, str]]:
    """The plays a revoke rests on: the trick's lead (the suit), the offence, the proof."""
    trick, proven, seat = int(v["trick"]), int(v["proven_at"]), str(v["seat"])
    tricks = board.log.get("tricks", [])
    leader = (
        tricks[trick - 1]["plays"][0][0] if 0 < trick <= len(tricks) and tricks[trick - 1]["plays"] else seat
    )
    plays = [(trick, leader)] if leader != seat else []
    return [*plays, (trick, seat), (proven, seat)]


@dataclass(frozen=True)
class BridgeServiceResult:
    """What ``tractorcam run`` reports of a bridge board: the board as followed, the counts, the
    alerts raised (one line each) and whether ``stop()`` ended the run."""

    board: RecognisedBoard
    frames: int
    read: int
    alerts: tuple[str, ...]
    stopped: bool = False
    finished_at: int | None = None
    #: events handed to the scoreboard client, whether the finished board was, and whether nothing
    #: is left unsent
    events: int = 0
    board_posted: bool = False
    all_sent: bool = True


def run_bridge_service(
    frames: Iterable[Frame],
    read: ReadCards,
    geometry: TableGeometry,
    info: BoardInfo,
    config: Any = None,
    *,
    on_frame: Callable[[Frame, TableState], None] | None = None,
    stop: Callable[[], bool] | None = None,
    client: Any = None,
    keys: DealKeys | None = None,
) -> BridgeServiceResult:
    """Follow a bridge board as the table's configuration says (``config``: a
    :class:`edge_app.config.TableConfig`; how often frames are read, the zones' inertia and
    ``log_out``, rewritten after every trick through a temporary file, so a crash mid-write leaves
    the last log whole). With a scoreboard ``client`` (:class:`edge_app.client.ScoreboardClient`;
    ``keys``: the board's idempotency keys, :meth:`edge_app.outbox.DealKeys.of_board`), the board's
    start and each trick's plays go out as the trick ends (:class:`BoardStream`); once the board is
    finished (or the source ends) its alerts and looks, then the board's log if it is finished."""
    from edge_app.service import STOP_FLUSH_S, write_atomic

    every = config.frames_every if config is not None else 1
    inertia = config.inertia if config is not None else 2
    log_out = config.log_out if config is not None else None
    stream = BoardStream(info)
    sent = [0]
    deadline: list[float] = []

    def within() -> float | None:
        return max(0.0, deadline[0] - time.monotonic()) if deadline else None

    def post(events: Sequence[BoardStart | Play | AlertIn]) -> None:
        for e in events:
            body = e.model_dump(exclude_none=True)
            client.event(body, within(), key=None if keys is None else keys.event(body))
            sent[0] += 1

    def keep(board: RecognisedBoard) -> None:
        if log_out is not None:
            write_atomic(log_out, json.dumps(board.log, indent=1))
        if client is not None:
            post(stream.update(board))

    result = run_bridge_pipeline(
        frames, read, geometry, info, every=every, inertia=inertia,
        on_frame=on_frame, on_trick=keep, on_finished=keep, stop=stop,
    )  # fmt: skip
    if result.stopped:
        deadline.append(time.monotonic() + STOP_FLUSH_S)
    keep(result.board)
    posted = all_sent = False
    if client is not None:
        post(stream.finish(result.board))
        if result.board.finished:
            key = None if keys is None else keys.deal_post()
            client.board(result.board.log, within(), key=key)
            posted = True
        all_sent = client.flush(within())
    alerts = tuple(
        f"revoke {a['seat']} trick {a['trick']}"
        + (", established" if a["established"] else "")
        + f": {a['reason']}"
        for a in result.board.alerts
    )
    return BridgeServiceResult(
        result.board, result.frames, result.read, alerts, result.stopped, result.finished_at,
        events=sent[0], board_posted=posted, all_sent=all_sent or client is None,
    )  # fmt: skip
