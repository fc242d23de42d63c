"""Measuring variants where they cannot take this process down (decision 191): one tuning child
per process (runner.py, started at the first key that needs timing and kept for later keys),
sent each key's job: the variants' load recipes, the tuning inputs, the per-call bound. A child
that dies on a signal, exits, or runs one call past the bound is ended and the variant it was
running, read from the shared slot (progress.py, decision 258), is named ("SIGSEGV", "timed out
after 5.0 s"); the job then goes to a fresh child without it. Ctrl-C ends the child and the
tuning at once."""

from __future__ import annotations

import atexit
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

from . import progress, runner

# Seconds the child may take to start and load the variants (warm loads), and the slack past a
# call's bound before this process stops waiting for the child's own watchdog.
_START_S = 120.0
_GRACE_S = 2.0
# How often this process looks at the slot while the child works: often enough for the bounds
# above, rarely enough that its waking costs the timing nothing (one in thousands of calls).
_POLL_S = 0.5

_worker: _Worker | None = None
_at_exit: list[bool] = []


class _Worker:
    def __init__(self, platform: str):
        job_read, self._job_write = os.pipe()
        self._reply_read, reply_write = os.pipe()
        env = dict(os.environ)
        env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # the GPU's memory is this process's
        if platform == "cpu":
            env["JAX_PLATFORMS"] = "cpu"
        self.log = tempfile.TemporaryFile()  # the child's stdout and stderr: crash reports
        self.slot, self._slot_file = progress.Slot.create()
        self.platform = platform
        slot_fd = self._slot_file.fileno()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jaxcc.tune.runner", str(job_read), str(reply_write),
             str(slot_fd)],
            pass_fds=(job_read, reply_write, slot_fd),
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=env,
        )  # fmt: skip
        os.close(job_read)
        os.close(reply_write)

    def send(self, job: dict) -> None:
        runner.write_message(self._job_write, job)

    def receive(self, deadline: float):
        """The next message; "timeout" past `deadline` (time.monotonic()); None at the child's
        end."""
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self._reply_read], [], [], left)[0]:
            return "timeout"
        try:
            return runner.read_message(self._reply_read)
        except (OSError, EOFError, ValueError):
            return None

    def how_it_ended(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return "stopped answering"
        if code < 0:
            try:
                return signal.Signals(-code).name
            except ValueError:
                return f"signal {-code}"
        return f"exited with status {code}"

    def crash_lines(self) -> list[str]:
        """The child's last lines of output (a crash report names the kernel and its line)."""
        try:
            self.log.seek(0)
            text = self.log.read()[-4000:].decode("utf-8", "replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if line.strip()][-6:]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def close(self) -> None:
        self.kill()
        for fd in (self._job_write, self._reply_read):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        self.slot.close()
        self._slot_file.close()


def _get_worker(platform: str) -> _Worker:
    global _worker
    if not _at_exit:
        atexit.register(_drop_worker)
        _at_exit.append(True)
    if _worker is not None and (_worker.process.poll() is not None or _worker.platform != platform):
        _worker.close()
        _worker = None
    if _worker is None:
        _worker = _Worker(platform)
    return _worker


def prestart(platform: str) -> None:
    """Starts the tuning child now (Python and JAX take seconds to start) without waiting."""
    _get_worker(platform)


def _drop_worker() -> None:
    global _worker
    if _worker is not None:
        _worker.close()
        _worker = None


def measure(job: dict, platform: str, on_failure) -> dict:
    """Runs `job` (runner.run_job's, with "recipes") in the tuning child; returns its "done"
    result. A variant that ends the child or runs past job["bound_s"] goes to
    `on_failure(tag, what happened, crash lines)`, which returns the job to send next (without
    it) or raises; the result's "failed" lists them."""
    failed: dict[str, str] = {}
    while True:
        worker = _get_worker(platform)
        begun, _ = worker.slot.read()  # calls of earlier jobs: this job's come after
        current, deadline = None, time.monotonic() + _START_S
        try:
            worker.send(job)
            while True:
                message = worker.receive(min(deadline, time.monotonic() + _POLL_S))
                if message == "timeout":
                    count, tag = worker.slot.read()
                    if count != begun:  # a call began since the last look: wait for it
                        begun, current = count, tag
                        deadline = time.monotonic() + job["bound_s"] + _GRACE_S
                        continue
                    if time.monotonic() < deadline:
                        continue
                    worker.kill()
                    what = (
                        f"timed out after {job['bound_s']:.1f} s"
                        if current is not None
                        else f"the tuning process did not start within {_START_S:.0f} s"
                    )
                    break
                if message is None:
                    what = worker.how_it_ended()
                    count, tag = worker.slot.read()  # the call it died in
                    current = tag if count != begun else current
                    break
                kind = message[0]
                if kind == "ready":
                    continue
                if kind == "hang":
                    current, what = message[1], f"timed out after {message[2]:.1f} s"
                    worker.how_it_ended()
                    break
                elif kind == "raised":
                    current, what = message[1], f"raised: {message[2]}"
                    worker.kill()
                    break
                elif kind == "done":
                    return {**message[1], "failed": failed}
        except BaseException:  # Ctrl-C or anything else: the child goes with the tuning
            _drop_worker()
            raise
        lines = worker.crash_lines()
        _drop_worker()
        if current is None:
            from jaxcc.errors import AutotuneError

            raise AutotuneError(
                f"the tuning process for {job['qualname']} ended before running any variant "
                f"({what}); its last output: {' | '.join(lines) or '(none)'}"
            )
        failed[current] = what
        job = on_failure(current, what, lines)
