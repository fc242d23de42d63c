"""Which backend a call runs (issue 38): decided by the choices current when the call is traced,
and part of every cache key that can hold an executable: jit, the eager fast path, primitives
called inside another primitive's kernel, re-registration with asdefault=True, other threads.
A stateful Hypothesis test interleaves all of them with backends that compute distinct results.
"""

import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ck_helpers import call, make_mul, mul_plus_ten_numba, unique
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import jaxcc

X = jnp.asarray([1.0, 2.0, 3.0], jnp.float32)
Y = jnp.asarray([4.0, 5.0, 6.0], jnp.float32)
CPP = np.asarray(X) * np.asarray(Y)
NUMBA = CPP + 10


@pytest.fixture(autouse=True)
def forget_global_choices():
    yield
    jaxcc.clear_backends()


def outer_of(inner):
    """A primitive whose only kernel calls `inner` (another XLACustomKernel) and adds 1000."""
    outer = jaxcc.XLACustomKernel(unique("outer"))
    outer.def_kernel("wrap", "cpu", lambda **p: lambda x, y: call(inner, x, y) + 1000)
    return outer


def test_a_primitive_inside_another_follows_set_default_in_eager_calls():
    # Before: the outer primitive's eager executable, compiled once with the inner primitive's
    # cpp kernel, kept running it after inner.set_default("cpu", "numba").
    inner = make_mul("inner", distinct_numba=True)
    outer = outer_of(inner)
    for _ in range(2):
        np.testing.assert_array_equal(call(outer, X, Y), CPP + 1000)
    inner.set_default("cpu", "numba")
    for _ in range(2):
        np.testing.assert_array_equal(call(outer, X, Y), NUMBA + 1000)
        np.testing.assert_array_equal(jax.jit(lambda x, y: call(outer, x, y))(X, Y), NUMBA + 1000)
    inner.set_default("cpu", "cpp")
    np.testing.assert_array_equal(call(outer, X, Y), CPP + 1000)


def test_reregistering_the_chosen_backend_as_default_keeps_jit_and_eager_on_it():
    # Before: set_default("numba") then def_numba_kernel(..., asdefault=True) put the jit key
    # back to the state of cpp-as-default: jit found the cpp executables, eager ran numba.
    kernel = make_mul("rereg", distinct_numba=True)
    f = jax.jit(lambda x, y: call(kernel, x, y))
    np.testing.assert_array_equal(f(X, Y), CPP)
    np.testing.assert_array_equal(call(kernel, X, Y), CPP)
    kernel.set_default("cpu", "numba")
    np.testing.assert_array_equal(f(X, Y), NUMBA)
    kernel.def_numba_kernel(
        lambda outs, **p: jaxcc.numba_kernel(mul_plus_ten_numba, outs), asdefault=True
    )
    assert kernel.get_default("cpu") == "numba"
    np.testing.assert_array_equal(f(X, Y), NUMBA)
    np.testing.assert_array_equal(call(kernel, X, Y), NUMBA)
    kernel.set_default("cpu", "cpp")
    np.testing.assert_array_equal(f(X, Y), CPP)
    np.testing.assert_array_equal(call(kernel, X, Y), CPP)


class TraceGate:
    """Holds a jitted function's trace until released, so another thread can switch meanwhile."""

    def __init__(self):
        self.entered, self.release, self.armed = threading.Event(), threading.Event(), False

    def __call__(self):
        if self.armed:
            self.armed = False
            self.entered.set()
            assert self.release.wait(30)


def test_a_switch_during_another_threads_trace_is_not_stored_under_the_old_key():
    # Before: the trace began under the cpp key, bound numba after the switch, and stored the
    # numba executable under the cpp key: f kept returning numba once the switch was undone.
    kernel = make_mul("race", distinct_numba=True)
    gate = TraceGate()

    def traced(x, y):
        gate()
        return call(kernel, x, y)

    f = jax.jit(traced)
    gate.armed = True
    results = []
    worker = threading.Thread(target=lambda: results.append(f(X, Y)))
    worker.start()
    assert gate.entered.wait(30)
    jaxcc.set_backend("cpu", "numba")  # after the key, before the bind
    gate.release.set()
    worker.join(30)
    np.testing.assert_array_equal(results[0], NUMBA)  # bound after the switch
    np.testing.assert_array_equal(f(X, Y), NUMBA)
    jaxcc.set_backend("cpu", None)
    np.testing.assert_array_equal(f(X, Y), CPP)
    np.testing.assert_array_equal(call(kernel, X, Y), CPP)


# -- the stateful test ---------------------------------------------------------------------

NAMES = ("a", "b", "c")


def offset_of(prim_index: int, name: str) -> float:
    return 10.0 * (prim_index + 1) + NAMES.index(name)


class BackendChoice(RuleBasedStateMachine):
    """Two primitives with backends drawn from NAMES (each computing x + its own offset), and an
    outer primitive whose 'wrap' kernel calls the first (+1000) and whose 'a' kernel is direct.
    The model holds the documented rule: backend= on the call; else the global choice if the
    primitive has it; else its default (set_default, else the last asdefault=True, else the
    first kernel)."""

    @initialize()
    def start(self):
        jaxcc.clear_backends()
        self.prims, self.registered, self.first, self.default = [], [], [], []
        for index, name in enumerate(("a", "b")):
            prim = jaxcc.XLACustomKernel(unique(f"machine{index}"))
            self.prims.append(prim)
            self.registered.append([])
            self.first.append(name)
            self.default.append(name)
            self._register(index, name, False)
        self.outer = jaxcc.XLACustomKernel(unique("machine_outer"))
        inner = self.prims[0]
        self.outer.def_kernel("wrap", "cpu", lambda **p: lambda x: self._plain(inner, x) + 1000)
        self.outer.def_kernel("a", "cpu", lambda **p: lambda x: x + 30.0)
        self.global_choice = None
        self.jitted = {}
        self.gate = TraceGate()

    @staticmethod
    def _plain(prim, x, backend=None):
        return prim(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), backend=backend)

    def _register(self, index, name, asdefault):
        offset = offset_of(index, name)
        self.prims[index].def_kernel(
            name, "cpu", lambda **p: lambda x: x + jnp.float32(offset), asdefault
        )
        if name not in self.registered[index]:
            self.registered[index].append(name)
        if asdefault:
            self.default[index] = name

    # -- the model ------------------------------------------------------------------------

    def _expected_prim(self, index, backend=None):
        if backend is None:
            if self.global_choice in self.registered[index]:
                backend = self.global_choice
            else:
                backend = self.default[index]
        return offset_of(index, backend)

    def _expected(self, which, backend=None):
        if which < 2:
            return self._expected_prim(which, backend)
        if backend is None:
            backend = "a" if self.global_choice == "a" else "wrap"
        return 30.0 if backend == "a" else self._expected_prim(0) + 1000

    def _prim(self, which):
        return self.prims[which] if which < 2 else self.outer

    def _check(self, got, which, backend=None, how=""):
        expected = np.asarray(X) + self._expected(which, backend)
        np.testing.assert_array_equal(got, expected, err_msg=f"{how} {which} backend={backend}")

    def _backends(self, which):
        return self.registered[which] if which < 2 else ["wrap", "a"]

    # -- rules ----------------------------------------------------------------------------

    @rule(index=st.integers(0, 1), name=st.sampled_from(NAMES), asdefault=st.booleans())
    def register(self, index, name, asdefault):
        self._register(index, name, asdefault)

    @rule(index=st.integers(0, 1), data=st.data())
    def set_default(self, index, data):
        name = data.draw(st.sampled_from(self.registered[index]))
        self.prims[index].set_default("cpu", name)
        self.default[index] = name

    @rule(name=st.sampled_from((*NAMES, None)))
    def set_backend(self, name):
        jaxcc.set_backend("cpu", name)
        self.global_choice = name

    @rule(which=st.integers(0, 2), data=st.data(), explicit=st.booleans())
    def eager(self, which, data, explicit):
        backend = data.draw(st.sampled_from(self._backends(which))) if explicit else None
        self._check(self._plain(self._prim(which), X, backend), which, backend, "eager")

    @rule(which=st.integers(0, 2), data=st.data(), explicit=st.booleans())
    def jitted(self, which, data, explicit):
        backend = data.draw(st.sampled_from(self._backends(which))) if explicit else None
        key = (which, backend)
        if key not in self.jitted:  # made once, called across every later switch
            prim = self._prim(which)
            self.jitted[key] = jax.jit(lambda x: self._plain(prim, x, backend))
        self._check(self.jitted[key](X), which, backend, "jit")

    @rule(which=st.integers(0, 2), jit=st.booleans())
    def in_a_thread(self, which, jit):
        prim, results = self._prim(which), []
        fn = jax.jit(lambda x: self._plain(prim, x)) if jit else (lambda x: self._plain(prim, x))
        worker = threading.Thread(target=lambda: results.append(fn(X)))
        worker.start()
        worker.join(60)
        self._check(results[0], which, None, "thread")

    @rule(which=st.integers(0, 2), name=st.sampled_from((*NAMES, None)))
    def switch_during_a_trace(self, which, name):
        """Another thread's jitted call traces while this one switches the global backend."""
        key = ("gated", which)
        if key not in self.jitted:
            prim, gate = self._prim(which), self.gate

            def traced(x):
                gate()
                return self._plain(prim, x)

            self.jitted[key] = jax.jit(traced)
        results = []
        self.gate.armed = True
        self.gate.entered.clear()
        self.gate.release.clear()
        worker = threading.Thread(target=lambda: results.append(self.jitted[key](X)))
        worker.start()
        while worker.is_alive() and not self.gate.entered.wait(0.005):
            pass
        traced_now = self.gate.entered.is_set()  # else the call found a compiled executable
        if not traced_now:
            worker.join(60)
            self.gate.armed = False
            self._check(results[0], which, None, "gated (compiled)")
        jaxcc.set_backend("cpu", name)
        self.global_choice = name
        if traced_now:
            self.gate.release.set()
            worker.join(60)
            self._check(results[0], which, None, "gated (traced after the switch)")

    @invariant()
    def gated_functions_agree(self):
        if not hasattr(self, "prims"):
            return
        for (kind, which), fn in list(self.jitted.items()):
            if kind == "gated":
                self._check(fn(X), which, None, "gated later")

    @precondition(lambda self: hasattr(self, "prims"))
    @rule()
    def clear(self):
        jaxcc.clear_backends()
        self.global_choice = None

    def teardown(self):
        jaxcc.clear_backends()


BackendChoice.TestCase.settings = settings(max_examples=20, stateful_step_count=15, deadline=None)


def test_the_documented_choice_holds_under_interleaved_switches_calls_and_threads():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jaxcc.BackendWarning)
        BackendChoice.TestCase("runTest").runTest()
