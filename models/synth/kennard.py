"""Adrian Kennard's playing cards (CC0-1.0) as one SVG file per card, for the face tiles.

The art is a deck that no other source of this project draws (its own club and spade shapes). It
comes from the npm registry, where ``@letele/playing-cards`` (CC0-1.0) ships it as React
components (``dist/index.esm.js``, one ``SvgC10``-style component per card, written by Babel as
nested ``React.createElement`` calls). :func:`convert_bundle` runs that bundle under Node.js with a
tiny ``createElement`` that prints SVG markup, so every card becomes ``<out>/<name>.svg`` (``C10``,
``SA``, ``HK``; ``J1`` / ``J2`` the jokers, ``B1`` / ``B2`` backs). Nothing is committed: the SVGs
live in the cache (:func:`models.synth.faces.kennard_dir`), like the rendered atlases of :mod:`models.synth.faces`.

``tractorcam synth kennard`` fetches the package with ``npm pack`` (a package registry, as
apt is for the Debian art) and converts it; ``--bundle FILE`` converts an ``index.esm.js`` already
on disk.

Card names here follow the bundle: suit letter first, then the rank (``A``, ``2`` … ``10``, ``J``,
``Q``, ``K``):

>>> kennard_name("10C"), kennard_name("AS")
('C10', 'SA')
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "@letele/playing-cards@0.1.0"
BUNDLE = "package/dist/index.esm.js"

#: Evaluates the Babel bundle with a ``React.createElement`` that builds markup, then writes each
#: ``Svg<Name>`` component's SVG to ``<out>/<Name>.svg``. argv: bundle, out directory.
_CONVERT_JS = r"""
const fs = require('fs');
const [bundle, out] = process.argv.slice(2);
let src = fs.readFileSync(bundle, 'utf8').replace(/^(import|export) .*$/mg, '');
const names = [...src.matchAll(/^const (Svg[A-Za-z0-9]+) =/mg)].map(m => m[1]);
if (names.length === 0) { console.error('no Svg components in ' + bundle); process.exit(2); }
const esc = s => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
const attr = k => {
  if (k === 'className') return 'class';
  if (k === 'xmlnsXlink') return 'xmlns:xlink';
  if (k.startsWith('xlink')) return 'xlink:' + k.slice(5).toLowerCase();
  if (/^(viewBox|preserveAspectRatio|patternUnits|patternTransform|gradientUnits|gradientTransform)$/.test(k)) return k;
  return k.replace(/[A-Z]/g, c => '-' + c.toLowerCase());
};
const React = { createElement(type, props, ...children) {
  props = props || {};
  let attrs = '';
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || k === 'title' || k === 'titleId') continue;
    if (k === 'style' && typeof v === 'object') {
      attrs += ` style="${Object.entries(v).map(([a, b]) => attr(a) + ':' + b).join(';')}"`;
      continue;
    }
    attrs += ` ${attr(k)}="${esc(v)}"`;
  }
  const inner = children.flat().filter(c => c !== null && c !== undefined && c !== false)
    .map(c => (typeof c === 'object' && c.html !== undefined) ? c.html : esc(c)).join('');
  return { html: `<${type}${attrs}>${inner}</${type}>` };
} };
const comps = new Function('React', '_extends', src + '\nreturn {' + names.join(',') + '};')(React, Object.assign);
fs.mkdirSync(out, { recursive: true });
for (const n of names) {
  const svg = comps[n]({ xmlnsXlink: 'http://www.w3.org/1999/xlink' }).html;
  fs.writeFileSync(`${out}/${n.slice(3)}.svg`, '<?xml version="1.0" encoding="UTF-8"?>\n' + svg + '\n');
}
console.log(names.length);
"""


class KennardArtError(RuntimeError):
    """The Kennard card art could not be fetched or converted (no ``node`` / ``npm``, no package,
    or a bundle without card components)."""


def kennard_name(card: str) -> str:
    """The bundle's file name of a card code (``10C`` → ``C10``)."""
    return card[-1] + card[:-1]


def convert_bundle(bundle: Path, out: Path) -> int:
    """Write one SVG per component of ``bundle`` into ``out``; returns how many.

    Raises :class:`KennardArtError` when Node.js is missing or the bundle holds no card components.
    """
    node = shutil.which("node")
    if node is None:
        raise KennardArtError("node not found (Node.js is needed to convert the card bundle)")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "convert.cjs"
        script.write_text(_CONVERT_JS)
        run = subprocess.run([node, str(script), str(bundle), str(out)], capture_output=True, text=True)
    if run.returncode != 0:
        raise KennardArtError(f"converting {bundle} failed: {run.stderr.strip() or run.stdout.strip()}")
    return int(run.stdout.strip().splitlines()[-1])


def fetch_bundle(dest: Path, package: str = PACKAGE) -> Path:
    """``npm pack`` the package into ``dest`` and extract its bundle; returns the bundle's path."""
    npm = shutil.which("npm")
    if npm is None:
        raise KennardArtError("npm not found (it fetches the card art from the npm registry)")
    run = subprocess.run([npm, "pack", package, "--silent"], cwd=dest, capture_output=True, text=True)
    tgz = dest / run.stdout.strip().splitlines()[-1] if run.returncode == 0 and run.stdout.strip() else None
    if tgz is None or not tgz.exists():
        raise KennardArtError(f"npm pack {package} failed: {run.stderr.strip()}")
    with tarfile.open(tgz) as tar:
        tar.extract(BUNDLE, dest, filter="data")
    return dest / BUNDLE
