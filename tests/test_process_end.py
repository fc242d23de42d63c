"""No process ends inside a kernel without naming it (issue 49 items 14-16, decisions 181-184):
abort() and a failed assert (SIGABRT), std::terminate (an exception out of a noexcept function,
out of an OpenMP region), exit(), quick_exit(), _exit() and _Exit(), and faults on threads that carry no mark (an
OpenMP worker, a std::thread the kernel started). Each case runs in a child process with real
JAX and g++; the child must end exactly as it would without jaxcc (same signal, same status),
with Python's faulthandler still chained after jaxcc's lines."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import jaxcc

SOURCE = textwrap.dedent(
    """\
    #undef NDEBUG
    #include <cassert>
    #include <chrono>
    #include <cstdlib>
    #include <stdexcept>
    #include <thread>

    #include <omp.h>
    #include <sys/wait.h>
    #include <unistd.h>

    #include "jaxcc/jaxcc.h"

    void fine(const jaxcc::Tensor x, jaxcc::Tensor out) {}
    void calls_abort(const jaxcc::Tensor x, jaxcc::Tensor out) { std::abort(); }
    void failed_assert(const jaxcc::Tensor x, jaxcc::Tensor out) {
      assert(x.numel() == 12345 && "x has 12345 elements");
    }
    static void cannot_throw() noexcept { throw std::runtime_error("boom from a noexcept helper"); }
    void noexcept_throw(const jaxcc::Tensor x, jaxcc::Tensor out) { cannot_throw(); }
    void calls_exit(const jaxcc::Tensor x, jaxcc::Tensor out) { std::exit(3); }
    void calls_quick_exit(const jaxcc::Tensor x, jaxcc::Tensor out) { std::quick_exit(4); }
    void calls_underscore_exit(const jaxcc::Tensor x, jaxcc::Tensor out) { _exit(5); }
    void calls_Exit(const jaxcc::Tensor x, jaxcc::Tensor out) { std::_Exit(6); }
    // A child forked inside a kernel (a fork/exec that failed) ends only itself: no report.
    void forks_a_child(const jaxcc::Tensor x, jaxcc::Tensor out) {
      const pid_t child = fork();
      if (child == 0) _exit(0);
      waitpid(child, nullptr, 0);
    }
    void fault_on_omp_worker(const jaxcc::Tensor x, jaxcc::Tensor out) {
      #pragma omp parallel num_threads(2)
      {
        if (omp_get_thread_num() == 1) *static_cast<volatile int*>(nullptr) = 1;
      }
    }
    void fault_on_own_thread(const jaxcc::Tensor x, jaxcc::Tensor out) {
      std::thread([] { *static_cast<volatile int*>(nullptr) = 1; }).join();
    }
    // A thread that outlives the call and faults once the kernel has returned.
    void fault_after_return(const jaxcc::Tensor x, jaxcc::Tensor out) {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        *static_cast<volatile int*>(nullptr) = 1;
      }).detach();
    }
    // The README quickstart's loop under OpenMP: given int32, data_ptr<float>() throws a
    // DTypeError inside the parallel region.
    void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
      #pragma omp parallel for num_threads(2)
      for (int64_t i = 0; i < x.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
    }
    // The fix the docs show: the pointers taken before the region, where a DTypeError still
    // fails only the call.
    void add_one_checked(const jaxcc::Tensor x, jaxcc::Tensor out) {
      const float* in = x.data_ptr<float>();
      float* o = out.data_ptr<float>();
      #pragma omp parallel for num_threads(2)
      for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1.0f;
    }
    """
)

FUNCTIONS = [
    "fine", "calls_abort", "failed_assert", "noexcept_throw", "calls_exit", "calls_quick_exit",
    "calls_underscore_exit", "calls_Exit", "forks_a_child", "fault_on_omp_worker",
    "fault_on_own_thread", "fault_after_return", "add_one", "add_one_checked",
]  # fmt: skip

CALLER = textwrap.dedent(
    f"""
    import sys, jax.numpy as jnp, jaxcc
    path, what, dtype = sys.argv[1], sys.argv[2], sys.argv[3]
    mod = jaxcc.load_cpp_file(path, name="process_end", extra_cflags=["-fopenmp", "-g"],
                              functions={FUNCTIONS!r})
    x = jnp.zeros(64, dtype)
    mod.fine(x).block_until_ready()
    try:
        getattr(mod, what)(x).block_until_ready()
    except jaxcc.KernelError as e:
        print("KernelError:", e)
    if what == "fault_after_return":
        import time
        time.sleep(5)
    print("survived")
    """
)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The module, built once here so that each child only loads it from the cache."""
    directory = tmp_path_factory.mktemp("process_end")
    path = directory / "kernels.cc"
    path.write_text(SOURCE)
    (directory / "caller.py").write_text(CALLER)
    jaxcc.load_cpp_file(
        path, name="process_end", extra_cflags=["-fopenmp", "-g"], functions=FUNCTIONS
    )
    return path


def run(source, what, dtype="float32", faulthandler=True):
    command = [sys.executable] + (["-X", "faulthandler"] if faulthandler else [])
    command += [str(source.parent / "caller.py"), str(source), what, dtype]
    env = {**os.environ, "OMP_NUM_THREADS": "2"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def assert_died_of(done, sig):
    assert done.returncode in (-sig, 128 + sig), (done.returncode, done.stderr[-3000:])
    assert "survived" not in done.stdout


ABORTED = "fatal signal SIGABRT (abort: abort(), a failed assert() or std::terminate)"
NO_MARK = "(invalid memory access at address 0x0) on a thread without a jaxcc mark"


def kernel(name):
    return f"jaxcc kernel '{name}' of module 'process_end' (XLA FFI target 'process_end.{name}')"


def test_abort_in_a_kernel_names_it_and_dies_of_sigabrt(source):
    done = run(source, "calls_abort")
    assert_died_of(done, signal.SIGABRT)
    err = done.stderr
    assert f"jaxcc: {ABORTED} in {kernel('calls_abort')}" in err, err
    assert f"defined in {source}" in err
    # Python's faulthandler still runs after jaxcc's lines.
    assert "Fatal Python error: Aborted" in err
    assert err.index("jaxcc: fatal signal") < err.index("Fatal Python error")


def test_a_failed_assert_in_a_kernel_names_it(source):
    done = run(source, "failed_assert", faulthandler=False)
    assert_died_of(done, signal.SIGABRT)
    assert 'Assertion `x.numel() == 12345 && "x has 12345 elements"\' failed' in done.stderr
    assert f"jaxcc: {ABORTED} in {kernel('failed_assert')}" in done.stderr


def test_an_exception_out_of_a_noexcept_function_names_the_kernel_and_the_exception(source):
    done = run(source, "noexcept_throw")
    assert_died_of(done, signal.SIGABRT)
    err = done.stderr
    assert f"jaxcc: std::terminate called in {kernel('noexcept_throw')}" in err, err
    assert "uncaught exception std::runtime_error: boom from a noexcept helper" in err
    # One report: the SIGABRT that std::terminate raises next adds no second one.
    assert err.count("jaxcc: std::terminate") == 1 and "jaxcc: fatal signal" not in err, err
    # The handler it replaced still runs (libstdc++'s "terminate called after throwing ...").
    assert "terminate called after throwing an instance of 'std::runtime_error'" in err


EXITS = [
    ("calls_exit", 3, "exit()"),
    ("calls_quick_exit", 4, "quick_exit()"),
    ("calls_underscore_exit", 5, "_exit()"),
    ("calls_Exit", 6, "_Exit()"),
]


@pytest.mark.parametrize(("what", "status", "how"), EXITS, ids=[e[0] for e in EXITS])
def test_every_exit_in_a_kernel_names_it_and_keeps_the_status(source, what, status, how):
    done = run(source, what, faulthandler=False)
    assert done.returncode == status, (done.returncode, done.stderr[-3000:])
    assert "survived" not in done.stdout
    assert f"jaxcc: {how} called in {kernel(what)}" in done.stderr, done.stderr


def test_a_child_forked_in_a_kernel_exits_without_a_report(source):
    done = run(source, "forks_a_child")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "survived" in done.stdout
    assert "jaxcc:" not in done.stderr, done.stderr


@pytest.mark.parametrize("what", ["fault_on_omp_worker", "fault_on_own_thread"])
def test_a_fault_on_a_thread_without_a_mark_names_the_running_kernel(source, what):
    done = run(source, what)
    assert_died_of(done, signal.SIGSEGV)
    err = done.stderr
    assert f"jaxcc: fatal signal SIGSEGV {NO_MARK}" in err, err
    assert f"while this kernel runs: {kernel(what)}" in err
    assert "kernels.cc:" in err  # the faulting line, from the library's debug information
    assert "Fatal Python error: Segmentation fault" in err


def test_a_fault_in_a_module_after_its_kernel_returned_names_the_library(source):
    done = run(source, "fault_after_return")
    assert_died_of(done, signal.SIGSEGV)
    err = done.stderr
    assert "in the library of a jaxcc module while none of its kernels runs" in err, err
    assert "process_end." in err and ".so" in err  # the library's path
    assert "fault_after_return" in err  # the function, from the library's debug information


def test_a_dtype_error_inside_an_openmp_region_is_reported_as_itself(source):
    # issue 49 item 16: "terminate called after throwing ..." and nothing that named the kernel.
    done = run(source, "add_one", dtype="int32")
    assert_died_of(done, signal.SIGABRT)
    err = done.stderr
    assert "jaxcc: std::terminate called" in err, err
    assert kernel("add_one") in err
    assert (
        "uncaught exception jaxcc::DTypeError: parameter 'x' is int32, but the kernel reads it "
        "as float" in err
    ), err
    assert "take data_ptr<T>() before `#pragma omp parallel`" in err


def test_the_pointers_taken_before_the_region_fail_only_the_call(source):
    # The fix the report and docs/usage.md give: the same DTypeError, now a KernelError.
    done = run(source, "add_one_checked", dtype="int32")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "KernelError: " in done.stdout, done.stdout
    assert "add_one_checked: parameter 'x' is int32" in done.stdout, done.stdout
    assert "survived" in done.stdout
