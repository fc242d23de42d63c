"""What check_kernel runs: one kernel (a loaded KernelFunction or an XLACustomKernel) with its
sample arguments, called in a uniform way, and the comparison every row uses.

Every call gets fresh device copies of the host arguments, so a kernel that writes its inputs
cannot change what a later check feeds it (the `inputs` row reports that write instead)."""

from __future__ import annotations

import dataclasses

import numpy as np

# Default (rtol, atol) of the comparisons between two ways of running the same kernel, by dtype
# kind; integers and booleans compare exactly. Overridden by check_kernel's rtol=/atol=.
DEFAULT_TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-14),
}


def on_device(array) -> object:
    """A copy of a host array as a JAX array of its own, made by a transfer. `jnp.asarray` of a
    NumPy array stages it through `lax.stage`, which JAX compiles once per shape and dtype: in a
    new process that was a seventh of a check's compiles (one per sample and extra shape).
    `device_put` canonicalises the dtype as `jnp.asarray` does (float64 to float32 without
    x64), compiles nothing, and gives a buffer XLA accepts as donated."""
    import jax

    return jax.device_put(np.array(array, copy=True))


_TRANSFORMED: dict = {}  # Subject.transformed's functions, across checks


@dataclasses.dataclass
class Subject:
    fn: object
    host_args: list  # numpy arrays: the sample arguments as given
    outs: object
    attrs: dict
    is_primitive: bool  # an XLACustomKernel (else a loaded KernelFunction)
    rtol: float | None = None
    atol: float | None = None
    backend: str | None = None  # the XLACustomKernel backend calls use (None: its default)
    masks: list | None = None  # per output: True where the kernel writes (from `outputs`)
    writes_outside: bool = False  # the debug build's guard zones caught a write (from `bounds`)
    reads_outside: bool = False  # ... or a read outside an input (from `bounds`; then both)
    # The debug build's outputs at the sample (from `bounds`; -O0, locals pattern-initialised),
    # which `determinism` compares with the release build's (issue 50 item 3).
    debug_outputs: list | None = None
    outs_fn: object = None  # outs= given as a function of the inputs (outs is its sample value)
    reference: object = None  # reference=: a function like the kernel's call, or a backend name
    # More shapes than the sample's (cases.Case), for the outputs, bounds and reference rows.
    cases: list = dataclasses.field(default_factory=list)
    cases_note: str = ""  # how the extra shapes were found, or why there are none
    case_masks: dict = dataclasses.field(default_factory=dict)  # case label -> masks (`outputs`)
    is_callable: bool = False  # any JAX function (custom_vjp, ...): fn(*arrays, **attrs)

    @property
    def name(self) -> str:
        fn = getattr(self.fn, "fun", self.fn)  # a jax.custom_vjp / custom_jvp wraps `fun`
        return getattr(fn, "__qualname__", None) or getattr(fn, "name", "kernel")

    def at(self, case) -> Subject:
        """This subject with `case`'s arguments and outs in place of the sample's."""
        masks = self.case_masks.get(case.label)
        return dataclasses.replace(self, host_args=list(case.args), outs=case.outs, masks=masks)

    def fresh(self):
        return [on_device(a) for a in self.host_args]

    def call(self, *arrays, outs=None, backend=None) -> list:
        """The kernel on `arrays`, its outputs as a flat list."""
        import jax

        if outs is None and self.outs_fn is not None:
            outs = self.outs_fn(*arrays)  # the arrays' own (under export, symbolic) shapes
        outs = self.outs if outs is None else outs
        if self.is_callable:
            return list(jax.tree.leaves(self.fn(*arrays, **self.attrs)))
        if self.is_primitive:
            result = self.fn(*arrays, outs=outs, backend=backend or self.backend, **self.attrs)
            return list(jax.tree.leaves(result))
        result = self.fn(*arrays, outs=outs, **self.attrs)
        return list(result) if isinstance(result, (list, tuple)) else [result]

    def function(self):
        """A function of the arrays alone returning a tuple, for jit, vmap, grad and export: the
        same object for the same kernel, attributes and outs, so a second check finds JAX's
        traces and compiles of it (decision 207)."""
        return self.transformed("call", None)

    def transformed(self, what, make):
        """`make(function)` (`what` names it: "vmap in_axes=1", ...), kept across checks of the
        same kernel, attributes and outs; a fresh one when those are unhashable."""
        call = self._function if what == "call" else None
        try:
            key = (self.fn, self.is_primitive, self.is_callable, self.backend, self.outs_fn,
                   repr(self.outs), tuple(sorted(self.attrs.items())), what)  # fmt: skip
            hash(key)
        except TypeError:
            return call() if call else make(self.function())
        if key not in _TRANSFORMED:
            if len(_TRANSFORMED) > 256:
                _TRANSFORMED.clear()
            _TRANSFORMED[key] = call() if call else make(self.function())
        return _TRANSFORMED[key]

    def _function(self):
        subject = dataclasses.replace(self, masks=None, cases=[], case_masks={})
        return lambda *arrays: tuple(subject.call(*arrays))

    def declared(self) -> list:
        """The output types the call declares (outs, or the one output a KernelFunction infers
        from its first input)."""
        import jax

        if self.is_callable:
            shapes = jax.eval_shape(lambda *xs: self.fn(*xs, **self.attrs), *self.host_args)
            return [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in jax.tree.leaves(shapes)]
        if self.outs is None:
            first = self.host_args[0]
            return [jax.ShapeDtypeStruct(first.shape, first.dtype)]
        return [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in jax.tree.leaves(self.outs)]

    def tolerance(self, dtype) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))
        return (rtol if self.rtol is None else self.rtol, atol if self.atol is None else self.atol)

    def scaled_tolerance(self, expected: np.ndarray, table: dict) -> tuple[float, float]:
        """(rtol, atol) from `table` by dtype (check_kernel's rtol=/atol= win), atol times the
        largest finite magnitude of `expected` (at least 1)."""
        rtol, atol = table.get(np.dtype(expected.dtype).name, (0.0, 0.0))
        rtol = rtol if self.rtol is None else self.rtol
        atol = atol if self.atol is None else self.atol
        if expected.dtype.kind in "fc" or expected.dtype.name == "bfloat16":
            with np.errstate(all="ignore"):
                finite = np.abs(expected.astype(np.complex128 if expected.dtype.kind == "c"
                                                else np.float64))  # fmt: skip
                finite = finite[np.isfinite(finite)]
            atol *= max(1.0, float(finite.max())) if finite.size else 1.0
        return rtol, atol

    def difference(
        self, expected, actual, what: str, exact: bool = False, scaled=None
    ) -> str | None:
        """None where every output agrees (within the dtype's tolerance unless `exact`; only
        where the kernel writes), else where the first one differs. `scaled`: a table of
        (rtol, atol) by dtype whose atol is relative to the expected output's largest magnitude
        (the reference row's)."""
        if len(expected) != len(actual):
            return f"{what}: {len(actual)} outputs, expected {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            e, a = np.asarray(e), np.asarray(a)
            if e.shape != a.shape or e.dtype != a.dtype:
                return (
                    f"{what}: output {i + 1} is {a.dtype}{list(a.shape)}, expected "
                    f"{e.dtype}{list(e.shape)}"
                )
            tolerance = (0.0, 0.0) if exact else self.tolerance(e.dtype)
            if scaled is not None:
                tolerance = self.scaled_tolerance(e, scaled)
            bad = differing(e, a, tolerance)
            mask = self.masks[i] if self.masks else None
            if mask is not None:
                bad &= np.broadcast_to(mask, bad.shape)
            if bad.any():
                at = tuple(int(j) for j in np.argwhere(bad)[0])
                return (
                    f"{what}: output {i + 1} differs at index {at}: {shown(a[at])} vs "
                    f"{shown(e[at])} "
                    f"({int(bad.sum())} of {bad.size} elements)"
                )
        return None


def differing(expected: np.ndarray, actual: np.ndarray, tolerance) -> np.ndarray:
    """Boolean array: where `actual` is not `expected` (NaN matches NaN)."""
    rtol, atol = tolerance
    with np.errstate(all="ignore"):  # infinities and NaNs compare; they are not errors here
        return _differing(expected, actual, rtol, atol)


def _differing(expected, actual, rtol, atol):
    if expected.dtype.kind in "fc" or expected.dtype.name == "bfloat16":
        wide = np.complex128 if expected.dtype.kind == "c" else np.float64
        e, a = expected.astype(wide), actual.astype(wide)
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True) if rtol or atol else None
        if close is None:
            close = (a == e) | (np.isnan(a) & np.isnan(e))
        return ~close
    return expected != actual


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:300]


def shown(value) -> str:
    """An element as Python prints its value (1.5, not np.float32(1.5))."""
    return repr(value.item()) if hasattr(value, "item") else repr(value)
