"""A one-line progress indicator for builds that take longer than about a second."""

from __future__ import annotations

import os
import sys
import threading
import time

# JAXCC_PROGRESS=1: show progress on a stream that is not a terminal too (a log, CI), one line
# per second; 0: never; unset: on a terminal only.
_PROGRESS_ENV = "JAXCC_PROGRESS"


class BuildProgress:
    """Context manager around a load: once `start()` is called (the core calls it when a build
    begins; a cache hit never does), and after `delay` more seconds, shows
    `jaxcc: building <name>: 7/20 steps, 2.3 s` on stderr until the block ends; `update()` gets
    the counts from ninja's status as each build step (a compile or the link) starts. Redrawn in
    place on a terminal; on any other stream only with JAXCC_PROGRESS=1, as one line a second, so
    logs and CI output stay clean unless asked. A hit costs nothing beyond this object: no
    terminal check, no thread."""

    def __init__(self, name: str, delay: float = 1.0, stream=None):
        self.name = name
        self.delay = delay
        self.stream = stream
        self._done: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._shown = False
        self._start = 0.0
        self._steps: tuple[int, int] | None = None
        self._interactive = True

    def start(self) -> None:
        """A build begins (idempotent)."""
        if self._done is not None:
            return
        self._done = threading.Event()
        self._start = time.monotonic()
        if self.stream is None:
            self.stream = sys.stderr
        asked = os.environ.get(_PROGRESS_ENV, "")
        if asked == "0":
            return
        isatty = getattr(self.stream, "isatty", None)
        self._interactive = bool(isatty and isatty())
        if self._interactive or asked == "1":
            self._thread = threading.Thread(target=self._run, args=(self._done,), daemon=True)
            self._thread.start()

    def update(self, finished: int, total: int) -> None:
        """Ninja started a step: `finished` of `total` are done (called from the build thread)."""
        self._steps = (finished, total)

    def _line(self, elapsed: float) -> str:
        steps = f"{self._steps[0]}/{self._steps[1]} steps, " if self._steps else ""
        return f"jaxcc: building {self.name}: {steps}{elapsed:.1f} s"

    def _run(self, done: threading.Event) -> None:
        if done.wait(self.delay):
            return
        period = 0.2 if self._interactive else 1.0
        while True:
            self._shown = True
            line = self._line(time.monotonic() - self._start)
            self.stream.write(f"\r{line}\033[K" if self._interactive else line + "\n")
            self.stream.flush()
            if done.wait(period):
                return

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
            steps = f" ({self._steps[1]} steps)" if self._steps and not exc_type else ""
            elapsed = time.monotonic() - self._start
            end = "\r" if self._interactive else ""
            tail = "\033[K" if self._interactive else ""
            self.stream.write(f"{end}jaxcc: {status} {self.name} in {elapsed:.1f} s{steps}{tail}\n")
            self.stream.flush()
        return False
