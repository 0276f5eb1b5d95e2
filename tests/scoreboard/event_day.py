"""An event day driven as people live it, for the browser tests: an organiser and a referee in
Debian's chromium on the organiser screens (never the API), and tables that post what their
cameras saw (the only API calls: a table's token, as ``tractorcam run`` posts them).

:class:`Screens` wraps one logged-in page; :class:`Pi` is one table's camera service posting
simulated deals that follow its game (the level of the dealer's side, the next dealer), as the
table service's own match tracking does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from engine.cards import parse_rank
from engine.seats import Seat
from engine.sim import simulate_deal

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 15_000


def add_user(db_url: str, name: str, role: str, password: str = "correct horse") -> None:
    """A login made as the docs say: ``tractorcam scoreboard add-user NAME --role ROLE``."""
    from tractorcam_cli.main import app

    result = CliRunner().invoke(
        app, ["scoreboard", "add-user", name, "--role", role, "--db", db_url], input=password + "\n"
    )
    assert result.exit_code == 0, result.output


class Screens:
    """A person at the screens: every step through a page's links, fields and buttons."""

    def __init__(self, page: Any, base: str) -> None:
        self.page = page
        self.base = base

    def go(self, path: str) -> None:
        self.page.goto(self.base + path)

    def login(self, name: str, password: str = "correct horse", then: str = "/tourneys") -> None:
        self.go(f"/login?next={then}")
        self.page.fill("form.login input[name=username]", name)
        self.page.fill("form.login input[name=password]", password)
        self.page.click("form.login button")
        self.page.wait_for_url(f"**{then}")

    def flash(self) -> str:
        """The message the last form left (its text), or ''."""
        box = self.page.locator("#flash")
        return box.inner_text() if box.count() else ""

    def ok(self) -> str:
        text = self.flash()
        assert self.page.locator("#flash.ok").count() == 1, f"the form was refused: {text}"
        return text

    def refused(self) -> str:
        assert self.page.locator("#flash.error").count() == 1, f"the form was not refused: {self.flash()}"
        return self.flash()

    # --- tables -------------------------------------------------------------------------------

    def create_table(self, name: str, rules: str) -> tuple[str, str]:
        """A scoreboard table made on the set-up page: its id and the token shown once."""
        self.go("/tables/manage")
        form = self.page.locator("form.create-table")
        form.locator("input[name=name]").fill(name)
        form.locator("select[name=rules]").select_option(rules)
        form.locator("button").click()
        secret = self.page.locator("#token code.secret")
        secret.wait_for(timeout=TIMEOUT)
        return str(secret.get_attribute("data-table")), secret.inner_text().strip()

    # --- the event ------------------------------------------------------------------------------

    def new_event(
        self,
        *,
        name: str,
        fmt: str,
        scoring: str,
        entries: list[str],
        tables: list[str],
        rounds: int | None = None,
        seed: int = 7,
    ) -> str:
        """An event made on the new-event page; its id (from the manage page it leads to)."""
        self.go("/tourneys/new")
        form = self.page.locator("#new-event")
        form.locator("input[name=name]").fill(name)
        form.locator("select[name=format]").select_option(fmt)
        form.locator("select[name=scoring]").select_option(scoring)
        if rounds is not None:
            form.locator("input[name=rounds_planned]").fill(str(rounds))
        form.locator("input[name=seed]").fill(str(seed))
        for table_name in tables:
            form.locator("label.check", has_text=table_name).locator("input").check()
        form.locator("textarea[name=entries]").fill("\n".join(entries))
        form.locator("button").click()
        self.page.wait_for_url(re.compile(r".*/tourneys/[0-9a-f]{32}/manage$"), timeout=TIMEOUT)
        self.ok()
        return str(self.page.url.rsplit("/", 2)[-2])

    def pair(self, event: str) -> int:
        """The next round paired from the event's page: its number (the draft's page opens)."""
        self.go(f"/tourneys/{event}/manage")
        self.page.click("form.pair button")
        self.page.wait_for_url(re.compile(r".*/rounds/\d+/manage$"), timeout=TIMEOUT)
        self.ok()
        return int(self.page.url.rsplit("/", 2)[-2])

    def round_page(self, event: str, number: int) -> None:
        self.go(f"/tourneys/{event}/rounds/{number}/manage")

    def pairing(self) -> list[tuple[int, str, str]]:
        """The round on its page: (table, home name, away name) per match."""
        out = []
        for match in self.page.locator("article.match[data-table]").all():
            names = match.locator("header b.entry").all_inner_texts()
            out.append((int(str(match.get_attribute("data-table"))), names[0], names[1]))
        return out

    def override(self, rows: list[tuple[int, str, str]]) -> str:
        """The pairing changed on the round's page (table, home name, away name per row)."""
        form = self.page.locator("form.override")
        self.page.locator("#override summary").click() if not form.is_visible() else None
        for k, (table_no, home, away) in enumerate(rows, start=1):
            form.locator(f"input[name=table_{k}]").fill(str(table_no))
            form.locator(f"select[name=home_{k}]").select_option(label=home)
            form.locator(f"select[name=away_{k}]").select_option(label=away)
        form.locator("button").click()
        self.page.wait_for_load_state()
        return self.ok()

    def publish(self) -> str:
        self.page.click("form.publish button")
        self.page.wait_for_load_state()
        return self.ok()

    def clock(self, action: str) -> str:
        self.page.click(f"form.clock-actions button[value={action}]")
        self.page.wait_for_load_state()
        return self.ok()

    def close(self, table_no: int, reason: str = "") -> str:
        """Close a match at time from the round's page; the message it leaves (ok or refused)."""
        match = self.page.locator(f"article.match[data-table='{table_no}']")
        form = match.locator("form.close")
        form.locator("input[name=reason]").fill(reason)
        form.locator("button").click()
        self.page.wait_for_load_state()
        return self.flash()

    def enter_result(
        self, table_no: int, boards: list[tuple[str, str]], *, winner: str | None = None, reason: str = ""
    ) -> str:
        match = self.page.locator(f"article.match[data-table='{table_no}']")
        details = match.locator("details.enter")
        if details.get_attribute("open") is None:
            details.locator("summary").click()
        form = match.locator("form.result-form")
        for k, (home, away) in enumerate(boards, start=1):
            form.locator(f"select[name=home_level_{k}]").select_option(home)
            form.locator(f"select[name=away_level_{k}]").select_option(away)
            if winner is not None:
                form.locator(f"select[name=winner_{k}]").select_option(winner)
        form.locator("input[name=reason]").fill(reason)
        form.locator("button").click()
        self.page.wait_for_load_state()
        return self.flash()

    def results(self) -> dict[int, str]:
        """Each match's result as its round page shows it (table number -> text)."""
        out = {}
        for match in self.page.locator("article.match[data-table]").all():
            text = match.locator(".result-text")
            out[int(str(match.get_attribute("data-table")))] = text.inner_text() if text.count() else ""
        return out

    def standings(self, event: str) -> list[tuple[str, int]]:
        """The standings page: (entry id, points) in rank order."""
        self.go(f"/tourneys/{event}/standings")
        return [
            (str(row.get_attribute("data-entry")), int(row.locator(".points").inner_text()))
            for row in self.page.locator("table.standings tbody tr").all()
        ]

    def wider_than_viewport(self) -> int:
        """How far the page is wider than its viewport, in pixels (0: no sideways scrolling)."""
        return int(self.page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


class Pi:
    """One table's camera service: posts finished deals that follow the table's game."""

    def __init__(self, base: str, table_id: str, token: str, rules: str) -> None:
        self.base = base
        self.id = table_id
        self.token = token
        self.rules = rules
        self.posted = 0

    def headers(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", "Idempotency-Key": key}

    def state(self) -> dict[str, Any]:
        """What the table's service learns at start-up (``GET /api/table``)."""
        r = httpx.get(f"{self.base}/api/table", headers={"Authorization": f"Bearer {self.token}"})
        assert r.status_code == 200, r.text
        return r.json()  # type: ignore[no-any-return]

    def next_log(self, seed: int, *, revoke: bool = False, follow: Pi | None = None) -> dict[str, Any]:
        """A simulated deal dealt by the next dealer at the dealing side's level (of ``follow``'s
        game when given: a deal played at that table)."""
        state = (follow or self).state()
        dealer = Seat[state["dealer"]] if state["dealer"] else None
        level = None
        if dealer is not None:
            level = parse_rank(state["levels"][dealer.side])
        elif state["levels"]["NS"] == state["levels"]["EW"]:
            level = parse_rank(state["levels"]["NS"])
        log = simulate_deal(self.rules, seed, inject_revoke=revoke, level=level, dealer=dealer)
        return {k: v for k, v in log.items() if k not in ("hands", "injected")}

    def post(self, log: dict[str, Any]) -> dict[str, Any]:
        self.posted += 1
        r = httpx.post(
            f"{self.base}/api/deals",
            json=log,
            headers=self.headers(f"{self.id[:6]}-deal-{self.posted}"),
            timeout=30,
        )
        assert r.status_code == 201, r.text
        return r.json()  # type: ignore[no-any-return]

    def play(self, seed: int, **kw: Any) -> dict[str, Any]:
        return self.post(self.next_log(seed, **kw))

    def event(self, event: dict[str, Any], key: str) -> None:
        """One edge event (a play, a look, …), as the table service posts it."""
        r = httpx.post(f"{self.base}/api/events", json=event, headers=self.headers(f"{self.id[:6]}-{key}"))
        assert r.status_code == 201, r.text

    def start_deal(self, seed: int) -> dict[str, Any]:
        """A deal begun (its start and the first play seen), not finished: returns its whole log."""
        log = self.next_log(seed)
        start = {k: log[k] for k in ("rules", "level", "trump", "dealer")}
        events = [{"type": "deal_start", **start}]
        seat, cards = log["tricks"][0]["plays"][0][:2]
        events.append({"type": "play", "trick": 1, "seat": seat, "cards": cards})
        for k, event in enumerate(events):
            self.event(event, f"ev-{seed}-{k}")
        return log


def cli_standings(event_file: str) -> dict[str, Any]:
    """``tractorcam tourney standings FILE``, run as the docs say, on the exported event file."""
    path = Path(event_file)
    out = subprocess.run(
        [sys.executable, "-m", "tractorcam_cli", "tourney", "standings", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]
