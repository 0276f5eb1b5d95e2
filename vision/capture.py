"""Frame sources: an OpenCV camera, a video file, a folder of images, or a Raspberry Pi camera.

All yield :class:`Frame` objects (BGR uint8 images). ``open_source(spec)`` parses the ``--source``
argument of ``tractorcam run``: a camera index (``0``), ``picamera2``, a folder, or a video file.
cv2 and picamera2 are imported inside the classes that use them.

A camera does not wait for its reader. ``open_source`` therefore reads a camera on a thread of its
own (:class:`NewestFrames`): the reader always gets the newest frame, and the frames it had no time
for are dropped (their indices are skipped, so the table service can tell it fell behind). A video
file or a folder is read frame by frame whatever the reader's speed, decoded on a thread of its own
a few frames ahead (:class:`AheadFrames`); :class:`PacedSource` replays one at camera speed, to see
what a live table would do.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


class SourceNotFoundError(ValueError):
    """The source path does not exist or holds nothing readable."""


class CameraUnavailableError(RuntimeError):
    """A camera was asked for but cannot be opened (none attached, busy, or driver missing)."""


class UnreadableImageError(ValueError):
    """A file could not be decoded as an image."""


@dataclass(frozen=True)
class Frame:
    """One image from a source: ``index`` counts from 0, ``timestamp`` in seconds (source time)."""

    image: npt.NDArray[np.uint8]
    index: int
    timestamp: float
    source: str

    @property
    def size(self) -> tuple[int, int]:
        """(width, height)."""
        return int(self.image.shape[1]), int(self.image.shape[0])


@runtime_checkable
class FrameSource(Protocol):
    """Iterable of frames that must be closed."""

    def __iter__(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...


def read_image(path: str | Path) -> npt.NDArray[np.uint8]:
    """Decode an image file as BGR, raising :class:`UnreadableImageError` when it cannot be read."""
    import cv2

    p = Path(path)
    if not p.is_file():
        raise UnreadableImageError(f"cannot read image {path}: no such file")
    data = np.fromfile(str(p), dtype=np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise UnreadableImageError(f"cannot read image {path}: not a decodable image")
    return cast("npt.NDArray[np.uint8]", image)


class ImageFolderSource:
    """Images of a folder in name order; timestamps are ``index / fps``."""

    def __init__(self, folder: str | Path, fps: float = 1.0) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceNotFoundError(f"not a folder: {folder}")
        self.paths = sorted(p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self.paths:
            raise SourceNotFoundError(f"no images in {folder}")
        self.fps = fps

    def __iter__(self) -> Iterator[Frame]:
        for i, p in enumerate(self.paths):
            yield Frame(read_image(p), i, i / self.fps, str(p))

    def close(self) -> None:
        """Nothing to release."""


class VideoFileSource:
    """Frames of a video file; timestamps from the container's position."""

    def __init__(self, path: str | Path) -> None:
        import cv2

        self.path = Path(path)
        if not self.path.is_file():
            raise SourceNotFoundError(f"no such video: {path}")
        self._cap = cv2.VideoCapture(str(self.path))
        if not self._cap.isOpened():
            raise SourceNotFoundError(f"cannot open video: {path}")

    def __iter__(self) -> Iterator[Frame]:
        import cv2

        i = 0
        while True:
            ok, image = self._cap.read()
            if not ok:
                return
            yield Frame(
                cast("npt.NDArray[np.uint8]", image),
                i,
                self._cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0,
                str(self.path),
            )
            i += 1

    def close(self) -> None:
        """Release the decoder."""
        self._cap.release()


class OpenCVCameraSource:
    """A V4L2/USB camera by index through OpenCV; timestamps are wall-clock seconds."""

    def __init__(self, index: int, width: int | None = None, height: int | None = None) -> None:
        import cv2

        self.index = index
        self._cap = cv2.VideoCapture(index)
        if not self._cap.isOpened():
            self._cap.release()
            raise CameraUnavailableError(f"camera {index} cannot be opened (not attached or busy)")
        if width:
            self._cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        if height:
            self._cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)

    def __iter__(self) -> Iterator[Frame]:
        i = 0
        while True:
            ok, image = self._cap.read()
            if not ok:
                raise CameraUnavailableError(f"camera {self.index} stopped delivering frames")
            yield Frame(cast("npt.NDArray[np.uint8]", image), i, time.time(), f"camera:{self.index}")
            i += 1

    def close(self) -> None:
        """Release the camera."""
        self._cap.release()


class Picamera2Source:
    """The Raspberry Pi camera through picamera2 (imported here; only on a Pi with the ``pi`` extra)."""

    def __init__(
        self, width: int = 1920, height: int = 1080, controls: Mapping[str, Any] | None = None
    ) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError as exc:
            raise CameraUnavailableError(
                "picamera2 is not installed (Raspberry Pi only: apt install python3-picamera2, "
                "and a venv made with --system-site-packages)"
            ) from exc
        except ValueError as exc:  # apt's simplejpeg built for another numpy than the venv's
            raise CameraUnavailableError(
                f"picamera2 cannot be imported ({exc}): apt's python3-simplejpeg is built for "
                "another numpy than the venv's; pip install simplejpeg in the venv (docs/pi.md)"
            ) from exc
        try:
            self._cam = Picamera2()
            config = self._cam.create_video_configuration(main={"size": (width, height), "format": "BGR888"})
            self._cam.configure(config)
            self._cam.start()
        except (RuntimeError, IndexError) as exc:
            raise CameraUnavailableError(f"no Raspberry Pi camera found: {exc}") from exc
        if controls:
            try:
                self._cam.set_controls(dict(controls))
            except (RuntimeError, KeyError, TypeError, ValueError) as exc:
                self._cam.stop()
                raise CameraUnavailableError(
                    f"the camera refuses the controls {dict(controls)}: {exc}"
                ) from exc

    def __iter__(self) -> Iterator[Frame]:
        i = 0
        while True:
            image = self._cam.capture_array("main")
            yield Frame(np.ascontiguousarray(image[:, :, :3]), i, time.time(), "picamera2")
            i += 1

    def close(self) -> None:
        """Stop the camera."""
        self._cam.stop()


class PacedSource:
    """A recorded source replayed as a camera gives it: each frame is ready at its ``timestamp``
    after the first was taken (on ``clock``), and the source waits for it, never for its reader.
    Wrapped in :class:`NewestFrames`, a reader slower than the film drops frames as it would at a
    table."""

    def __init__(
        self,
        source: FrameSource,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.source, self.clock, self.sleep = source, clock, sleep

    def __iter__(self) -> Iterator[Frame]:
        start: float | None = None
        for frame in self.source:
            if start is None:
                start = self.clock() - frame.timestamp
            wait = start + frame.timestamp - self.clock()
            if wait > 0:
                self.sleep(wait)
            yield frame

    def close(self) -> None:
        """Close the recorded source."""
        self.source.close()


class NewestFrames:
    """A live source read on a thread of its own; iterating gives the newest frame each time, waiting
    only when the reader has already had it. Frames that came and went while the reader was busy are
    dropped (:attr:`dropped` counts them) and their indices are skipped. An error of the source
    (the camera gone) is raised to the reader, after the frames it had delivered.

    >>> frames = [Frame(np.zeros((2, 2, 3), np.uint8), i, i / 10, "t") for i in range(5)]
    >>> src = NewestFrames(frames)
    >>> taken = [f.index for f in src]
    >>> taken[-1], src.dropped + len(taken)
    (4, 5)
    """

    def __init__(self, source: FrameSource | list[Frame]) -> None:
        self.source = source
        self.dropped = 0
        self._cond = threading.Condition()
        self._newest: Frame | None = None
        self._ended = False
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pull, name="camera", daemon=True)
        self._thread.start()

    def _pull(self) -> None:
        try:
            for frame in self.source:
                with self._cond:
                    if self._newest is not None:
                        self.dropped += 1
                    self._newest = frame
                    self._cond.notify()
                if self._stop.is_set():
                    break
        except BaseException as exc:  # handed to the reader's thread
            with self._cond:
                self._error = exc
        finally:
            with self._cond:
                self._ended = True
                self._cond.notify()

    def __iter__(self) -> Iterator[Frame]:
        while True:
            with self._cond:
                while self._newest is None and not self._ended:
                    self._cond.wait()
                frame, self._newest = self._newest, None
                if frame is None:
                    if self._error is not None:
                        raise self._error
                    return
            yield frame

    def close(self) -> None:
        """Stop taking frames (the thread ends with the camera's next frame) and close the source."""
        _stop_and_close(self._stop, self._thread, self.source)


class AheadFrames:
    """A recorded source decoded on a thread of its own, up to ``ahead`` frames before its reader:
    every frame is given, in order (a file waits for its reader, unlike a camera), and decoding one
    frame overlaps reading the last, as a camera's own thread takes its frames. An error of the
    source is raised to the reader after the frames it had delivered.

    >>> frames = [Frame(np.zeros((2, 2, 3), np.uint8), i, i / 10, "t") for i in range(5)]
    >>> [f.index for f in AheadFrames(frames, ahead=2)]
    [0, 1, 2, 3, 4]
    """

    def __init__(self, source: FrameSource | list[Frame], ahead: int = 4) -> None:
        if ahead < 1:
            raise ValueError(f"ahead must be at least 1, got {ahead}")
        self.source = source
        self._queue: queue.Queue[Frame | BaseException | None] = queue.Queue(maxsize=ahead)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pull, name="decoder", daemon=True)
        self._thread.start()

    def _put(self, item: Frame | BaseException | None) -> bool:
        """Queue ``item`` once there is room; False when the reader has stopped taking frames."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _pull(self) -> None:
        try:
            for frame in self.source:
                if not self._put(frame):
                    return
        except BaseException as exc:  # handed to the reader's thread
            self._put(exc)
            return
        self._put(None)

    def __iter__(self) -> Iterator[Frame]:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self) -> None:
        """Stop decoding (the thread ends at its next frame) and close the source."""
        _stop_and_close(self._stop, self._thread, self.source)


def _stop_and_close(stop: threading.Event, thread: threading.Thread, source: object) -> None:
    """Tell a source's thread to stop, give it two seconds to end, and close the source."""
    stop.set()
    thread.join(timeout=2.0)
    close = getattr(source, "close", None)
    if close is not None:
        close()


def open_source(spec: str, controls: Mapping[str, Any] | None = None) -> FrameSource:
    """A source from a ``--source`` string: camera index, ``picamera2``, folder, or video file.
    ``controls`` (picamera2's, e.g. ``{"LensPosition": 1.0}``) go to the Raspberry Pi camera; any other
    source refuses them (:class:`SourceNotFoundError`), since they would be silently ignored."""
    if controls and spec != "picamera2":
        raise SourceNotFoundError(f"camera controls are for the picamera2 source, not {spec}")
    if spec.strip().isdigit():
        return NewestFrames(OpenCVCameraSource(int(spec)))
    if spec == "picamera2":
        return NewestFrames(Picamera2Source(controls=controls))
    path = Path(spec)
    if path.is_dir():
        return AheadFrames(ImageFolderSource(path))
    if path.is_file():
        return AheadFrames(VideoFileSource(path))
    raise SourceNotFoundError(f"source not found: {spec} (a camera index, 'picamera2', a folder or a video)")


def sharpest_frame(
    spec: str, n: int = 10, controls: Mapping[str, Any] | None = None
) -> npt.NDArray[np.uint8] | None:
    """The sharpest of the first ``n`` frames of the source ``spec`` (:func:`open_source`;
    :func:`calibration.markers.sharpest`), None when it gives none: what calibration reads."""
    from calibration.markers import sharpest

    src = open_source(spec, controls)
    try:
        return sharpest((frame.image for frame in src), n)
    finally:
        src.close()
