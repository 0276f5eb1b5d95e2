"""Issue 75's bars: whole events run from the organiser screens alone, in Debian's chromium. The
organiser and the referee use only pages (logins made with ``tractorcam scoreboard add-user``, as
the docs say); the only API calls are what the tables' camera services post (and reads to check).

* An 8-team Swiss of 3 rounds on 4 tables (seed 001's zhku scoring), Chinese names, two teams of one
  unit: a round's pairing overridden, a revoke ruled by a referee (the ruling's effect shown before it
  is confirmed), a deal posted under the wrong table's token and moved, a match that will not close
  while its deal is in play. The standings at the end equal ``tractorcam tourney standings`` on the
  exported event file, and no later round changed a closed round's result.
* A team event with more matches than tables (the warning shown; those results entered by hand).
* Seed 004's round robin in groups and its knockout."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from tests.scoreboard.conftest import LiveServer
from tests.scoreboard.event_day import Pi, Screens, add_user, cli_standings
from tests.scoreboard.test_browser import browser, new_page  # noqa: F401  (the fixture)
from tests.scoreboard.test_looks import look

pytestmark = [pytest.mark.browser, pytest.mark.slow]
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
#: Eight teams; 红队 and 蓝队 come from one unit (数学系), which Swiss pairing keeps apart.
TEAMS = [
    ("红队", "数学系"),
    ("蓝队", "数学系"),
    ("金队", "物理系"),
    ("银队", "化学系"),
    ("青龙", "图书馆"),
    ("白虎", "后勤处"),
    ("朱雀", "外语系"),
    ("玄武", "体育部"),
]


@pytest.fixture
def day(sqlite_url: str) -> Iterator[tuple[LiveServer, str]]:
    with LiveServer(sqlite_url) as server:
        add_user(sqlite_url, "org", "admin")
        add_user(sqlite_url, "ref", "referee")
        yield server, sqlite_url


def _tables(org: Screens, base: str, n: int, rules: str) -> list[Pi]:
    pis = []
    for k in range(1, n + 1):
        table_id, token = org.create_table(f"T{k}", rules)
        pis.append(Pi(base, table_id, token, rules))
    return pis


def _swiss(org: Screens, base: str) -> tuple[list[Pi], str]:
    """Four tables made on the set-up page and the 8-team Swiss of :data:`TEAMS` on them (3 rounds)."""
    pis = _tables(org, base, 4, "zhku-3deck")
    event = org.new_event(
        name="2026 教工升级赛",
        fmt="swiss",
        scoring="zhku",
        entries=[f"{name} | {unit}" for name, unit in TEAMS],
        tables=["T1", "T2", "T3", "T4"],
        rounds=3,
    )
    return pis, event


def _event_file(base: str, event: str, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    r = httpx.get(f"{base}/api/tourneys/{event}/event.json")
    assert r.status_code == 200
    path = tmp_path / "event.json"
    path.write_text(r.text, encoding="utf-8")
    return r.json(), path


def test_a_swiss_day_from_the_organiser_screens(day, browser, tmp_path):  # noqa: F811
    server, _ = day
    base = server.url
    org = Screens(new_page(browser, DESKTOP), base)
    org.login("org")
    pis, event = _swiss(org, base)
    names = {f"E{k:02d}": name for k, (name, _) in enumerate(TEAMS, start=1)}
    ref = Screens(new_page(browser, PHONE), base)
    ref.login("ref", then="/referee")
    closed: dict[int, dict[int, str]] = {}

    for number in (1, 2, 3):
        assert org.pair(event) == number
        pairing = org.pairing()
        assert len(pairing) == 4 and all(h in names.values() and a in names.values() for _, h, a in pairing)
        if number == 2:  # the organiser swaps two away teams: the answer names what that breaks
            (t1, h1, a1), (t2, h2, a2) = pairing[:2]
            message = org.override([(t1, h1, a2), (t2, h2, a1), *pairing[2:]])
            assert message.startswith("Pairing changed.")
            assert org.pairing()[:2] == [(t1, h1, a2), (t2, h2, a1)]
        assert "published" in org.publish()
        assert org.page.locator("#round-status").inner_text() == "published"
        org.clock("start")
        # each table's page shows who plays there, in this round
        table_page = httpx.get(f"{base}/tables/{pis[0].id}").text
        home, away = org.pairing()[0][1:]
        assert f"round {number} · table 1" in table_page and home in table_page and away in table_page

        for k, pi in enumerate(pis):
            game = pi.state()["game"]
            assert (game["round"], game["table_no"], game["deals"]) == (number, k + 1, 0)
            assert pi.state()["levels"] == {"NS": "2", "EW": "2"}  # every round starts at 2-2
            pi.play(1000 * number + 10 * k)
            if number == 1 and k == 1:  # a revoke, proven by the engine: the referee rules
                pi.play(3, revoke=True)
            elif number == 2 and k == 3:  # T3's deal posted with T4's token, then moved by the referee
                misplaced = pi.post(pis[2].next_log(1000 * number + 99, follow=pis[2]))
                assert misplaced["outcome"] is not None
            else:
                pi.play(1000 * number + 10 * k + 1)

        if number == 1:
            ref.go("/referee")
            item = ref.page.locator(".alert-item.kind-revoke").first
            item.wait_for(timeout=15_000)
            header = item.locator("header").inner_text()
            assert "T2" in header and "round 1" in item.inner_text()
            item.locator("button[data-action=ruling-preview]").click()
            effect = item.locator(".confirm .effect")
            effect.wait_for(state="visible", timeout=15_000)
            assert "Levels NS" in effect.inner_text() and "→" in effect.inner_text()
            before = pis[1].state()["levels"]
            item.locator("button[data-action=ruling]").click()
            ref.page.wait_for_function(
                "document.querySelectorAll('.alert-item.kind-revoke').length === 0", timeout=15_000
            )
            assert pis[1].state()["levels"] != before  # zhku art. 18: the non-offenders go up a level
        if number == 2:
            t3_before = pis[2].state()["levels"]
            wrong = httpx.get(f"{base}/api/tables/{pis[3].id}/deals").json()["deals"][-1]["deal"]
            ref.go(f"/tables/{pis[3].id}/deals/{wrong}")
            form = ref.page.locator("form.place")
            option = form.locator(
                "select[name=to] option", has_text=f"T3 · game {number + 1} (round {number}"
            )
            form.locator("select[name=to]").select_option(str(option.get_attribute("value")))
            form.locator("input[name=reason]").fill("T4 的设备用了错的令牌")
            form.locator("button[value=move]").click()
            ref.page.wait_for_url(re.compile(rf".*/tables/{pis[2].id}/deals/\d+$"))
            assert ref.ok().startswith("Deal moved")
            assert "Moved from T4" in ref.page.inner_text(".deal-history")
            assert pis[2].state()["levels"] != t3_before  # the deal counts at T3 now
            assert pis[2].state()["game"]["deals"] == 3 and pis[3].state()["game"]["deals"] == 1
        if number == 3:  # a deal in play at T1: its match closes once that deal is finished
            log = pis[0].start_deal(3099)
            org.round_page(event, number)
            refusal = org.close(1)
            assert "a deal is in play at T1" in refusal and "Finish the deal in play first" in refusal
            pis[0].post(log)

        org.round_page(event, number)
        for table_no in (1, 2, 3, 4):
            assert "closed" in org.close(table_no), org.flash()
        closed[number] = org.results()
        assert all(re.fullmatch(r"(10|[2-9JQKA])–(10|[2-9JQKA])", x) for x in closed[number].values()), closed
        for pi in pis:  # the table's game is closed; the next round's starts it again at 2-2
            assert pi.state()["game"]["status"] == "closed"

    # the standings page equals `tractorcam tourney standings` on the exported event file
    data, path = _event_file(base, event, tmp_path)
    assert [e["name"] for e in data["entries"]] == [name for name, _ in TEAMS]
    expected = cli_standings(str(path))
    assert expected["after_round"] == 3
    assert org.standings(event) == [(row["id"], row["points"]) for row in expected["standings"]]
    # and no later round changed a closed round's result
    for number, results in closed.items():
        org.round_page(event, number)
        assert org.results() == results
    # the pairings CSV names the teams, with a byte order mark for spreadsheets
    csv = httpx.get(f"{base}/api/tourneys/{event}/rounds/3/pairings.csv")
    assert csv.content.startswith(b"\xef\xbb\xbf") and "红队" in csv.text


def test_a_team_event_with_more_matches_than_tables(day, browser, tmp_path):  # noqa: F811
    """Seed 001's team event: four teams of two pairs, so a match is two boards at two tables; the
    event has two tables, so each round's second match has none: the round's page says so, and its
    result is entered by hand, board by board. The first match closes from its two tables' games,
    which start again at 2-2 in round 2. After both rounds the standings equal the command line's
    on the exported file, and round 1's results are as closed. A second event given one of those
    tables is told the table also plays for the first."""
    server, _ = day
    base = server.url
    org = Screens(new_page(browser, DESKTOP), base)
    org.login("org")
    pis = _tables(org, base, 2, "zhku-3deck")
    teams = [
        ("红队", "数学系", "红一, 红二"),
        ("蓝队", "物理系", "蓝一, 蓝二"),
        ("金队", "化学系", "金一, 金二"),
        ("银队", "图书馆", "银一, 银二"),
    ]
    event = org.new_event(
        name="团体赛",
        fmt="swiss",
        scoring="zhku",
        entries=[f"{name} | {unit} | 0 | | {pairs}" for name, unit, pairs in teams],
        tables=["T1", "T2"],
        rounds=2,
    )
    assert org.pair(event) == 1
    warning = org.page.locator("#warnings").inner_text()
    assert "more matches than tables" in warning and "table number(s) 2" in warning
    org.publish()
    assert "more matches than tables" in org.page.locator("#warnings").inner_text()
    (no1, home1, away1), (no2, home2, away2) = org.pairing()
    # each board's table shows its pairs
    ns, ew = pis[1].state()["game"]["teams"]["NS"], pis[1].state()["game"]["teams"]["EW"]
    assert ns.startswith(home1) and ns.endswith("二") and ew.startswith(away1)
    for k, pi in enumerate(pis):
        pi.play(40 + k)
    assert "closed" in org.close(no1)
    message = org.enter_result(no2, [("5", "3"), ("4", "4")])
    assert "saved" in message, message
    results = org.results()
    assert re.fullmatch(r"(10|[2-9JQKA])–(10|[2-9JQKA]), (10|[2-9JQKA])–(10|[2-9JQKA])", results[no1]), (
        results
    )
    assert results[no2] == "5–3, 4–4"
    data, path = _event_file(base, event, tmp_path)
    expected = cli_standings(str(path))
    assert org.standings(event) == [(row["id"], row["points"]) for row in expected["standings"]]
    # team points add their boards: 5-3 and 4-4 give home2 2 + 1, away2 0 + 1
    points = dict(org.standings(event))
    ids = {name: f"E{k:02d}" for k, (name, _, _) in enumerate(teams, start=1)}
    assert (points[ids[home2]], points[ids[away2]]) == (3, 1)

    assert org.pair(event) == 2
    org.publish()
    assert "more matches than tables" in org.page.locator("#warnings").inner_text()
    assert [pi.state()["levels"] for pi in pis] == [{"NS": "2", "EW": "2"}] * 2  # round 2 starts at 2-2
    (no1, _, _), (no2, _, _) = org.pairing()
    for k, pi in enumerate(pis):
        pi.play(80 + k)
        pi.play(90 + k)
    assert "closed" in org.close(no1)
    assert "saved" in org.enter_result(no2, [("3", "6"), ("J", "9")])
    data, path = _event_file(base, event, tmp_path)
    expected = cli_standings(str(path))
    assert expected["after_round"] == 2
    assert org.standings(event) == [(row["id"], row["points"]) for row in expected["standings"]]
    org.round_page(event, 1)
    assert org.results() == results

    other = org.new_event(
        name="友谊赛", fmt="swiss", scoring="zhku", entries=["甲", "乙"], tables=["T1"], rounds=1
    )
    org.go(f"/tourneys/{other}/manage")
    assert (
        "T1" in org.page.locator("#warnings").inner_text()
        and "团体赛" in org.page.locator("#warnings").inner_text()
    )


def test_seed_004_groups_then_a_knockout(day, browser, tmp_path):  # noqa: F811
    """Seed 004's 2-deck challenge: two groups of four play a round robin (3 rounds), the top two of
    each go through to a knockout (semi-finals, then the final). Group matches at table 1 come from
    the table's game; the rest are entered by hand; a level knockout match names who goes through.
    The standings equal the command line's on the exported file, qualified entries first."""
    server, _ = day
    base = server.url
    org = Screens(new_page(browser, DESKTOP), base)
    org.login("org")
    (pi,) = _tables(org, base, 1, "challenge-2deck")
    groups = {"甲": ["东一", "东二", "东三", "东四"], "乙": ["西一", "西二", "西三", "西四"]}
    lines = [f"{name} | {name[0]}区 | 0 | {group}" for group, members in groups.items() for name in members]
    event = org.new_event(
        name="升级挑战赛", fmt="knockout", scoring="challenge", entries=lines, tables=["T1"]
    )
    order = [name for members in groups.values() for name in members]
    rank = {name: k for k, name in enumerate(order)}  # the better-listed entry wins a group match

    closed: dict[int, dict[int, str]] = {}
    for number in (1, 2, 3):
        assert org.pair(event) == number
        org.publish()
        for table_no, home, away in org.pairing():
            if table_no == 1:
                pi.play(500 + number)
                assert "closed" in org.close(1), org.flash()
            else:
                home_wins = rank[home] < rank[away]
                assert "saved" in org.enter_result(table_no, [("9", "6") if home_wins else ("6", "9")])
        closed[number] = org.results()
    assert org.pair(event) == 4  # the semi-finals
    org.publish()
    finalists = []
    for table_no, home, away in org.pairing():
        assert {home[0], away[0]} == {"东", "西"}  # each group's top two meet the other group's
        assert "saved" in org.enter_result(table_no, [("7", "7")], winner="home")
        finalists.append(home)
    assert org.pair(event) == 5
    org.publish()
    ((table_no, home, away),) = org.pairing()
    assert {home, away} == set(finalists)
    assert "saved" in org.enter_result(table_no, [("A", "K")])
    data, path = _event_file(base, event, tmp_path)
    expected = cli_standings(str(path))
    assert org.standings(event) == [(row["id"], row["points"]) for row in expected["standings"]]
    ids = {name: f"E{k:02d}" for k, name in enumerate(order, start=1)}
    assert expected["standings"][0]["id"] == ids[home]  # the final's winner ranks first
    for number, results in closed.items():  # the group rounds as they were closed
        org.round_page(event, number)
        assert org.results() == results
    org.go(f"/tourneys/{event}/manage")
    org.page.click("form.pair button")
    assert "the knockout is complete" in org.refused()


def event_scene(server: LiveServer, browser: Any) -> dict[str, str]:  # noqa: F811
    """A small event in full swing, for looking at every page: 8 teams with Chinese names on 4
    tables, round 1 closed, round 2 in play (a revoke waiting for a ruling, a deal held after its
    match closed, a deal in play), round 3 a draft. Returns each page's address by name."""
    base = server.url
    org = Screens(new_page(browser, DESKTOP), base)
    org.login("org")
    pis, event = _swiss(org, base)
    for number in (1, 2):
        org.pair(event)
        org.publish()
        org.clock("start")
        for k, pi in enumerate(pis):
            pi.play(100 * number + k)
            if number == 2 and k == 1:
                pi.play(3, revoke=True)
        if number == 1:
            for table_no in (1, 2, 3, 4):
                org.round_page(event, 1)
                org.close(table_no)
    log = pis[2].start_deal(777)
    seat = log["tricks"][0]["plays"][0][0]
    pis[2].event(look(1, seat, "trick 1: a card seen but not named (??)"), "look")  # a look, with its crop
    org.round_page(event, 2)
    org.close(4, reason="时间到")
    pis[3].play(901)  # after its match closed: held
    held = httpx.get(f"{base}/api/tables/{pis[3].id}/deals").json()["deals"][-1]["deal"]
    cup = org.new_event(
        name="新年杯",
        fmt="swiss",
        scoring="national",
        entries=["东队 | 一分会", "西队 | 一分会", "南队 | 二分会", "北队"],
        tables=[],
    )
    org.pair(cup)  # a draft to review: 东队 and 西队 share a unit
    org.page.close()
    return {
        "events": "/tourneys",
        "event-new": "/tourneys/new",
        "event-import": "/tourneys/import",
        "event-manage": f"/tourneys/{event}/manage",
        "round-draft": f"/tourneys/{cup}/rounds/1/manage",
        "round-published": f"/tourneys/{event}/rounds/2/manage",
        "round-closed": f"/tourneys/{event}/rounds/1/manage",
        "tables-manage": "/tables/manage",
        "all-tables": "/",
        "table": f"/tables/{pis[2].id}",
        "deal-held": f"/tables/{pis[3].id}/deals/{held}",
        "referee": "/referee",
        "pairings": f"/tourneys/{event}/pairings",
        "sheet": f"/tourneys/{event}/rounds/2/sheet",
        "standings": f"/tourneys/{event}/standings",
        "login": "/login",
    }


#: Each page of the scene at each size: what docs/img/event-day holds (tests/.../test_docs_...).
SIZES = {"desktop": DESKTOP, "phone": PHONE, "narrow": {"width": 360, "height": 780}}
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "img" / "event-day"


def draws_chinese(page: Any, selector: str) -> bool:
    """Whether the Chinese text of ``selector`` is drawn with real glyphs: its picture is compared
    with the same element whose Chinese characters are replaced by a code point no font has (drawn
    as the empty boxes a missing font leaves). Equal pictures: the Chinese was boxes too."""
    element = page.locator(selector).first
    drawn = element.screenshot()
    page.evaluate(
        "(s) => { const e = document.querySelector(s);"
        " e.textContent = e.textContent.replace(/[\\u3400-\\u9fff]/g, String.fromCodePoint(0x10FFFD)); }",
        selector,
    )
    boxes = element.screenshot()
    return drawn != boxes


@pytest.fixture
def scene(day, browser) -> dict[str, str]:  # noqa: F811
    server, _ = day
    return event_scene(server, browser)


def test_every_page_fits_a_phone_and_draws_chinese_names(day, scene, browser):  # noqa: F811
    """Every organiser, referee and live page of an event in full swing, at 1366, 390 and 360 px
    wide: none is wider than its screen (no sideways scrolling); the Chinese names are drawn."""
    server, _ = day
    for size, viewport in SIZES.items():
        person = Screens(new_page(browser, viewport), server.url)
        person.login("org")
        for name, path in scene.items():
            person.go(path)
            assert person.wider_than_viewport() == 0, (size, name)
        person.go("/tourneys")
        assert draws_chinese(person.page, ".event-name"), size
        person.page.close()


@pytest.mark.skipif(not os.environ.get("TRACTORCAM_DOCS_SCREENSHOT"), reason="docs screenshots on request")
def test_docs_screenshots_of_the_event_day(day, scene, browser):  # noqa: F811
    """Not a check: docs/img/event-day/<page>-<desktop|phone>.webp (WebP: a third of the JPEGs' size, the
    tree travels to a lent GPU), each page as the organiser sees
    it (the referee's queue as the referee does, with a ruling's effect shown before it is confirmed).
    Replaces the folder's pictures."""
    server, _ = day
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.*"):
        old.unlink()
    for size in ("desktop", "phone"):
        for who_in, pages in (("org", [p for p in scene if p != "referee"]), ("ref", ["referee"])):
            person = Screens(new_page(browser, SIZES[size]), server.url)
            person.login(who_in)
            for name in pages:
                person.go(scene[name])
                if name == "referee":
                    item = person.page.locator(".alert-item.kind-revoke").first
                    item.locator("button[data-action=ruling-preview]").click()
                    item.locator(".confirm .effect").wait_for(state="visible")
                    item.scroll_into_view_if_needed()
                picture = Image.open(io.BytesIO(person.page.screenshot(type="png")))
                picture.convert("RGB").save(SHOTS / f"{name}-{size}.webp", "WEBP", quality=45, method=6)
            person.page.close()
