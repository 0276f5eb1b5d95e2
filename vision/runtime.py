"""ONNX Runtime sessions on the CPU, made one way for every network the reader runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def cpu_session(path: Path | str, threads: int = 0) -> Any:
    """An ``onnxruntime.InferenceSession`` of ``path`` on the CPU (``threads``: its intra-op
    threads; 0: ONNX Runtime's choice, one per core).

    Its threads sleep between runs instead of spinning: the reader runs many small networks
    between OpenCV and NumPy steps, and a worker spinning on a core after each run takes that
    core from them (on this project's 2-core machine, 23 % of an enrolled reader's wall time;
    ``docs/experiments/realtime.md``)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
