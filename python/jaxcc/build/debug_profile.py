"""The debug profile's Python half (decision 150c): what `debug=` or $JAXCC_DEBUG asks for. Whether
this process can load an AddressSanitizer-instrumented library is the core's to say, for every
load with -fsanitize=address (pipeline/sanitizer_runtime.h, decision 168)."""

from __future__ import annotations

import os

from jaxcc.errors import SpecError

_SANITIZE = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]


def _setting(debug, where: str):
    if debug is None:
        debug = os.environ.get("JAXCC_DEBUG", "")
        if debug in ("", "0"):
            return False
        if debug == "1":
            return True
        if debug == "asan":
            return "asan"
        raise SpecError(
            f"JAXCC_DEBUG={debug} is not a setting; use 1 (build kernels under the debug "
            "profile: -O0 -g, guard zones after every output), asan (the same with "
            "AddressSanitizer and UBSan) or 0 (the default)"
        )
    if isinstance(debug, bool) or debug == "asan":
        return debug
    raise SpecError(f"{where}: debug must be True, False or 'asan', got {debug!r}")


def debug_profile(debug, where: str, platform: str) -> tuple[bool, list[str], list[str]]:
    """(debug build?, extra compile flags, extra link flags) for `debug=` (None: $JAXCC_DEBUG).
    "asan" adds AddressSanitizer and UBSan to a CPU module; the core refuses its load (LoadError
    with the exact command) in a process that did not preload the compiler's sanitizer runtime,
    which an instrumented library cannot be dlopen'ed without."""
    setting = _setting(debug, where)
    if setting != "asan":
        return bool(setting), [], []
    if platform != "cpu":
        raise SpecError(
            f"{where}: debug='asan' instruments host code only; for CUDA kernels use "
            "debug=True and run under compute-sanitizer (docs/usage.md, 'Debugging a kernel')"
        )
    return True, list(_SANITIZE), ["-fsanitize=address,undefined"]
