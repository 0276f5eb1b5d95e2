"""The live pages in Debian's chromium (Playwright): a deal posted through the API shows up on the
open page without a reload. The docs' pictures of the pages come from test_event_day.py."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import need
from tests.scoreboard.conftest import ADMIN_HEADERS, LiveServer
from tests.scoreboard.deals import DEALER_SWEEP, DEFENDERS_WIN, FILLER
from tests.scoreboard.test_looks import look, two_unread

pytestmark = [pytest.mark.browser, pytest.mark.slow]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser() -> Iterator[Any]:
    need(shutil.which(CHROMIUM) is not None, f"{CHROMIUM} (Debian chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def new_page(browser: Any, viewport: dict[str, int]) -> Any:
    """A page whose tests may wait on JavaScript predicates: Playwright evaluates those as strings,
    which the pages' content security policy forbids (``test_pages_run_under_their_csp`` checks the
    pages under it)."""
    return browser.new_context(viewport=viewport, bypass_csp=True).new_page()


@pytest.fixture
def server(sqlite_url: str) -> Iterator[LiveServer]:
    with LiveServer(sqlite_url) as s:
        yield s


def table(base: str, name: str) -> tuple[str, dict[str, str]]:
    r = httpx.post(f"{base}/api/tables", json={"name": name}, headers=ADMIN_HEADERS)
    assert r.status_code == 201
    return r.json()["id"], {"Authorization": f"Bearer {r.json()['token']}"}


def test_all_tables_page_updates_without_reload(server, browser):
    t1, h1 = table(server.url, "Table 1")
    table(server.url, "Table 2")
    page = new_page(browser, viewport={"width": 1280, "height": 720})
    page.goto(server.url + "/")
    card = page.locator(f"#table-{t1}")
    assert card.locator(".deals").inner_text() == "0"
    assert card.locator('.level[data-side="EW"]').inner_text() == "2"
    page.wait_for_function("document.getElementById('live-status').classList.contains('on')", timeout=10_000)
    page.evaluate("window.__notReloaded = true")

    r = httpx.post(
        f"{server.url}/api/tables/{t1}/deals", json=DEFENDERS_WIN, headers={**h1, "Idempotency-Key": "d1"}
    )
    assert r.status_code == 201
    # DEFENDERS_WIN: the defenders E/W take over, 2 -> 3, E deals next (worked out in deals.py).
    page.wait_for_function(f"document.querySelector('#table-{t1} .deals')?.innerText === '1'", timeout=10_000)
    card = page.locator(f"#table-{t1}")
    assert card.locator('.level[data-side="EW"]').inner_text() == "3"
    assert card.locator(".dealer").inner_text() == "E"
    assert card.locator(".points").inner_text() == "120"
    assert page.evaluate("window.__notReloaded") is True
    page.close()


def test_table_page_shows_the_current_trick(server, browser):
    t1, h1 = table(server.url, "Table 1")
    page = new_page(browser, viewport={"width": 1280, "height": 800})
    page.goto(f"{server.url}/tables/{t1}")
    page.wait_for_function("document.getElementById('live-status').classList.contains('on')", timeout=10_000)
    page.evaluate("window.__notReloaded = true")
    events = [{"type": "deal_start", "rules": "national-2deck", "level": "2", "trump": "S", "dealer": "S"}]
    events += [
        {"type": "play", "trick": 1, "seat": s, "cards": c}
        for s, c in DEALER_SWEEP["tricks"][FILLER]["plays"][:3]
    ]
    for i, ev in enumerate(events):
        r = httpx.post(
            f"{server.url}/api/tables/{t1}/events", json=ev, headers={**h1, "Idempotency-Key": f"e{i}"}
        )
        assert r.status_code == 201, r.text
    page.wait_for_function("document.querySelectorAll('.trick-table .play').length === 3", timeout=10_000)
    assert page.locator(".trick-table .seat-N").inner_text().replace("\n", " ") == "N A♥"
    assert page.evaluate("window.__notReloaded") is True
    page.close()


def test_referee_records_a_ruling_from_the_queue(server, browser):
    r = httpx.post(
        f"{server.url}/api/users",
        json={"username": "ref", "password": "correct horse"},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 201
    t1, h1 = table(server.url, "Table 1")
    page = new_page(browser, viewport={"width": 420, "height": 900})  # a phone
    page.goto(f"{server.url}/referee")
    assert "/login" in page.url
    page.fill("input[name=username]", "ref")
    page.fill("input[name=password]", "correct horse")
    page.click("form.login button")
    page.wait_for_url(f"{server.url}/referee")
    page.wait_for_function("document.getElementById('live-status').classList.contains('on')", timeout=10_000)
    assert page.locator(".alert-item").count() == 0
    # DEALER_SWEEP: E revoked at trick 1 (proven at trick 2); D = 0, NS 2 -> 5.
    r = httpx.post(
        f"{server.url}/api/tables/{t1}/deals", json=DEALER_SWEEP, headers={**h1, "Idempotency-Key": "d"}
    )
    assert r.status_code == 201
    page.wait_for_selector(".alert-item", timeout=10_000)
    item = page.locator(".alert-item").first
    assert "revoke" in item.inner_text() and "seat E" in item.inner_text()
    item.locator("input[name=points]").fill("40")
    item.locator("input[name=levels]").fill("0")
    item.locator("select[name=deals_next]").select_option("false")
    item.locator("button[data-action=ruling-preview]").click()  # first what it does, then confirm
    effect = item.locator(".confirm .effect")
    effect.wait_for(state="visible", timeout=10_000)
    assert "Defenders 0 → -40" in effect.inner_text()
    assert "Levels NS 5 · EW 2 → NS 6 · EW 2" in effect.inner_text()
    assert httpx.get(f"{server.url}/api/tables/{t1}").json()["levels"] == {"NS": "5", "EW": "2"}  # not yet
    item.locator("button[data-action=ruling]").click()
    page.wait_for_function("document.querySelectorAll('.alert-item').length === 0", timeout=10_000)
    # 40 points against defender E: D = -40, dealer side up 3 + ceil(40 / 40) = 4: NS 2 -> 6.
    state = httpx.get(f"{server.url}/api/tables/{t1}").json()
    assert state["levels"] == {"NS": "6", "EW": "2"}
    page.close()


def test_referee_corrects_a_play_on_the_deal_page(server, browser):
    r = httpx.post(
        f"{server.url}/api/users",
        json={"username": "ref", "password": "correct horse"},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 201
    t1, h1 = table(server.url, "Table 1")
    r = httpx.post(
        f"{server.url}/api/tables/{t1}/deals", json=DEFENDERS_WIN, headers={**h1, "Idempotency-Key": "d"}
    )
    assert r.status_code == 201
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{server.url}/login?next=/tables/{t1}/deals/1")
    page.fill("input[name=username]", "ref")
    page.fill("input[name=password]", "correct horse")
    page.click("form.login button")
    page.wait_for_url(f"{server.url}/tables/{t1}/deals/1")
    # W's 8D at hand-written trick 2 was really KC, and the bottom's KC was 8D: W's discard is
    # worth 10 to E's trick, the bottom 10 less: D = 10 + 50 x 2 = 110 (deals.py: D was 120).
    bottom = list(DEFENDERS_WIN["bottom"])
    bottom[bottom.index("KC")] = "8D"
    page.fill("form.correction input[name=trick]", str(FILLER + 2))
    page.select_option("form.correction select[name=seat]", "W")
    page.fill("form.correction input[name=cards]", "KC")
    page.fill("form.correction input[name=bottom]", " ".join(bottom))
    page.fill("form.correction input[name=reason]", "8D was KC")
    page.click("form.correction button")
    page.wait_for_function(
        "document.querySelector('h1 small')?.innerText.includes('version 2')", timeout=10_000
    )
    assert "8D was KC" in page.inner_text("body")
    deal = httpx.get(f"{server.url}/api/tables/{t1}/deals/1").json()
    assert deal["current_version"] == 2
    assert deal["versions"][1]["author"] == "ref"
    assert deal["versions"][1]["result"]["defender_total"] == 110
    page.close()


def test_referee_names_the_cards_of_a_look_in_the_queue(server, browser):
    r = httpx.post(
        f"{server.url}/api/users",
        json={"username": "ref", "password": "correct horse"},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 201
    t1, h1 = table(server.url, "Table 1")
    # test_looks.two_unread: W's 8D at the last trick and N's filler KC seen but not named.
    log, kc_trick = two_unread()
    r = httpx.post(
        f"{server.url}/api/tables/{t1}/events",
        json=look(FILLER + 2, reasoning="trick 25: an unknown card"),
        headers={**h1, "Idempotency-Key": "l"},
    )
    assert r.status_code == 201
    r = httpx.post(f"{server.url}/api/tables/{t1}/deals", json=log, headers={**h1, "Idempotency-Key": "d"})
    assert r.status_code == 201
    page = new_page(browser, viewport={"width": 420, "height": 900})
    page.goto(f"{server.url}/login?next=/referee")
    page.fill("input[name=username]", "ref")
    page.fill("input[name=password]", "correct horse")
    page.click("form.login button")
    page.wait_for_url(f"{server.url}/referee")
    form = page.locator(".alert-item.kind-look form.look")
    assert form.locator(".evidence img").count() == 1  # the crop beside the plays to name
    w_row = form.locator(f'.play-fix[data-orig="{FILLER + 2} W ??"]')
    assert w_row.locator("input[name=cards]").input_value() == "??"
    w_row.locator("input[name=cards]").fill("8D")
    form.locator(f'.play-fix[data-orig="{kc_trick} N ??"] input[name=cards]').fill("KC")
    form.locator("input[name=reason]").fill("read from the picture")
    form.locator("button[data-action=resolve]").click()
    page.wait_for_function("document.querySelectorAll('.alert-item').length === 0", timeout=10_000)
    deal = httpx.get(f"{server.url}/api/tables/{t1}/deals/1").json()
    assert deal["current_version"] == 2
    assert deal["versions"][1]["result"]["defender_total"] == 120  # deals.py: D = 60 x 2
    page.close()


def test_pages_run_under_their_csp(server, browser):
    """Every page works under its own content security policy: no violation, live updates on."""
    t1, _ = table(server.url, "Table 1")
    httpx.post(
        f"{server.url}/api/users",
        json={"username": "ref", "password": "correct horse"},
        headers=ADMIN_HEADERS,
    )
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(server.url + "/login?next=/referee")
    page.fill("input[name=username]", "ref")
    page.fill("input[name=password]", "correct horse")
    page.click("form button")
    page.wait_for_url("**/referee")
    for path in ("/", f"/tables/{t1}", "/referee"):
        response = page.goto(server.url + path)
        assert response is not None and "default-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_selector("#live-status.on", timeout=10_000)
    assert violations == []


def test_event_pages_follow_results_publishing_and_the_clock(server, browser):
    """The standings (projector) and pairings (phone) pages of an event update without a reload:
    a result entered moves the standings, a round published appears, a started clock runs, and
    the last-deal call shows on the table's page. Round 1: A v B at table 1 (bound to a scoreboard
    table), C v D. After A 7-5 B and C 5-5 D: A 2 points first, B 0 last (zhku)."""
    t1, _ = table(server.url, "Table 1")
    event = {
        "format": "swiss",
        "scoring": "zhku",
        "seed": 42,
        "entries": [{"id": x, "name": f"Team {x}", "unit": x} for x in "ABCD"],
        "rounds": [
            {
                "round": 1,
                "matches": [{"table": 1, "home": "A", "away": "B"}, {"table": 2, "home": "C", "away": "D"}],
            }
        ],
    }
    r = httpx.post(f"{server.url}/api/tourneys", json={"event": event, "tables": [t1]}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    api = f"{server.url}/api/tourneys/{tid}"
    violations: list[str] = []
    screen = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    screen.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    screen.goto(f"{server.url}/tourneys/{tid}/standings")
    phone = new_page(browser, viewport={"width": 390, "height": 800})
    phone.goto(f"{server.url}/tourneys/{tid}/pairings")
    table_page = new_page(browser, viewport={"width": 1280, "height": 800})
    table_page.goto(f"{server.url}/tables/{t1}")
    for page in (screen, phone, table_page):
        page.wait_for_selector("#live-status.on", timeout=10_000)
    phone.evaluate("window.__notReloaded = true")
    assert screen.locator("h1").inner_text().startswith("Standings")
    assert "after round 0" in screen.locator("h1").inner_text()

    for no, levels in ((1, ("7", "5")), (2, ("5", "5"))):
        r = httpx.put(
            f"{api}/rounds/1/matches/{no}/result",
            json={"result": {"home_level": levels[0], "away_level": levels[1]}},
            headers=ADMIN_HEADERS,
        )
        assert r.status_code == 200, r.text
    screen.wait_for_selector("h1:has-text('after round 1')", timeout=10_000)  # CSP: no evaluated JS
    first, last = screen.locator("tbody tr").first, screen.locator("tbody tr").last
    assert (first.get_attribute("data-entry"), first.locator(".points").inner_text()) == ("A", "2")
    assert (last.get_attribute("data-entry"), last.locator(".points").inner_text()) == ("B", "0")
    phone.wait_for_function(
        "document.querySelector('tr[data-table=\"1\"] .result')?.innerText === '7–5'", timeout=10_000
    )

    assert httpx.post(f"{api}/rounds", headers=ADMIN_HEADERS).status_code == 201
    assert phone.locator("h1").inner_text().startswith("Round 1")  # a draft is not shown
    assert httpx.post(f"{api}/rounds/2/publish", headers=ADMIN_HEADERS).status_code == 200
    phone.wait_for_function("document.querySelector('h1')?.innerText.startsWith('Round 2')", timeout=10_000)
    assert phone.locator(".clock .empty").inner_text() == "clock not started"

    assert httpx.post(f"{api}/rounds/2/clock", json={}, headers=ADMIN_HEADERS).status_code == 200
    phone.wait_for_selector(".clock.clock-running", timeout=10_000)
    # 90 minutes, counting down: 89:5x or 90:00 a moment after the start
    assert phone.locator(".clock-left").inner_text()[:3] in ("90:", "89:")
    assert phone.evaluate("window.__notReloaded") is True
    # the call: move the service's clock past minute 75 and let it tick
    import datetime as dt

    service = server.app.state.tourneys
    later = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=76)
    service.clock = lambda: later
    service.tick(tid)  # (or the app's own ticker, every 5 s)
    phone.wait_for_selector(".clock.clock-called", timeout=10_000)
    table_page.wait_for_selector("#table-call", timeout=10_000)
    assert "the deal in play is the round's last" in table_page.locator("#table-call").inner_text()
    assert violations == []
    for page in (screen, phone, table_page):
        page.close()


def test_bridge_pages_follow_the_play_and_the_event(server, browser):
    """A bridge table's page shows the trick in play as it is laid; the pair event's page shows its
    standings change as the tables post their boards, without a reload."""
    from tests.scoreboard.test_bridge_event import claimed

    made = [
        httpx.post(
            f"{server.url}/api/tables", json={"name": f"B{i}", "plays": "bridge"}, headers=ADMIN_HEADERS
        )
        for i in (1, 2, 3)
    ]
    ids = [m.json()["id"] for m in made]
    heads = [{"Authorization": f"Bearer {m.json()['token']}"} for m in made]
    r = httpx.post(
        f"{server.url}/api/bridge/events",
        json={"name": "Club pairs", "kind": "pairs", "tables": ids, "boards_per_round": 1},
        headers=ADMIN_HEADERS,
    )
    eid = r.json()["id"]
    r = httpx.post(f"{server.url}/api/bridge/events/{eid}/rounds", json={"round": 1}, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text

    page = new_page(browser, viewport={"width": 1280, "height": 800})
    page.goto(f"{server.url}/tables/{ids[0]}")
    page.wait_for_function("document.getElementById('live-status').classList.contains('on')", timeout=10_000)
    page.evaluate("window.__notReloaded = true")
    events = [{"type": "board_start", "board": 1, "contract": "4S", "declarer": "S"}]
    events += [{"type": "play", "trick": 1, "seat": s, "cards": [c]} for s, c in (("W", "KD"), ("N", "2D"))]
    for i, ev in enumerate(events):
        r = httpx.post(f"{server.url}/api/events", json=ev, headers={**heads[0], "Idempotency-Key": f"e{i}"})
        assert r.status_code == 201, r.text
    page.wait_for_function("document.querySelectorAll('.trick-table .play').length === 2", timeout=10_000)
    assert page.locator(".trick-table .seat-W").inner_text().replace("\n", " ") == "W K♦"
    assert page.locator(".contract").first.inner_text() == "4S S"
    assert page.evaluate("window.__notReloaded") is True

    page.goto(f"{server.url}/bridge/{eid}")
    page.wait_for_function("document.getElementById('live-status').classList.contains('on')", timeout=10_000)
    page.evaluate("window.__notReloaded = true")
    # round 1: table 1 plays board 1 (4S= +420), table 3 board 3 (down 2 doubled, E-W vulnerable: +500)
    for k, (i, log) in enumerate(((0, claimed(1, "4S", "S", 10)), (2, claimed(3, "4HX", "W", 8)))):
        r = httpx.post(f"{server.url}/api/boards", json=log, headers={**heads[i], "Idempotency-Key": f"b{k}"})
        assert r.status_code == 201, r.text
    # one result per board so far: every pair that played has 0 of a top of 0
    page.wait_for_function("document.querySelector('[data-pair=\"NS3\"]') !== null", timeout=10_000)
    assert page.locator('[data-pair="NS1"] .points').inner_text() == "0"
    # round 2: table 3 plays board 1 (4S+1, +450), which beats table 1's +420: N-S pair 3 has 2
    r = httpx.post(f"{server.url}/api/bridge/events/{eid}/rounds", json={"round": 2}, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    r = httpx.post(
        f"{server.url}/api/boards",
        json=claimed(1, "4S", "S", 11),
        headers={**heads[2], "Idempotency-Key": "b3"},
    )
    assert r.status_code == 201, r.text
    page.wait_for_function(
        "document.querySelector('[data-pair=\"NS3\"] .points')?.innerText === '2'", timeout=10_000
    )
    assert page.locator('[data-pair="NS1"] .points').inner_text() == "0"
    assert page.evaluate("window.__notReloaded") is True
    page.close()


def test_a_gomoku_table_shows_its_board_and_move_clock(server, browser):
    """The stones appear numbered as they are laid; the move clock counts from the last stone, turns
    amber 5 s before the limit (25 s of 30) and red past it."""
    made = httpx.post(
        f"{server.url}/api/tables", json={"name": "G1", "plays": "gomoku"}, headers=ADMIN_HEADERS
    )
    tid, head = made.json()["id"], {"Authorization": f"Bearer {made.json()['token']}"}
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{server.url}/tables/{tid}")
    page.wait_for_function("document.getElementById('live-status').classList.contains('on')", timeout=10_000)
    page.evaluate("window.__notReloaded = true")
    events = [{"type": "game_start"}] + [
        {"type": "stone", "move": i + 1, "colour": "BW"[i % 2], "point": p, "seconds": 3.0}
        for i, p in enumerate(("h8", "h9", "i8"))
    ]
    for i, ev in enumerate(events):
        r = httpx.post(f"{server.url}/api/events", json=ev, headers={**head, "Idempotency-Key": f"e{i}"})
        assert r.status_code == 201, r.text
    page.wait_for_function("document.querySelectorAll('.gomoku-board .stone').length === 3", timeout=10_000)
    assert page.locator('.gomoku-board .stone[data-move="3"] text').text_content() == "3"
    assert page.locator(".to-move").first.inner_text() == "White"
    page.wait_for_function("/^\\d+ s$/.test(document.querySelector('.clock').innerText)", timeout=5_000)
    # the clock as if the last stone had been laid 26 s ago, then 31 s ago (set again at each poll:
    # a fragment swapped in after a late event brings the server's time back)
    for ago, cls in ((26, "warn"), (31, "over")):
        page.wait_for_function(
            "(() => { const el = document.querySelector('.clock');"
            f" el.dataset.clockFrom = new Date(Date.now() - {ago} * 1000).toISOString();"
            f" return el.classList.contains('{cls}'); }})()",
            timeout=10_000,
        )
    assert page.evaluate("window.__notReloaded") is True
    page.close()
