"""The project's import graph: no import cycle, and the table service never needs the server or the
training stack (issue 40: a Raspberry Pi installs only ``.[edge]``).

The graph is read from the source (every ``.py`` of the project's top-level packages, parsed with
:mod:`ast`). An import at module level (outside any function, and not under ``if TYPE_CHECKING:``)
runs when the module is imported; one inside a function runs only when that function is called
(the command line keeps its heavy imports there) and is *deferred*.

* No cycle between modules through module-level imports, nor through any import that runs
  (module-level, inside a function, or in an ``if __name__ == "__main__":`` block): only imports
  for type checking (``if TYPE_CHECKING:``, which never run) may point back.
* No cycle between top-level packages through any import, deferred ones included (the edge imports
  the contract, the scoreboard imports the contract, neither imports the other).
* The edge side (``edge_app`` but ``edge_app.demo``, which starts a local scoreboard by design, and
  ``vision``, ``calibration``, ``engine``, ``contract``) imports neither the scoreboard nor the
  training code, nor the web stack, at all; torch and ultralytics only deferred (the optional
  ``--backend ultralytics`` plug-in, which needs the ``train`` extra), never at module level.
* ``tractorcam run`` really runs with the server and training packages made unimportable.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "engine",
    "bridge",
    "gomoku",
    "games",
    "contract",
    "vision",
    "calibration",
    "models",
    "edge_app",
    "scoreboard",
    "tractorcam_cli",
    "tourney",
)
EDGE_SIDE = ("edge_app", "vision", "calibration", "engine", "bridge", "gomoku", "games", "contract")
#: Edge modules allowed to import anything, deferred: ``tractorcam demo`` renders a deal and starts
#: a local scoreboard.
EDGE_EXEMPT = ("edge_app.demo",)
#: Never imported by the edge side, deferred or not (top-level names, project packages included).
EDGE_NEVER = {"scoreboard", "models", "fastapi", "starlette", "sqlalchemy", "alembic", "uvicorn", "jinja2"}
#: Imported by the edge side only inside a function (an optional plug-in).
EDGE_DEFERRED_ONLY = {"torch", "torchvision", "ultralytics"}
#: What the contract may import: itself, the standard library, pydantic and the engine (whose
#: card and seat vocabulary it shares; the engine is stdlib-only).
CONTRACT_ALLOWED = {"contract", "engine", "pydantic", "typing_extensions"}
#: What the tournament core may import: itself, the standard library, networkx, the engine (its
#: rank vocabulary) and bridge's rules (IMPs and match points); its command line adds typer.
TOURNEY_ALLOWED = {"tourney", "engine", "bridge", "networkx"}
#: What the games' seam may import: itself, the standard library and the games' rules packages.
GAMES_ALLOWED = {"games", "engine", "bridge", "gomoku"}
#: What a game's rules package may import: itself, the standard library and the engine (the card and
#: seat vocabulary).
BRIDGE_ALLOWED = {"bridge", "engine"}
#: Gomoku's rules need no cards: the standard library only.
GOMOKU_ALLOWED = {"gomoku"}


@dataclass
class Graph:
    modules: dict[str, Path]
    eager: nx.DiGraph = field(default_factory=nx.DiGraph)  # module-level imports between project modules
    deferred: nx.DiGraph = field(default_factory=nx.DiGraph)  # the others
    #: every import that runs (module-level, in a function, in a ``__main__`` block): all but those
    #: made only for type checking
    runs: nx.DiGraph = field(default_factory=nx.DiGraph)
    #: module → {(imported name, deferred)} for every import, project or not (absolute names)
    names: dict[str, set[tuple[str, bool]]] = field(default_factory=dict)

    def project(self, name: str) -> str | None:
        """The project module an absolute import name loads (its longest known prefix)."""
        while name and name not in self.modules:
            name = name.rpartition(".")[0]
        return name or None


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def build_graph() -> Graph:
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    graph = Graph(modules)
    for module, path in modules.items():
        graph.eager.add_node(module)
        graph.deferred.add_node(module)
        names: set[tuple[str, bool]] = set()
        running: set[str] = set()
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]

        def visit(
            node: ast.AST,
            deferred: bool,
            typing_only: bool = False,
            package: str = package,
            names: set[tuple[str, bool]] = names,
            running: set[str] = running,
        ) -> None:
            for child in ast.iter_child_nodes(node):
                inner = deferred or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                if isinstance(child, ast.If) and _is_type_checking(child):
                    for sub in child.body:
                        visit(ast.Module(body=[sub], type_ignores=[]), True, True)
                    for sub in child.orelse:
                        visit(ast.Module(body=[sub], type_ignores=[]), deferred, typing_only)
                    continue
                found: list[str] = []
                if isinstance(child, ast.Import):
                    found = [alias.name for alias in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        up = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                        base = ".".join(up + ([base] if base else []))
                    # ``from package import module`` loads the submodule
                    found = [base, *(f"{base}.{alias.name}" for alias in child.names)]
                names.update((name, deferred) for name in found)
                if not typing_only:
                    running.update(found)
                visit(child, inner, typing_only)

        visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
        graph.names[module] = names
        for name, deferred in names:
            target = graph.project(name)
            if target is not None and target != module:
                (graph.deferred if deferred else graph.eager).add_edge(module, target)
        graph.runs.add_node(module)
        for name in running:
            target = graph.project(name)
            if target is not None and target != module:
                graph.runs.add_edge(module, target)
    return graph


@pytest.fixture(scope="module")
def graph() -> Graph:
    return build_graph()


def test_the_graph_is_read(graph: Graph) -> None:
    """A sanity check that the parser sees imports at all, of every kind."""
    assert graph.eager.has_edge("edge_app.service", "edge_app.events")
    assert graph.eager.has_edge("edge_app.events", "contract.events")
    assert graph.eager.has_edge("scoreboard.api", "contract.events")
    assert graph.deferred.has_edge("edge_app.demo", "scoreboard.app")
    assert ("typer", False) in graph.names["edge_app.cli"]
    # an import for type checking only never runs; one in a function does
    assert graph.deferred.has_edge("scoreboard.service", "scoreboard.tourney_service")
    assert not graph.runs.has_edge("scoreboard.service", "scoreboard.tourney_service")
    assert graph.runs.has_edge("edge_app.demo", "scoreboard.app")


def test_no_module_level_import_cycle(graph: Graph) -> None:
    cycles = list(nx.simple_cycles(graph.eager))
    assert cycles == [], f"import cycles (module-level imports): {cycles}"


def test_no_import_cycle_through_any_import_that_runs(graph: Graph) -> None:
    """Module-level imports, imports inside functions and ``__main__`` blocks together: no module
    reaches itself. (An import only for type checking never runs, so it may point back.)"""
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph.runs) if len(c) > 1]
    assert cycles == [], f"import cycles (imports that run, lazy ones included): {cycles}"


def test_no_cycle_between_packages(graph: Graph) -> None:
    """Top-level packages, every import counted (deferred ones too)."""
    packages = nx.DiGraph()
    for a, b in [*graph.eager.edges, *graph.deferred.edges]:
        pa, pb = a.split(".")[0], b.split(".")[0]
        if pa != pb:
            packages.add_edge(pa, pb)
            packages.edges[pa, pb].setdefault("via", []).append(f"{a} -> {b}")
    cycles = list(nx.simple_cycles(packages))
    detail = [[packages.edges[c[i], c[(i + 1) % len(c)]]["via"] for i in range(len(c))] for c in cycles]
    assert cycles == [], f"package cycles: {detail}"


def _edge_modules(graph: Graph) -> list[str]:
    return [m for m in graph.modules if m.split(".")[0] in EDGE_SIDE and m not in EDGE_EXEMPT]


def test_edge_side_never_imports_server_or_training(graph: Graph) -> None:
    bad = []
    for module in _edge_modules(graph):
        for name, deferred in sorted(graph.names[module]):
            top = name.split(".")[0]
            if top in EDGE_NEVER or (top in EDGE_DEFERRED_ONLY and not deferred):
                bad.append(f"{module} imports {name}{' (in a function)' if deferred else ''}")
    assert bad == []


def test_edge_side_module_level_closure(graph: Graph) -> None:
    """What importing any edge module loads, through every module-level import, stays edge-side."""
    for module in _edge_modules(graph):
        reached = nx.descendants(graph.eager, module) | {module}
        outside = sorted(m for m in reached if m.split(".")[0] not in EDGE_SIDE)
        assert outside == [], f"importing {module} loads {outside}"
        heavy = sorted(
            f"{m}: {name}"
            for m in reached
            for name, deferred in graph.names[m]
            if not deferred and name.split(".")[0] in EDGE_NEVER | EDGE_DEFERRED_ONLY
        )
        assert heavy == [], f"importing {module} loads {heavy}"


def test_the_contract_needs_pydantic_only(graph: Graph) -> None:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for module in (m for m in graph.modules if m.split(".")[0] == "contract"):
        others = {n for n, _ in graph.names[module] if n.split(".")[0] not in stdlib | CONTRACT_ALLOWED}
        assert others == set(), f"{module} imports {others}"


def _imports_only(graph: Graph, package: str, allowed: set[str], must: str) -> None:
    """Every module of ``package`` (``must`` among them) imports the standard library and ``allowed``
    only, deferred imports included."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    modules = [m for m in graph.modules if m.split(".")[0] == package]
    assert must in modules
    for module in modules:
        others = {n for n, _ in graph.names[module] if n.split(".")[0] not in stdlib | allowed}
        assert others == set(), f"{module} imports {others}"


def test_the_games_seam_is_pure(graph: Graph) -> None:
    """The seam every game plugs into knows the games' rules only: no web stack, camera or model."""
    _imports_only(graph, "games", GAMES_ALLOWED, "games")


def test_the_bridge_rules_are_pure(graph: Graph) -> None:
    """Bridge's rules, like the engine: the standard library and the engine's vocabulary only."""
    _imports_only(graph, "bridge", BRIDGE_ALLOWED, "bridge.play")


def test_the_gomoku_rules_are_pure(graph: Graph) -> None:
    """Gomoku's rules: the standard library only."""
    _imports_only(graph, "gomoku", GOMOKU_ALLOWED, "gomoku.rules")


def test_the_tourney_core_is_pure(graph: Graph) -> None:
    """No web stack, database, pydantic or camera code in the tournament core; its command line
    loads nothing but typer (and the standard library) until a command runs."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    modules = [m for m in graph.modules if m.split(".")[0] == "tourney"]
    assert "tourney.pairing" in modules
    for module in modules:
        allowed = stdlib | TOURNEY_ALLOWED | ({"typer"} if module == "tourney.cli" else set())
        others = {n for n, _ in graph.names[module] if n.split(".")[0] not in allowed}
        assert others == set(), f"{module} imports {others}"
    eager = {n.split(".")[0] for n, deferred in graph.names["tourney.cli"] if not deferred}
    assert eager <= stdlib | {"typer"}, eager


#: Run in a fresh interpreter: the packages an edge install lacks raise ImportError, then the
#: ``tractorcam`` command line runs with the arguments given.
BLOCKED_RUN = """
import importlib.abc, sys
BLOCKED = {blocked!r}
PROJECT = {project!r}  # project packages: only these modules of them may load

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in BLOCKED or (top in PROJECT and name not in PROJECT[top]):
            raise ModuleNotFoundError(f"{{name}} is not in an edge install", name=name)
        return None

sys.meta_path.insert(0, Block())
from tractorcam_cli.main import main
sys.argv = ["tractorcam", *sys.argv[1:]]
try:
    main()
finally:
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print("LOADED", loaded, file=sys.stderr)
"""


class FakeScoreboard(BaseHTTPRequestHandler):
    """Answers ``GET /api/table`` with a table and every post with 201; keeps the posts."""

    posts: list[tuple[str, str | None, Any]]

    def do_GET(self) -> None:  # noqa: N802 (the http.server name)
        self._answer(200, {"id": "t1", "name": "T1"} if self.path == "/api/table" else {})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
        self.posts.append((self.path, self.headers.get("Idempotency-Key"), body))
        self._answer(201, {})

    def _answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def fake_scoreboard() -> Iterator[tuple[str, list[tuple[str, str | None, Any]]]]:
    posts: list[tuple[str, str | None, Any]] = []
    handler = type("Handler", (FakeScoreboard,), {"posts": posts})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", posts
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_run_works_without_server_and_training_packages(
    tmp_path: Path, fake_scoreboard: tuple[str, list[tuple[str, str | None, Any]]]
) -> None:
    """``tractorcam run --scoreboard`` reads a folder of frames, posts to a (stand-in) scoreboard
    and writes its log, in an interpreter where torch, ultralytics, FastAPI, SQLAlchemy, Alembic and
    the scoreboard's and training code's modules cannot be imported (the command line's own
    ``register`` modules of those packages excepted: they import only typer)."""
    import cv2
    import numpy as np

    from calibration.table import TableGeometry, default_zones
    from contract.events import Health
    from contract.paths import EVENTS_PATH

    url, posts = fake_scoreboard
    table = tmp_path / "table.json"
    zones, centre = default_zones(900.0, 900.0)
    eye = np.eye(3).tolist()
    TableGeometry(
        image_width=900,
        image_height=900,
        image_to_table=eye,
        table_to_image=eye,
        table_width_mm=900.0,
        table_height_mm=900.0,
        zones=zones,
        centre=centre,
    ).save(table)
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(2):
        cv2.imwrite(str(frames / f"{i:03d}.png"), np.full((900, 900, 3), (40, 110, 40), np.uint8))
    log_out = tmp_path / "read.json"
    blocked = sorted((EDGE_NEVER | EDGE_DEFERRED_ONLY) - {"scoreboard"})  # the lab is in no install
    project = {"scoreboard": ["scoreboard", "scoreboard.cli"]}
    args = [
        *("run", "--source", str(frames), "--table", str(table), "--log-out", str(log_out)),
        *("--level", "5", "--trump", "H", "--dealer", "S", "--scoreboard", url, "--token", "edge-check"),
    ]
    code = BLOCKED_RUN.format(blocked=blocked, project=project)
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "LOADED []" in done.stderr
    assert json.loads(log_out.read_text()) is not None
    # what went out is the contract's: a health report, under an idempotency key
    health = [
        body for path, key, body in posts if path == EVENTS_PATH and key and body.get("type") == "health"
    ]
    assert health, posts
    Health.model_validate(health[0])


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["scoreboard", "serve", "--db", "sqlite:///{tmp}/s.db"], "server"),
        (["demo", "--tricks", "1", "--dir", "{tmp}/demo"], "lab"),  # it films its deal first
        (["export", "models/weights/best.pt", "--out", "{tmp}/best.onnx"], "lab"),
        (["synth", "deal", "--out", "{tmp}/film"], "lab"),
        (["enroll", "learn", "{tmp}"], "lab"),
    ],
)
@pytest.mark.slow
def test_a_command_of_another_extra_says_so_in_one_line(tmp_path: Path, args: list[str], extra: str) -> None:
    """In an edge install (the lab, torch, ultralytics, FastAPI, SQLAlchemy, Alembic, uvicorn absent),
    a command that needs them exits 1 with one line naming the extra to install (the first one it
    misses), or saying that the lab runs from a source checkout, not a traceback."""
    blocked = sorted((EDGE_NEVER | EDGE_DEFERRED_ONLY) - {"scoreboard"})
    code = BLOCKED_RUN.format(blocked=blocked, project={})
    argv = [a.format(tmp=tmp_path) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    lines = [line for line in done.stderr.splitlines() if not line.startswith("LOADED")]
    assert done.returncode == 1, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: this command needs the "), lines
    if extra == "lab":
        assert "needs the lab" in lines[0] and "bash scripts/setup" in lines[0], lines
    else:
        assert f"pip install 'tractorcam[{extra}]'" in lines[0]


def test_the_lab_placeholders_name_every_lab_command() -> None:
    """Where the lab is absent the command line still lists its commands (each saying so): the same
    names the lab registers."""
    import typer

    from models import cli as models_cli
    from models.synth import cli as synth_cli
    from tractorcam_cli.main import LAB_COMMANDS

    app = typer.Typer()
    models_cli.register(app)
    synth_cli.register(app)
    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert names == set(LAB_COMMANDS)
