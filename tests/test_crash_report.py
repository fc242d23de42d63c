"""A fatal signal inside a jaxcc kernel names the kernel (issue 37 item 6, decision 150b): the
function, its module and FFI target, its source file, the line where the library has debug
information, and how to rerun under the debug profile; then the process dies of the signal, and
Python's faulthandler (enabled before or after the load) still prints its traceback."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

SOURCE = textwrap.dedent(
    """\
    #include <atomic>
    #include <thread>

    #include "jaxcc/jaxcc.h"

    void crash_null(const jaxcc::Tensor x, jaxcc::Tensor out) {
      volatile float* p = nullptr;
      *p = 1.0f;  // line 8
    }

    void divide_by_zero(const jaxcc::Tensor x, jaxcc::Tensor out, int32_t zero) {
      volatile int32_t num = 7;
      static_cast<int32_t*>(out.data_ptr())[0] = num / zero;  // line 13
    }

    void fine(const jaxcc::Tensor x, jaxcc::Tensor out) {}

    // Crashes in a chunk that a pool thread (not the calling one) runs.
    void crash_in_pool(const jaxcc::Tensor x, jaxcc::Tensor out, jaxcc::ThreadPool& pool) {
      const auto caller = std::this_thread::get_id();
      std::atomic<bool> crashed{false};
      pool.parallel_for(0, 64, 1, [&](int64_t) {
        if (std::this_thread::get_id() != caller) {
          crashed = true;
          *static_cast<volatile int*>(nullptr) = 1;
        }
        for (int spin = 0; !crashed && spin < 20000; ++spin) std::this_thread::yield();
      });
    }
    """
)

CALLER = textwrap.dedent(
    """
    import sys, jax.numpy as jnp, jaxcc
    path, name, what, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
    mod = jaxcc.load_cpp_file(path, name=name, extra_cflags=flags,
                              functions=["crash_null", "divide_by_zero", "fine", "crash_in_pool"])
    x = jnp.zeros(4, jnp.int32)
    mod.fine(x).block_until_ready()
    if what == "null":
        mod.crash_null(x).block_until_ready()
    elif what == "div":
        mod.divide_by_zero(x, zero=0).block_until_ready()
    elif what == "faulthandler-after":
        import faulthandler
        faulthandler.enable()
        mod.crash_null(x).block_until_ready()
    elif what == "pool":
        mod.crash_in_pool(x).block_until_ready()
    elif what == "outside":
        import ctypes
        ctypes.string_at(0)
    print("survived")
    """
)


def _run(tmp_path, name, what, flags="", faulthandler=False, env=None):
    source = tmp_path / "crashy.cc"
    source.write_text(SOURCE)
    script = tmp_path / "caller.py"
    script.write_text(CALLER)
    command = [sys.executable] + (["-X", "faulthandler"] if faulthandler else [])
    command += [str(script), str(source), name, what, flags]
    return subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300
    )


def _assert_died_of(done, sig):
    assert done.returncode in (-sig, 128 + sig), (done.returncode, done.stderr[-3000:])
    assert "survived" not in done.stdout


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm-lazy"])
def test_null_dereference_in_a_kernel_names_it_with_its_line(tmp_path, warm):
    if warm:  # the second process maps the library lazily, at the first call
        _run(tmp_path, "crash_mod_g", "none", "-g")
    done = _run(tmp_path, "crash_mod_g", "null", "-g", faulthandler=True)
    _assert_died_of(done, signal.SIGSEGV)
    err = done.stderr
    assert "fatal signal SIGSEGV" in err
    assert "jaxcc kernel 'crash_null' of module 'crash_mod_g'" in err
    assert "XLA FFI target 'crash_mod_g.crash_null'" in err
    assert f"defined in {tmp_path / 'crashy.cc'}" in err
    assert "crashy.cc:8" in err  # the line, from the library's debug information
    assert "JAXCC_DEBUG=1" in err
    # Python's faulthandler (enabled before the load) still prints its traceback after ours.
    assert "Fatal Python error: Segmentation fault" in err
    assert err.index("jaxcc: fatal signal") < err.index("Fatal Python error")


def test_integer_divide_by_zero_in_a_kernel_names_it(tmp_path):
    done = _run(tmp_path, "crash_mod_div", "div")
    _assert_died_of(done, signal.SIGFPE)
    err = done.stderr
    assert "fatal signal SIGFPE (integer divide by zero)" in err
    assert "jaxcc kernel 'divide_by_zero' of module 'crash_mod_div'" in err
    assert f"defined in {tmp_path / 'crashy.cc'}" in err
    assert "no source line: the library has no debug information" in err  # built without -g
    assert "JAXCC_DEBUG=1" in err


def test_faulthandler_enabled_after_the_load_still_prints_both(tmp_path):
    done = _run(tmp_path, "crash_mod_fh", "faulthandler-after")
    _assert_died_of(done, signal.SIGSEGV)
    assert "jaxcc kernel 'crash_null'" in done.stderr
    assert "Fatal Python error: Segmentation fault" in done.stderr


def test_a_crash_outside_any_kernel_prints_nothing_from_jaxcc(tmp_path):
    done = _run(tmp_path, "crash_mod_out", "outside", faulthandler=True)
    _assert_died_of(done, signal.SIGSEGV)
    assert "jaxcc:" not in done.stderr
    assert "Fatal Python error: Segmentation fault" in done.stderr


def test_crash_report_off_leaves_the_signal_alone(tmp_path):
    done = _run(tmp_path, "crash_mod_off", "null", env={"JAXCC_CRASH_REPORT": "0"})
    _assert_died_of(done, signal.SIGSEGV)
    assert "jaxcc:" not in done.stderr


def test_the_rerun_hint_holds_the_debug_profile_names_the_line(tmp_path):
    done = _run(tmp_path, "crash_mod_dbg", "null", env={"JAXCC_DEBUG": "1"})
    _assert_died_of(done, signal.SIGSEGV)
    assert "jaxcc kernel 'crash_null'" in done.stderr
    assert "crashy.cc:8" in done.stderr  # -g of the profile, without any flag of the user's


def test_a_crash_in_a_pool_thread_of_parallel_for_names_the_kernel(tmp_path):
    done = _run(tmp_path, "crash_mod_pool", "pool")
    _assert_died_of(done, signal.SIGSEGV)
    assert "jaxcc kernel 'crash_in_pool' of module 'crash_mod_pool'" in done.stderr
