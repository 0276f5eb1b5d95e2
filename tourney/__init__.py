"""The tournament core (issue 43): the event file, standings by each scoring's rules, and the next
round's pairing (Swiss by maximum-weight matching, round robin by the circle method, knockout from
group places). Pure: the standard library, networkx and the engine's rank vocabulary; no I/O but
:func:`load_event` reading text it is given.

>>> event = load_event('{"format": "swiss", "scoring": "zhku", "seed": 3, "entries": '
...                    '[{"id": "A", "unit": "u"}, {"id": "B", "unit": "u"}, {"id": "C", "unit": "v"}]}')
>>> pairing = pair_next(event)
>>> [(m.home, m.away) for m in pairing.matches][0] in {("A", "C"), ("C", "A"), ("B", "C"), ("C", "B")}
True
>>> pairing.relaxed
()
"""

from tourney.event import Bye, Entry, Event, EventFileError, Match, Result, Round, load_event, parse_event
from tourney.pairing import Pairing, PairingError, Relaxed, pair_next
from tourney.standings import Standings, standings

__all__ = [
    "Bye",
    "Entry",
    "Event",
    "EventFileError",
    "Match",
    "Pairing",
    "PairingError",
    "Relaxed",
    "Result",
    "Round",
    "Standings",
    "load_event",
    "pair_next",
    "parse_event",
    "standings",
]
