"""Portable Bridge Notation 2.1 (PBN) for bridge logs (``shared/spec/games.md``, "Results"):
:func:`to_pbn` writes logs as PBN games in export format, :func:`read_pbn` reads PBN games back.

What a log holds maps onto PBN's tags and its play section:

* ``Board``, ``Dealer`` and ``Vulnerable`` (the dealer follows the board, law 2; a PBN dealer that
  does not is refused);
* ``Contract`` (``Pass`` for a board passed out) and ``Declarer``;
* ``Deal``: each hand whose 13 cards the log shows, dummy's as laid included, and ``-`` for the rest
  (PBN's unknown hand). Read back, dummy's hand, when the deal gives it, is dummy as laid;
* ``Play``: one trick a line, its cards in the order of the seats from the opening leader, ``-``
  for a card not yet played, ``*`` at the end;
* ``Result``: declarer's tricks after law 64's transfers, the board's result (``?`` while play goes
  on). Play that stops before trick 13 with a result is a claim; read back, the claim is what makes
  that result with the play's transfers.

PBN names every card, so a log with an unknown card (``??``, ``A?``, ``?S``) is refused. The other
mandatory tags of the export format (event, site, date, players, scoring) are not in a log and are
written ``?``.

>>> log = parse_bridge_log({"game": "bridge", "board": 3, "contract": "1NT", "declarer": "S",
...     "tricks": [{"plays": [["W", "2C"], ["N", "3C"], ["E", "AC"], ["S", "10C"]]}]})
>>> text = to_pbn([log])
>>> print(text[text.index("[Play"):])
[Play "W"]
C2 C3 CA CT
*
<BLANKLINE>
>>> read_pbn(text) == [log]
True
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from bridge.board import board_dealer, board_vulnerability
from bridge.log import TRICKS, BridgeLog, BridgeLogError, clockwise, parse_bridge_log
from bridge.play import score_log, winner_of
from engine.cards import RANK_VALUE, SUITS, Card, UnknownCard, card_code, parse_card
from engine.seats import Seat
from engine.text import shown

#: The tags every game of an export-format file has, in their order (PBN 2.1, 3.1).
MANDATORY: Final = (
    "Event", "Site", "Date", "Board", "West", "North", "East", "South",
    "Dealer", "Vulnerable", "Deal", "Scoring", "Declarer", "Contract", "Result",
)  # fmt: skip

#: PBN's vulnerability names → the log's (PBN 2.1, 3.4.10).
VULNERABLE: Final = {
    "None": "none",
    "Love": "none",
    "-": "none",
    "NS": "NS",
    "EW": "EW",
    "All": "both",
    "Both": "both",
}
#: The log's → the name written.
VULNERABLE_NAME: Final = {"none": "None", "NS": "NS", "EW": "EW", "both": "All"}

#: Ranks as PBN writes them, high to low (a ten is ``T``).
PBN_RANKS: Final = "AKQJT98765432"

_CARD = re.compile(r"^([SHDC])(10|[2-9TJQKA])$", re.IGNORECASE)
_TAG = re.compile(r'\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]')


class PbnError(ValueError):
    """A PBN file that cannot be read as bridge logs, or a log PBN cannot hold; the message is one
    line naming what is wrong (and which game of the file)."""


def _round(seat: Seat) -> list[Seat]:
    """The four seats in playing order from ``seat``."""
    out = [seat]
    for _ in range(3):
        out.append(clockwise(out[-1]))
    return out


def _pbn_card(card: Card) -> str:
    """``AS`` → ``SA``, ``10H`` → ``HT``."""
    suit = card.suit or ""
    return suit + PBN_RANKS[14 - card.rank]


def _parse_card(token: str) -> Card | None:
    """A PBN card (``SA``, ``HT``, ``h10``), or None for anything else."""
    m = _CARD.match(token)
    if m is None:
        return None
    rank = "10" if m.group(2).upper() in ("T", "10") else m.group(2).upper()
    return Card(card_code(RANK_VALUE[rank], m.group(1).upper()))


def _named(log: BridgeLog) -> None:
    """Refuse a log with a card it does not name: PBN has none."""
    for k, trick in enumerate(log.tricks, 1):
        for i, play in enumerate(trick, 1):
            if isinstance(play.card, UnknownCard):
                raise PbnError(
                    f"board {log.board}, trick {k}, play {i}: {play.card} is not named, and PBN names every card"
                )
    for i, card in enumerate(log.dummy or (), 1):
        if isinstance(card, UnknownCard):
            raise PbnError(
                f"board {log.board}, dummy, card {i}: {card} is not named, and PBN names every card"
            )


def hands(log: BridgeLog) -> dict[Seat, frozenset[Card]]:
    """The cards the log shows each seat held: those it played, and dummy's as laid."""
    held: dict[Seat, set[Card]] = {seat: set() for seat in Seat}
    for trick in log.tricks:
        for play in trick:
            if isinstance(play.card, Card):
                held[play.seat].add(play.card)
    if log.dummy_seat is not None and log.dummy:
        held[log.dummy_seat] |= {c for c in log.dummy if isinstance(c, Card)}
    return {seat: frozenset(cards) for seat, cards in held.items()}


def _hand_text(cards: frozenset[Card]) -> str:
    if len(cards) != TRICKS:
        return "-"
    return ".".join(
        "".join(
            PBN_RANKS[14 - c.rank]
            for c in sorted((c for c in cards if c.suit == suit), key=lambda c: -c.rank)
        )
        for suit in SUITS
    )


def _deal(log: BridgeLog) -> str:
    known = hands(log)
    return f"{log.dealer.name}:" + " ".join(_hand_text(known[s]) for s in _round(log.dealer))


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _game(log: BridgeLog) -> str:
    _named(log)
    declarer = log.declarer
    result = "?"
    if log.finished:
        scored = score_log(log.to_json())
        result = "" if declarer is None else str(scored["adjusted_tricks"])
    tags = {
        "Event": "?", "Site": "?", "Date": "????.??.??", "Board": str(log.board),
        "West": "?", "North": "?", "East": "?", "South": "?",
        "Dealer": log.dealer.name, "Vulnerable": VULNERABLE_NAME[log.vulnerable], "Deal": _deal(log),
        "Scoring": "?", "Declarer": "" if declarer is None else declarer.name,
        "Contract": "Pass" if log.contract.passed_out else str(log.contract), "Result": result,
    }  # fmt: skip
    lines = [f'[{name} "{_quoted(tags[name])}"]' for name in MANDATORY]
    if declarer is not None:
        lead = clockwise(declarer)
        order = _round(lead)
        lines.append(f'[Play "{lead.name}"]')
        for trick in log.tricks:
            by_seat = {p.seat: p.card for p in trick}
            lines.append(
                " ".join(_pbn_card(c) if isinstance(c := by_seat.get(s), Card) else "-" for s in order)
            )
        lines.append("*")
    return "\n".join(lines) + "\n"


def to_pbn(logs: Sequence[BridgeLog]) -> str:
    """PBN 2.1 in export format: one game per log, an empty line between games; raises
    :class:`PbnError` for a log with an unknown card."""
    return "% PBN 2.1\n% EXPORT\n%Creator: tractorcam\n" + "\n".join(_game(log) for log in logs)


# --- reading ---------------------------------------------------------------------------------------


def _strip_comments(text: str) -> Iterator[tuple[int, str]]:
    """The file's lines (numbered from 1) with ``{...}`` and ``;`` comments and ``%`` lines taken
    out; a comment spanning lines leaves them empty of it."""
    in_brace = False
    for number, raw in enumerate(text.splitlines(), 1):
        if not in_brace and raw.startswith("%"):
            yield number, ""
            continue
        out = []
        i = 0
        in_quote = False
        while i < len(raw):
            ch = raw[i]
            if in_brace:
                if ch == "}":
                    in_brace = False
            elif in_quote:
                out.append(ch)
                if ch == "\\" and i + 1 < len(raw):
                    out.append(raw[i + 1])
                    i += 1
                elif ch == '"':
                    in_quote = False
            elif ch == "{":
                in_brace = True
            elif ch == ";":
                break
            else:
                if ch == '"':
                    in_quote = True
                out.append(ch)
            i += 1
        yield number, "".join(out)
    if in_brace:
        raise PbnError("a comment opened with { is never closed")


def _games(text: str) -> list[tuple[int, dict[str, str], dict[str, list[str]]]]:
    """Each game of the file: the line it starts on, its tags (name → value) and the tokens of its
    sections (tag name → tokens after it). Games are parted by empty lines; a tag value ``#`` is
    the previous game's."""
    games: list[tuple[int, dict[str, str], dict[str, list[str]]]] = []
    tags: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    start = 0
    current: str | None = None
    previous: dict[str, str] = {}

    def close() -> None:
        nonlocal tags, sections, current, previous
        if tags:
            games.append((start, tags, sections))
            previous = tags
        tags, sections, current = {}, {}, None

    for number, line in _strip_comments(text):
        if not line.strip():
            close()
            continue
        rest = line
        while rest.strip():
            m = _TAG.search(rest)
            before = rest if m is None else rest[: m.start()]
            if before.strip():
                if current is None:
                    raise PbnError(
                        f"line {number}: {shown(before.strip()[:40])} is neither a tag nor in a section"
                    )
                sections[current].extend(before.split())
            if m is None:
                break
            if not tags:
                start = number
            name, value = m.group(1), re.sub(r"\\(.)", r"\1", m.group(2))
            if value == "#":
                if name not in previous:
                    raise PbnError(f'line {number}: [{name} "#"] repeats a tag no earlier game has')
                value = previous[name]
            if name not in tags:  # a tag given twice: the first counts (PBN 2.1, 3.3)
                tags[name] = value
                current = name
                sections[name] = []
            else:
                current = None
            rest = rest[m.end() :]
    close()
    return games


def _seat(value: str, what: str) -> Seat:
    try:
        return Seat[value.strip().upper()]
    except KeyError:
        raise PbnError(f"{what} is N, E, S or W, not {shown(value)}") from None


def _play_rows(tokens: list[str], where: str) -> list[list[Card | None]]:
    """The play section's cards four to a trick (None for ``-``), to its ``*``; notes (``=1=``),
    glyphs (``$12``) and a card's ``!`` or ``?`` left out."""
    cells: list[Card | None] = []
    for token in tokens:
        if token == "*":
            break
        if re.fullmatch(r"=\d+=|\$\d+|[!?]+", token):
            continue
        if token in ("-", "+"):
            cells.append(None)
            continue
        card = _parse_card(token.rstrip("!?"))
        if card is None:
            raise PbnError(f"{where}: {shown(token[:20])} is not a card (e.g. SA, HT, D2) or -")
        cells.append(card)
    if len(cells) % 4:
        raise PbnError(f"{where}: {len(cells)} cards and dashes; a trick is a line of four")
    return [cells[i : i + 4] for i in range(0, len(cells), 4)]


def _tricks(
    rows: list[list[Card | None]], lead: Seat, trump: str | None, where: str
) -> list[list[list[str]]]:
    """The rows (columns from the opening leader ``lead``) as the log's tricks, in play order, each
    trick led by the last one's winner; a dash ends the play."""
    columns = _round(lead)
    out: list[list[list[str]]] = []
    leader = lead
    for k, row in enumerate(rows, 1):
        by_seat = dict(zip(columns, row, strict=True))
        order = _round(leader)
        plays = [[s.name, str(c)] for s in order if (c := by_seat[s]) is not None]
        if any(by_seat[s] is None for s in order[: len(plays)]):
            raise PbnError(f"{where}, trick {k}: a card follows a seat that has not played")
        if len(plays) < 4:
            if any(c is not None for r in rows[k:] for c in r):
                raise PbnError(f"{where}, trick {k}: the trick is not complete, and a later trick has cards")
            if plays:
                out.append(plays)
            break
        out.append(plays)
        cards = [by_seat[s] for s in order]
        leader = order[winner_of([c.code for c in cards if c is not None], trump)]
    return out


def _log(start: int, tags: Mapping[str, str], sections: Mapping[str, list[str]]) -> BridgeLog:
    where = f"the game at line {start}"
    if "Board" not in tags or not tags["Board"].strip().isdigit():
        raise PbnError(f'{where}: a board number is needed ([Board "7"]), not {shown(tags.get("Board"))}')
    board = int(tags["Board"])
    where = f"board {board} (line {start})"
    data: dict[str, Any] = {"game": "bridge", "board": board}
    if not 1 <= board <= 999:
        raise PbnError(f"{where}: a board is numbered 1 to 999")
    dealer = tags.get("Dealer", "").strip()
    if dealer not in ("", "?") and _seat(dealer, f"{where}: the dealer") is not board_dealer(board):
        raise PbnError(
            f"{where}: the dealer is {dealer}, but law 2 has {board_dealer(board).name} deal board {board}, "
            "and a bridge log takes its dealer from the board"
        )
    vul = tags.get("Vulnerable", "").strip()
    if vul not in ("", "?"):
        if vul not in VULNERABLE:
            raise PbnError(f"{where}: vulnerability is one of None, NS, EW, All, not {shown(vul)}")
        data["vulnerable"] = VULNERABLE[vul]
    contract = tags.get("Contract", "").strip()
    if contract in ("", "?"):
        raise PbnError(f'{where}: a contract is needed ([Contract "4HX"] or "Pass")')
    data["contract"] = contract
    passed = contract.upper() == "PASS"
    if not passed:
        data["declarer"] = _seat(tags.get("Declarer", ""), f"{where}: declarer").name
    try:
        first = parse_bridge_log(data)
    except BridgeLogError as exc:
        raise PbnError(f"{where}: {exc}") from None
    if data.get("vulnerable") == board_vulnerability(board):
        del data["vulnerable"]  # the board's own: the log leaves it to the board
    deal = _read_deal(tags.get("Deal", ""), where)
    if "Play" in tags and not passed and first.declarer is not None:
        lead = _seat(tags["Play"], f"{where}: the opening leader")
        if lead is not clockwise(first.declarer):
            raise PbnError(
                f"{where}: the play starts with {lead.name}, but declarer {first.declarer.name}'s "
                f"left-hand opponent, {clockwise(first.declarer).name}, leads"
            )
        rows = _play_rows(sections.get("Play", []), f"{where}, play")
        data["tricks"] = [{"plays": t} for t in _tricks(rows, lead, first.trump, f"{where}, play")]
    if deal is not None and first.dummy_seat is not None and len(deal.get(first.dummy_seat, ())) == TRICKS:
        data["dummy"] = [str(c) for c in sorted(deal[first.dummy_seat], key=lambda c: c.code)]
    if deal is not None:
        owner = {card: seat for seat, cards in deal.items() for card in cards}
        for k, trick in enumerate(data.get("tricks", []), 1):
            for seat_name, name in trick["plays"]:
                card, seat = parse_card(name), Seat[seat_name]
                if card in owner and owner[card] is not seat:
                    raise PbnError(
                        f"{where}, trick {k}: {seat_name} plays {name}, which the deal gives to {owner[card].name}"
                    )
                if len(deal.get(seat, ())) == TRICKS and card not in deal[seat]:
                    raise PbnError(
                        f"{where}, trick {k}: {seat_name} plays {name}, not in {seat_name}'s hand of the deal"
                    )
    result = tags.get("Result", "").strip()
    played = len(data.get("tricks", []))
    complete = played == TRICKS and len(data["tricks"][-1]["plays"]) == 4
    if passed:
        data["finished"] = result != "?"
    elif result not in ("", "?"):
        if not result.isdigit() or int(result) > TRICKS:
            raise PbnError(f"{where}: the result is declarer's tricks, 0 to 13, not {shown(result)}")
        data["finished"] = True
        if not complete:
            data["claim"] = {"declarer_tricks": int(result), "after_trick": played}
        _settle(data, int(result), where)
    return _parsed(data, where)


def _read_deal(text: str, where: str) -> dict[Seat, frozenset[Card]] | None:
    """The Deal tag's hands (those given, whole or in part; ``-`` or ``...`` is a hand not known), or
    None without one."""
    text = text.strip()
    if text in ("", "?"):
        return None
    if len(text) < 2 or text[1] != ":":
        raise PbnError(f'{where}: a deal is written like "N:AKQ.. ... ... ...", not {shown(text[:30])}')
    seat = _seat(text[0], f"{where}: the deal's first hand")
    parts = text[2:].split()
    if len(parts) != 4:
        raise PbnError(f"{where}: a deal gives four hands, not {len(parts)}")
    out: dict[Seat, frozenset[Card]] = {}
    for part in parts:
        cards = _hand(part, seat, where)
        for other, held in out.items():
            if cards & held:
                raise PbnError(f"{where}: the deal gives {min(cards & held)} to {other.name} and {seat.name}")
        if cards:
            out[seat] = cards
        seat = clockwise(seat)
    return out


def _hand(part: str, seat: Seat, where: str) -> frozenset[Card]:
    """One hand of a deal (``AK.QJ2.T9.8765``; nothing for ``-``)."""
    if part == "-":
        return frozenset()
    suits = part.split(".")
    if len(suits) != 4:
        raise PbnError(f"{where}: a hand is spades.hearts.diamonds.clubs, not {shown(part)}")
    cards: list[Card] = []
    for suit, ranks in zip(SUITS, suits, strict=True):
        for r in ranks.upper():
            if r not in PBN_RANKS:
                raise PbnError(f"{where}: {shown(r)} is not a rank, in the deal's {seat.name} hand")
            cards.append(Card(card_code(RANK_VALUE["10" if r == "T" else r], suit)))
    if len(set(cards)) != len(cards) or len(cards) > TRICKS:
        raise PbnError(f"{where}: the deal's {seat.name} hand has {len(cards)} cards, or one twice")
    return frozenset(cards)


def _settle(data: dict[str, Any], result: int, where: str) -> None:
    """Check a finished game's result against its play: with a claim, the claim is set so the play's
    transfers (law 64) make ``result``; without one, the play must make it."""
    scored = _scored(data, where)
    if "claim" in data:
        shift = scored["adjusted_tricks"] - data["claim"]["declarer_tricks"]
        if shift:
            data["claim"]["declarer_tricks"] = result - shift
            scored = _scored(data, where)
    if scored["adjusted_tricks"] != result:
        raise PbnError(
            f"{where}: the result says declarer took {result} tricks, but the play gives "
            f"{scored['adjusted_tricks']}" + (" after law 64's transfers" if scored["violations"] else "")
        )


def _scored(data: dict[str, Any], where: str) -> dict[str, Any]:
    try:
        return score_log(data)
    except BridgeLogError as exc:
        raise PbnError(f"{where}: {exc}") from None


def _parsed(data: dict[str, Any], where: str) -> BridgeLog:
    try:
        log = parse_bridge_log(data)
        score_log(data)  # the play's leaders checked
    except BridgeLogError as exc:
        raise PbnError(f"{where}: {exc}") from None
    return log


def read_pbn(text: str) -> list[BridgeLog]:
    """Every game of a PBN file as a bridge log, in the file's order; raises :class:`PbnError`."""
    games = _games(text)
    if not games:
        raise PbnError('no game in the file (a game starts with tags such as [Board "1"])')
    return [_log(*game) for game in games]
