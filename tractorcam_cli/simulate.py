"""``tractorcam simulate``: play a deal with four bots and print how the engine scores it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from engine import RULE_SET_IDS, score_log
from engine.sim import simulate_deal


def simulate(
    rules: Annotated[str, typer.Option(help=f"Rule set: {', '.join(RULE_SET_IDS)}.")] = "national-2deck",
    seed: Annotated[int, typer.Option(help="Random seed (same seed, same deal).")] = 1,
    inject_revoke: Annotated[bool, typer.Option(help="Make one follow a revoke (藏张).")] = False,
    inject_failed_throw: Annotated[bool, typer.Option(help="Make one lead a throw that fails.")] = False,
    log_out: Annotated[Path | None, typer.Option(help="Also write the deal log (JSON) here.")] = None,
) -> None:
    """Simulate a whole deal and print its tricks, points, bottom and outcome."""
    if rules not in RULE_SET_IDS:
        typer.echo(f"error: unknown rule set {rules!r} (known: {', '.join(RULE_SET_IDS)})", err=True)
        raise typer.Exit(2)
    log = simulate_deal(rules, seed, inject_revoke=inject_revoke, inject_failed_throw=inject_failed_throw)
    result = score_log(log)
    if log_out is not None:
        log_out.write_text(json.dumps(log, ensure_ascii=False, indent=1), encoding="utf-8")
    echo = typer.echo
    echo(f"{rules}: level {log['level']}, trump {log['trump']}, dealer {log['dealer']} (seed {seed})")
    echo(f"bottom: {' '.join(log['bottom'])}")
    for trick, res in zip(log["tricks"], result["tricks"], strict=True):
        played = "  ".join(f"{seat}:{' '.join(cards)}" for seat, cards in trick["plays"])
        pts = f"  +{res['points']}" if res["points"] else ""
        echo(f"{res['trick']:>3}. {played}  → {res['winner']}{pts}")
    bottom = result["bottom"]
    echo(
        f"defenders captured {result['captured']}; bottom {bottom['points']} × {bottom['multiplier']} "
        f"= {bottom['awarded']}; defenders' total {result['defender_total']}"
    )
    out = result["outcome"]
    who = "dealer side" if out["side"] == "dealer" else "defenders"
    echo(f"outcome: {who} up {out['levels']} level(s); next dealer {out['next_dealer']}")
    for v in result["violations"]:
        echo(
            f"violation: {v['kind']} by {v['seat']} at trick {v['trick']} (proven at trick {v['proven_at']}): "
            f"{v['reason']}"
        )
    if not result["violations"]:
        echo("violations: none")


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
