"""What a user sees when jaxcc cannot be built (issue 24 item 5): no C++ compiler, or another OS
than Linux, is one CMake error naming the fix, before anything else is configured. Real CMake
on the repository's CMakeLists.txt; `pip wheel` for the message as pip shows it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CMAKE = shutil.which("cmake")
pytestmark = pytest.mark.skipif(CMAKE is None, reason="needs cmake on PATH")


def configure(tmp_path, *args, env=None, prefix=()):
    full_env = {k: v for k, v in os.environ.items() if k != "CXX"}
    full_env.update(env or {})
    return subprocess.run(
        [*prefix, CMAKE, "-S", str(REPO), "-B", str(tmp_path / "build"), *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


def assert_one_error(result, *phrases):
    assert result.returncode != 0, result.stdout
    assert result.stderr.count("CMake Error") == 1, result.stderr
    message = " ".join(result.stderr.split())  # CMake wraps the message
    for phrase in phrases:
        assert phrase in message, result.stderr


def test_a_compiler_that_is_not_there_is_one_message_naming_what_to_install(tmp_path):
    result = configure(tmp_path, env={"CXX": str(tmp_path / "no-such-g++")})
    assert_one_error(
        result,
        "jaxcc needs a C++17 compiler to build",
        f"CXX={tmp_path / 'no-such-g++'} is not a working C++ compiler",
        "apt-get install g++",
        "conda install -c conda-forge cxx-compiler",
    )


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="hiding the system's compilers needs root (a private mount namespace)",
)
def test_a_machine_without_any_compiler_gets_the_same_message(tmp_path):
    # CMake searches /usr/bin whatever PATH says, so the compilers are hidden, not left off PATH.
    hidden = [
        str(p)
        for d in ("/usr/bin", "/usr/local/bin", "/bin")
        for p in Path(d).glob("*")
        if p.name in ("c++", "g++", "clang++", "cc", "gcc", "clang")
        or p.name.startswith(("g++-", "clang++-", "x86_64-linux-gnu-g++", "aarch64-linux-gnu-g++"))
    ]
    mounts = "; ".join(f"mount --bind /dev/null {p}" for p in hidden)
    result = configure(
        tmp_path,
        prefix=(
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            f'{mounts}; exec "$@"',
            "sh",
        ),
    )
    assert_one_error(
        result,
        "jaxcc needs a C++17 compiler to build",
        "no c++, g++ or clang++ on PATH, and CXX is not set",
        "apt-get install g++",
    )


@pytest.mark.parametrize("system", ["Darwin", "Windows"])
def test_another_os_is_one_message_saying_linux_only(tmp_path, system):
    result = configure(tmp_path, f"-DCMAKE_SYSTEM_NAME={system}")
    assert_one_error(result, "jaxcc supports Linux only", f"this build is for {system}", "WSL2")


def test_pip_shows_the_compiler_message(tmp_path):
    pytest.importorskip("scikit_build_core")
    source = tmp_path / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns("build", ".git"))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "-w",
            str(tmp_path / "wheels"),
            str(source),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "CXX": str(tmp_path / "no-such-g++")},
        timeout=300,
    )
    assert result.returncode != 0
    output = " ".join((result.stdout + result.stderr).split())
    assert "jaxcc needs a C++17 compiler to build" in output, output[-3000:]
    assert "apt-get install g++" in output
