"""A one-line progress indicator for builds that take longer than about a second."""

from __future__ import annotations

import sys
import threading
import time


class BuildProgress:
    """Context manager around a load: once `start()` is called (the core calls it when a build
    begins; a cache hit never does), and after `delay` more seconds, redraws
    `jaxcc: building <name> … 2.3s` on stderr until the block ends. Only when stderr is a
    terminal, so logs and CI output stay clean. A hit costs nothing beyond this object: no
    terminal check, no thread."""

    def __init__(self, name: str, delay: float = 1.0, stream=None):
        self.name = name
        self.delay = delay
        self.stream = stream
        self._done: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._shown = False
        self._start = 0.0

    def start(self) -> None:
        """A build begins (idempotent)."""
        if self._done is not None:
            return
        self._done = threading.Event()
        self._start = time.monotonic()
        if self.stream is None:
            self.stream = sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        if isatty and isatty():
            self._thread = threading.Thread(target=self._run, args=(self._done,), daemon=True)
            self._thread.start()

    def _run(self, done: threading.Event) -> None:
        if done.wait(self.delay):
            return
        while not done.wait(0.2):
            self._shown = True
            elapsed = time.monotonic() - self._start
            self.stream.write(f"\rjaxcc: building {self.name} … {elapsed:.1f}s")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._done is None:
            return False
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self._shown:
            status = "failed" if exc_type else "built"
            elapsed = time.monotonic() - self._start
            self.stream.write(f"\rjaxcc: {status} {self.name} in {elapsed:.1f}s\033[K\n")
            self.stream.flush()
        return False
