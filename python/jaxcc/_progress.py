"""A one-line progress indicator for builds that take longer than about a second."""

from __future__ import annotations

import sys
import threading
import time


class BuildProgress:
    """Context manager: after `delay` seconds, redraws `jaxcc: building <name> … 2.3s` on stderr
    until the block ends. Only when stderr is a terminal, so logs and CI output stay clean."""

    def __init__(self, name: str, delay: float = 1.0, stream=None):
        self.name = name
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    def _enabled(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def _run(self, start: float) -> None:
        if self._done.wait(self.delay):
            return
        while not self._done.wait(0.2):
            self._shown = True
            elapsed = time.monotonic() - start
            self.stream.write(f"\rjaxcc: building {self.name} … {elapsed:.1f}s")
            self.stream.flush()

    def __enter__(self):
        self._start = time.monotonic()
        if self._enabled():
            self._thread = threading.Thread(target=self._run, args=(self._start,), daemon=True)
            self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            status = "failed" if exc_type else "built"
            elapsed = time.monotonic() - self._start
            self.stream.write(f"\rjaxcc: {status} {self.name} in {elapsed:.1f}s\033[K\n")
            self.stream.flush()
        return False
