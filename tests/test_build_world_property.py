"""Issue 49, What to build 6: a state machine over a build's whole world (decisions 170-176).

The world: the source, a user header, a header in an `-isystem` directory, a header the source
probes with `__has_include` (absent or present), a response file of flags, an environment
variable (CPLUS_INCLUDE_PATH choosing between two directories), the compiler's identity (a CXX
wrapper script) and a static library the link reads. Each part contributes one decimal digit to
the value the built library returns, so the value a fresh build gives is known from the world
alone (and checked against a real fresh build at the end of every example). Every load, in a
second process or in this one with force_rebuild=True, must return exactly that value.
"""

import ctypes
import json
import os
import stat
import subprocess
import textwrap

from conftest import run_python
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"
#include "user.h"
#include <sys_part.h>
#include <env_part.h>
#if __has_include("probe.h")
#include "probe.h"
#else
#define PROBE_V 0
#endif
#define SRC_V {src}
extern "C" double k_value();
extern "C" __attribute__((visibility("default"))) double probe_value() {{
  return SRC_V + 10.0 * USER_V + 100.0 * SYS_V + 1e3 * PROBE_V + 1e4 * FLAG_V + 1e5 * ENV_V +
         1e6 * WRAP_V + 1e7 * k_value();
}}
void noop(const jaxcc::Tensor x, jaxcc::Tensor out) {{}}
"""

PROBE = textwrap.dedent(
    """
    import ctypes, json
    import jaxcc
    args = json.loads(ARGS)
    mod = jaxcc.load_cpp_file(args["file"], functions=["noop"], **args["kwargs"])
    lib = ctypes.CDLL(mod.path)
    lib.probe_value.restype = ctypes.c_double
    print(json.dumps({"value": lib.probe_value(), "hit": mod.cache_hit}))
    """
)

digit = st.integers(min_value=0, max_value=9)


def write_executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


class BuildWorld(RuleBasedStateMachine):
    root = None  # set per example by the test below

    # Hypothesis may run no rule at all in a short example: the first change and its load are
    # drawn here, so every example checks at least one cached load against the changed world.
    @initialize(part=st.sampled_from(["sys", "wrap", "flag", "lib", "user", "src"]), value=digit)
    def make_world(self, part, value):
        self.counter = getattr(BuildWorld, "_examples", 0)
        BuildWorld._examples = self.counter + 1
        base = self.root / f"world{self.counter}"
        self.dirs = {name: base / name for name in ("src", "sys", "env0", "env1", "lib")}
        for d in self.dirs.values():
            d.mkdir(parents=True)
        self.cache = base / "cache"
        self.rsp = base / "flags.rsp"
        self.wrapper = base / "cxx"
        self.world = {
            "src": 1,
            "user": 2,
            "sys": 3,
            "probe": None,
            "flag": 4,
            "env": 0,
            "wrap": 5,
            "lib": 6,
        }
        for i in (0, 1):
            (self.dirs[f"env{i}"] / "env_part.h").write_text(f"#define ENV_V {i + 7}\n")
        for part in ("src", "user", "sys", "flag", "wrap", "lib"):
            self.write(part, self.world[part])
        # Cached before any rule runs: every rule's load is then one a stale cache could answer.
        assert self.load_elsewhere(self.cache) == self.expected(), self.world
        self.write(part, value)
        assert self.load_elsewhere(self.cache) == self.expected(), self.world

    def write(self, part, value):
        self.world[part] = value
        if part == "src":
            (self.dirs["src"] / "kernel.cc").write_text(SOURCE.format(src=value))
        elif part == "user":
            (self.dirs["src"] / "user.h").write_text(f"#define USER_V {value}\n")
        elif part == "sys":
            (self.dirs["sys"] / "sys_part.h").write_text(f"#define SYS_V {value}\n")
        elif part == "probe":
            probe = self.dirs["src"] / "probe.h"
            if value is None:
                probe.unlink(missing_ok=True)
            else:
                probe.write_text(f"#define PROBE_V {value}\n")
        elif part == "flag":
            self.rsp.write_text(f"-DFLAG_V={value}\n")
        elif part == "wrap":
            write_executable(self.wrapper, f'#!/bin/sh\nexec g++ "$@" -DWRAP_V={value}\n')
        elif part == "lib":
            src = self.dirs["lib"] / "k.cc"
            src.write_text(f'extern "C" double k_value() {{ return {value}; }}\n')
            obj = self.dirs["lib"] / "k.o"
            subprocess.run(["g++", "-fPIC", "-c", str(src), "-o", str(obj)], check=True)
            archive = self.dirs["lib"] / "libk.a"
            archive.unlink(missing_ok=True)
            subprocess.run(["ar", "rcs", str(archive), str(obj)], check=True)

    def expected(self):
        w = self.world
        return (
            w["src"]
            + 10 * w["user"]
            + 100 * w["sys"]
            + 1e3 * (w["probe"] or 0)
            + 1e4 * w["flag"]
            + 1e5 * (w["env"] + 7)
            + 1e6 * w["wrap"]
            + 1e7 * w["lib"]
        )

    def kwargs(self):
        return {
            "extra_cflags": ["-isystem", str(self.dirs["sys"]), f"@{self.rsp}"],
            "extra_ldflags": ["-L", str(self.dirs["lib"]), "-lk"],
        }

    def env(self):
        return {
            "CXX": str(self.wrapper),
            "CPLUS_INCLUDE_PATH": str(self.dirs[f"env{self.world['env']}"]),
        }

    def load_elsewhere(self, cache):
        code = PROBE.replace(
            "ARGS",
            repr(
                json.dumps({"file": str(self.dirs["src"] / "kernel.cc"), "kwargs": self.kwargs()})
            ),
        )
        result = run_python(code, env={"JAXCC_CACHE_DIR": str(cache), **self.env()})
        assert result.returncode == 0, result.stderr[-3000:]
        return json.loads(result.stdout.strip().splitlines()[-1])["value"]

    # The parts a cache has missed come first: Hypothesis tries the simplest draws first.
    @rule(part=st.sampled_from(["sys", "wrap", "flag", "lib", "user", "src"]), value=digit)
    def edit_then_load_elsewhere(self, part, value):
        self.write(part, value)
        assert self.load_elsewhere(self.cache) == self.expected(), self.world

    @rule(value=st.one_of(st.none(), digit))
    def probe_header_then_load_elsewhere(self, value):
        self.write("probe", value)
        assert self.load_elsewhere(self.cache) == self.expected(), self.world

    @rule(which=st.integers(min_value=0, max_value=1))
    def switch_environment_then_load_elsewhere(self, which):
        self.world["env"] = which
        assert self.load_elsewhere(self.cache) == self.expected(), self.world

    @rule()
    def force_rebuild_in_this_process(self):
        saved = {k: os.environ.get(k) for k in self.env()}
        os.environ.update(self.env())
        previous = jaxcc.get_cache_dir()
        jaxcc.set_cache_dir(self.cache)
        try:
            mod = jaxcc.load_cpp_file(
                self.dirs["src"] / "kernel.cc",
                functions=["noop"],
                force_rebuild=True,
                auto_register=False,
                **self.kwargs(),
            )
        finally:
            jaxcc.set_cache_dir(previous)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        lib = ctypes.CDLL(mod.path)
        lib.probe_value.restype = ctypes.c_double
        assert lib.probe_value() == self.expected(), self.world

    def teardown(self):
        # The model is what a fresh build computes: check it against one, in an empty cache.
        if getattr(self, "cache", None) is not None:
            fresh = self.cache.parent / "fresh-cache"
            assert self.load_elsewhere(fresh) == self.expected(), self.world


def test_every_load_equals_a_fresh_build(tmp_path):
    BuildWorld.root = tmp_path
    BuildWorld.TestCase.settings = settings(
        max_examples=2,
        stateful_step_count=5,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    state_machine_test = BuildWorld.TestCase("runTest")
    state_machine_test.runTest()
