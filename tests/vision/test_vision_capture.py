import sys

import cv2
import numpy as np
import pytest

from vision.capture import (
    AheadFrames,
    CameraUnavailableError,
    Frame,
    FrameSource,
    ImageFolderSource,
    Picamera2Source,
    SourceNotFoundError,
    UnreadableImageError,
    VideoFileSource,
    open_source,
    read_image,
)


def test_image_folder_in_name_order(tmp_path):
    for name, value in [("b.png", 20), ("a.jpg", 10), ("notes.txt", None)]:
        if value is None:
            (tmp_path / name).write_text("x")
        else:
            cv2.imwrite(str(tmp_path / name), np.full((8, 12, 3), value, np.uint8))
    src = open_source(str(tmp_path))
    assert isinstance(src, AheadFrames) and isinstance(src.source, ImageFolderSource)
    assert isinstance(src, FrameSource)
    frames = list(src)
    assert [f.index for f in frames] == [0, 1]
    assert [f.source.rsplit("/", 1)[1] for f in frames] == ["a.jpg", "b.png"]
    assert frames[1].size == (12, 8) and int(frames[1].image[0, 0, 0]) == 20
    src.close()


def test_video_file_frames(tmp_path):
    path = tmp_path / "v.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (32, 24))
    for i in range(5):
        writer.write(np.full((24, 32, 3), i * 40, np.uint8))
    writer.release()
    src = open_source(str(path))
    assert isinstance(src, AheadFrames) and isinstance(src.source, VideoFileSource)
    frames = list(src)
    src.close()
    assert len(frames) == 5 and all(isinstance(f, Frame) for f in frames)
    assert frames[-1].timestamp > frames[0].timestamp


def test_missing_sources_raise_specific_errors(tmp_path):
    with pytest.raises(SourceNotFoundError):
        open_source(str(tmp_path / "nothing"))
    with pytest.raises(SourceNotFoundError):
        ImageFolderSource(tmp_path)  # empty folder
    with pytest.raises(CameraUnavailableError):
        open_source("97")  # no such camera here


def test_picamera2_missing_is_a_camera_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails
    with pytest.raises(CameraUnavailableError, match="picamera2"):
        Picamera2Source()


def test_picamera2_built_for_another_numpy_is_a_camera_error_that_says_the_remedy(monkeypatch):
    """Raspberry Pi OS's python3-simplejpeg is built for numpy 1.24; beside the venv's numpy 2 the
    import raises ValueError (picamera2 issues 1088, 1211): one line with the remedy."""
    import importlib.abc

    class Broken(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "picamera2":
                raise ValueError("numpy.dtype size changed, may indicate binary incompatibility")
            return None

    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Broken(), *sys.meta_path])
    with pytest.raises(CameraUnavailableError, match="pip install simplejpeg"):
        Picamera2Source()


def test_read_image_errors(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not an image")
    with pytest.raises(UnreadableImageError):
        read_image(bad)
    with pytest.raises(UnreadableImageError):
        read_image(tmp_path / "missing.jpg")


class _Counted:
    """Frames made on demand, counting how many the consumer has pulled; raising after ``fail_at``."""

    def __init__(self, n, fail_at=None):
        self.n, self.fail_at, self.pulled, self.closed = n, fail_at, 0, False

    def __iter__(self):
        for i in range(self.n):
            if i == self.fail_at:
                raise CameraUnavailableError("the file ends in garbage")
            self.pulled += 1
            yield Frame(np.full((2, 2, 3), i, np.uint8), i, i / 10, "counted")

    def close(self):
        self.closed = True


def test_a_recorded_source_is_decoded_ahead_of_its_reader_and_loses_no_frame():
    import time

    src = _Counted(20)
    ahead = AheadFrames(src, ahead=3)
    frames = iter(ahead)
    first = next(frames)
    for _ in range(100):  # the decoder fills its queue while the reader is busy with the first frame
        if src.pulled >= 4:
            break
        time.sleep(0.01)
    assert src.pulled == 4  # the frame taken and three waiting: no further
    rest = list(frames)
    assert [first.index] + [f.index for f in rest] == list(range(20))
    assert [int(f.image[0, 0, 0]) for f in rest] == list(range(1, 20))
    ahead.close()
    assert src.closed


def test_a_recorded_sources_error_reaches_the_reader_after_its_frames():
    ahead = AheadFrames(_Counted(10, fail_at=6), ahead=2)
    got = []
    with pytest.raises(CameraUnavailableError, match="garbage"):
        for frame in ahead:
            got.append(frame.index)
    assert got == [0, 1, 2, 3, 4, 5]
    ahead.close()


def test_closing_a_recorded_source_part_way_stops_its_decoder():
    src = _Counted(1000)
    ahead = AheadFrames(src, ahead=2)
    frames = iter(ahead)
    next(frames)
    ahead.close()
    assert not ahead._thread.is_alive() and src.closed and src.pulled < 10
    with pytest.raises(ValueError, match="ahead"):
        AheadFrames([], ahead=0)
