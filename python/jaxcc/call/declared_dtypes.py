"""Declared dtypes (`arg:float32`, `ret:int32`; decision 158), checked at the call before any
`ffi_call` is staged, so a wrong dtype is a `DTypeMismatchError` at the user's call site (eager,
under `jax.jit` at trace time, under `jax.vmap` per traced element) instead of a kernel error
after dispatch (`data_ptr<T>()`, decision 149) or, for untyped pointers, wrong numbers."""

from __future__ import annotations

from jaxcc.errors import DTypeMismatchError

# Dtypes that exist in JAX only with jax_enable_x64 (without it JAX makes them 32-bit).
_WIDE = frozenset({"float64", "int64", "uint64", "complex128"})


def _canonical(dtype):
    """`dtype` as the kernel receives it: JAX's canonical form (x64 off: float64 is float32, so
    a NumPy float64 array reaches the kernel as float32, eager and under jit alike)."""
    import jax

    return jax.dtypes.canonicalize_dtype(dtype)


def _x64_hint(declared: str) -> str:
    import jax

    if declared in _WIDE and not jax.config.jax_enable_x64:
        return (
            f" JAX makes every {declared} array 32-bit unless 64-bit types are on: "
            "jax.config.update('jax_enable_x64', True) (or JAX_ENABLE_X64=1)."
        )
    return ""


def _label(what: str, index: int, name: str) -> str:
    return f"{what} {index + 1}" + (f" ('{name}')" if name else "")


class DeclaredDtypes:
    """The dtypes one function's spec declares: per input and per output, a dtype name or None
    (any). Made once per KernelFunction; `of` returns None when nothing is declared, so an
    untyped function's call pays one `is None` test."""

    __slots__ = ("function", "args", "rets", "_arg_checks", "_resolved")

    def __init__(self, function: str, args: list, rets: list):
        self.function = function
        self.args = args  # [(dtype name or None, parameter name)]
        self.rets = rets
        self._arg_checks = [(i, d, n) for i, (d, n) in enumerate(args) if d is not None]
        self._resolved = {}  # dtype name -> numpy dtype, filled at the first call

    @classmethod
    def of(cls, function: str, params) -> DeclaredDtypes | None:
        args, rets = [], []
        for p in params:
            kind = p.kind
            if kind == "arg":
                args.append((p.dtype, p.name))
            elif kind == "ret":
                rets.append((p.dtype, p.name))
        if all(d is None for d, _ in args) and all(d is None for d, _ in rets):
            return None
        return cls(function, args, rets)

    def _dtype(self, name: str):
        dtype = self._resolved.get(name)
        if dtype is None:
            import jax.numpy as jnp

            dtype = self._resolved[name] = jnp.dtype(name)
        return dtype

    def single_output_dtype(self, default):
        """The dtype of the one output `outs=None` stands for: the declared one, else `default`
        (the first input's, as without a declaration)."""
        declared = self.rets[0][0] if len(self.rets) == 1 else None
        return default if declared is None else self._dtype(declared)

    def check_inputs(self, arrays) -> None:
        for i, declared, name in self._arg_checks:
            given, wanted = arrays[i].dtype, self._dtype(declared)
            if given == wanted and declared not in _WIDE:
                continue  # a dtype JAX keeps as it is: equal now is equal at the kernel
            given = _canonical(given)
            if given != wanted:
                self._refuse(_label("input", i, name), "arg", declared, given,
                             f"cast it with `{name or 'x'}.astype(jnp.{declared})`")  # fmt: skip

    def check_outputs(self, types) -> None:
        """`types`: the outputs' jax.ShapeDtypeStructs, in order."""
        for i, ((declared, name), out) in enumerate(zip(self.rets, types, strict=True)):
            if declared is None:
                continue
            given = _canonical(out.dtype)
            if given != self._dtype(declared):
                fix = f"pass outs= with dtype jnp.{declared}"
                if len(self.rets) == 1 and self.args:
                    fix += " (or leave outs= out: the declared dtype is its default)"
                self._refuse(_label("output", i, name) + " in outs=", "ret", declared, given, fix)

    def _refuse(self, what, kind, declared, given, fix) -> None:
        given_name = getattr(given, "name", str(given))
        raise DTypeMismatchError(
            f"{self.function}: {what} is {given_name} but the arg_spec declares "
            f"`{kind}:{declared}`; {fix}, or change the spec (`{kind}:{given_name}`, or a bare "
            f"`{kind}` for any dtype).{_x64_hint(declared)}"
        )
