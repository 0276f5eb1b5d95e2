"""The contract between a table's edge service (``edge_app``) and the central scoreboard
(``scoreboard``): the bodies the edge posts and the paths it posts them to.

Both sides import this package; neither imports the other. It needs pydantic and the standard
library only, so the edge installs it without the web stack (FastAPI, SQLAlchemy) and the server
without the camera stack (OpenCV, ONNX Runtime).

* :mod:`contract.events`: the live events (``POST /api/events``): :class:`~contract.events.DealStart`,
  :class:`~contract.events.Play`, :class:`~contract.events.TrickResult`,
  :class:`~contract.events.AlertIn` with :class:`~contract.events.EvidenceImage`,
  :class:`~contract.events.Health`, and their union :data:`~contract.events.EdgeEvent`.
* :mod:`contract.deals`: a finished deal log (``POST /api/deals``): :class:`~contract.deals.DealLogIn`.
* :mod:`contract.boards`: a finished bridge board (``POST /api/boards``):
  :class:`~contract.boards.BoardLogIn`.
* :mod:`contract.paths`: the paths and the idempotency header.
* :mod:`contract.base`: the shared field types (seat, card) and the strict base model.
"""
