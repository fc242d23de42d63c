"""The cost of the compiler's proof of each signature (decision 147): one kernel unit of 16
entry points, as jaxcc generates it, compiled with the build's own command, against the same
unit with the proof removed (each bridge calling the function directly, as before the proof).
CPU time (user + system) of g++, interleaved runs, medians; the objects' sizes too.

  python benchmarks/bench_signature_proof.py [runs]
"""

from __future__ import annotations

import pathlib
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile

import jaxcc

N = 16
SOURCE = '#include "brainevent/common.h"\n' + "".join(
    f"""
// @BE k{i}
void k{i}(const BE::Tensor x, BE::Tensor out, float alpha, int64_t n) {{
    for (int64_t j = 0; j < x.numel(); ++j)
        out.data_ptr<float>()[j] = x.data_ptr<float>()[j] * alpha + n;
}}
"""
    for i in range(N)
)


def without_proof(unit: str) -> str:
    """The unit as it was before decision 147: no binder, no assert, direct calls."""
    kept = []
    skip = 0
    for line in unit.splitlines():
        if skip:
            skip -= 1
            continue
        if line.startswith("struct jaxcc_read_"):
            skip = 2  # the template line and `};`
            continue
        if line.startswith(("template <class Read", "static_assert(jaxcc_proves_")) or (
            line.startswith("constexpr auto jaxcc_fn_")
        ):
            continue
        kept.append(re.sub(r"\bjaxcc_fn_(k\d+)\(", r"::\1(", line))
    return "\n".join(kept) + "\n"


def cpu_seconds(command: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with tempfile.TemporaryDirectory() as tmp:
        build = pathlib.Path(tmp) / "build"
        jaxcc.load_cpp_inline("bench_signature_proof", SOURCE, build_directory=str(build))
        ninja = (build / "build.ninja").read_text()
        command = shlex.split(re.search(r"rule compile_0\n  command = (.*)\n", ninja).group(1))
        command = [a for a in command if a not in ("-MMD", "-MF", "$out.d")]
        proven = (build / "kernel_0.cc").read_text()
        assert proven.count("static_assert(jaxcc_proves_") == N
        units = {"with proof": proven, "without proof": without_proof(proven)}
        times = {name: [] for name in units}
        for name, text in units.items():
            (build / f"{name[:4]}.cc").write_text(text)
        for _ in range(runs):
            for name in units:
                src = build / f"{name[:4]}.cc"
                obj = build / f"{name[:4]}.o"
                argv = [a.replace("$in", str(src)).replace("$out", str(obj)) for a in command]
                times[name].append(cpu_seconds(argv))
        for name in units:
            size = (build / f"{name[:4]}.o").stat().st_size
            print(
                f"{name:14s} median {statistics.median(times[name]):.3f} s CPU "
                f"(min {min(times[name]):.3f}, {runs} runs), object {size} bytes"
            )


if __name__ == "__main__":
    main()
