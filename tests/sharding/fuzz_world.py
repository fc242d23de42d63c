"""What the differential sharding test builds once and reuses: the family's modules (one cache
entry, a rule per case kind), its bundle, the XLACustomKernels of the grad cases, the
transformed functions and their one-device references, and the HLO guard's expectations."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import family
import fuzz_backends
import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import ad

import jaxcc

BATCHING = ("vmap_in_jit", "jit_in_vmap", "shard_map")


def out_types(kinds, case):
    kernel, rule, shapes_of = kinds[case["kind"]][:3]
    shapes = shapes_of(8)
    outs = family.CASES[case["kind"]][3](shapes) if kinds is family.CASES else [None]
    return [jax.ShapeDtypeStruct(tuple(s), jnp.float32) for s in outs if s is not None]


class World:
    def __init__(self, workdir=None):
        if workdir is None:  # made here, so removed here, when the process ends (issue 48)
            workdir = tempfile.mkdtemp(prefix="jaxcc-fuzz-")
            atexit.register(shutil.rmtree, workdir, True)
        self.workdir = workdir
        self._inline = {}
        self._bundled = {}
        self._functions = {}
        self._references = {}
        self._exports = {}
        plain = jaxcc.load_cpp_inline("fuzz_family", family.SOURCE, family.KERNELS, replace=True)
        self.plain = dict(plain.functions)  # rule-less: the XLACustomKernels' C++ backend
        self.bundle_dir = self._build_bundle()
        self.prims = self._linear_prims()
        self.backend_prims, self.backends = fuzz_backends.make(self.plain)

    # -- kernels -------------------------------------------------------------------------

    def inline(self, kind):
        if kind not in self._inline:
            kernel, rule = family.CASES[kind][:2]
            m = jaxcc.load_cpp_inline("fuzz_family", family.SOURCE, family.KERNELS,
                                      sharding={kernel: rule}, replace=True)  # fmt: skip
            assert m.cache_hit  # a rule is not part of the key: the library is built once
            self._inline[kind] = m[kernel]
        return self._inline[kind]

    def _build_bundle(self):
        """`jaxcc build` of the family with each kernel's first rule in its annotation."""
        first = {}
        for kernel, rule, *_ in family.CASES:
            first.setdefault(kernel, rule)
        source = family.SOURCE + "".join(f'// @BE {k} sharding="{r}"\n' for k, r in first.items())
        path = os.path.join(self.workdir, "fuzz_bundled.cc")
        with open(path, "w") as f:
            f.write(source)
        out = os.path.join(self.workdir, "bundle")
        proc = subprocess.run([sys.executable, "-m", "jaxcc", "build", path, "--out", out],
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        self.annotated = first
        return out

    def bundled(self, kind):
        """The kind's kernel from load_library: the manifest's rule where the kind uses it,
        else `sharding=` over it."""
        if kind not in self._bundled:
            kernel, rule = family.CASES[kind][:2]
            override = None if self.annotated[kernel] == rule else {kernel: rule}
            m = jaxcc.load_library(self.bundle_dir, sharding=override, replace=True)
            assert m[kernel].sharding.text == jaxcc.ShardingRule(rule).text, m[kernel].sharding
            self._bundled[kind] = m[kernel]
        return self._bundled[kind]

    def _linear_prims(self):
        """XLACustomKernels with JVP and transpose rules: mul (elementwise) and matvec (a split
        reduction factor; its transpose is vecmat, another split reduction)."""
        prims = {}
        for kernel, rule in (("mul", "..., ... -> ..."), ("matvec", "r k, k -> r; reduction: k"),
                             ("vecmat", "r k, r -> k; reduction: r")):  # fmt: skip
            prim = jaxcc.XLACustomKernel(f"fuzz_{kernel}", sharding=rule)
            fn = self.plain[kernel]
            prim.def_cpp_kernel(lambda fn=fn, **p: fn)
            prims[kernel] = prim

        def call(kernel, *xs, shape):
            return prims[kernel](*xs, outs=[jax.ShapeDtypeStruct(shape, jnp.float32)])[0]

        mul, matvec = prims["mul"], prims["matvec"]
        mul.def_jvp_rule2(lambda t, x, y, outs, **kw: [call("mul", t, y, shape=x.shape)],
                          lambda t, x, y, outs, **kw: [call("mul", x, t, shape=x.shape)])  # fmt: skip

        def mul_transpose(cts, x, y, **params):
            (ct,) = cts
            if type(ct) is ad.Zero:
                return None, None
            return (
                call("mul", ct, y, shape=ct.shape) if ad.is_undefined_primal(x) else None,
                call("mul", x, ct, shape=ct.shape) if ad.is_undefined_primal(y) else None,
            )

        mul.def_transpose_rule(mul_transpose)
        # d(a v)/dv: matvec of the tangent; its transpose: vecmat(a, ct). `a` is a constant.
        matvec.def_jvp_rule2(None, lambda t, a, v, outs, **kw: [
            call("matvec", a, t, shape=(a.shape[0],))])  # fmt: skip

        def matvec_transpose(cts, a, v, **params):
            (ct,) = cts
            assert not ad.is_undefined_primal(a), "the fuzz differentiates v only"
            if type(ct) is ad.Zero:
                return None, None
            return None, call("vecmat", a, ct, shape=(a.aval.shape[1],) if hasattr(a, "aval")
                              else (a.shape[1],))  # fmt: skip

        matvec.def_transpose_rule(matvec_transpose)
        self.linear_call = call
        return prims

    # -- transformed functions and references --------------------------------------------

    def functions(self, case, mesh):
        """(the function the case runs on the placed inputs, the same on one device)."""
        t = case["transform"]
        key = (case["kind"], t, case["mesh"], tuple(case["batched"]),
               tuple(tuple(map(str, s)) for s in case["specs"]))  # fmt: skip
        if t == "backend":
            prim = self.backend_prims[case["kind"]]
            outs = [jax.ShapeDtypeStruct(s, jnp.float32)
                    for s in fuzz_backends.shapes(case["kind"], 8)[1]]  # fmt: skip

            def call(x):
                return prim(x, outs=outs, backend=case["backend"])

            return call, jax.jit(call)
        if t == "grad":
            kernel, rule, shapes_of = family.LINEAR[case["kind"]]
            shapes = shapes_of(8)
            last = 0 if kernel == "mul" else 1

            def loss(*xs):
                y = self.linear_call(kernel, *xs, shape=shapes[0] if kernel == "mul"
                                     else (shapes[0][0],))  # fmt: skip
                return jnp.sum(jnp.sin(y) * y)

            g = jax.jit(jax.grad(loss, argnums=last))
            return g, g
        kfn = self.bundled(case["kind"]) if t == "bundle" else self.inline(case["kind"])
        types = out_types(family.CASES, case)

        extras = family.EXTRAS.get(family.CASES[case["kind"]][0], {})

        def k(*xs):
            return tuple(kfn(*xs, outs=types, **extras))

        if t in ("jit", "bundle"):
            return k, jax.jit(k)
        in_axes = tuple(0 if b else None for b in case["batched"])
        if t == "vmap_in_jit":
            f = jax.jit(jax.vmap(k, in_axes=in_axes))
            return f, f
        if t == "jit_in_vmap":
            f = jax.vmap(jax.jit(k), in_axes=in_axes)
            return f, jax.jit(jax.vmap(k, in_axes=in_axes))
        if t == "shard_map":
            axis = mesh.axis_names[0]
            P = jax.sharding.PartitionSpec
            in_specs = tuple(P(axis) if b else P() for b in case["batched"])
            body = jax.vmap(k, in_axes=in_axes)
            f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=in_specs,
                                      out_specs=tuple(P(axis) for _ in types)))  # fmt: skip
            return f, jax.jit(body)
        if t == "export":
            if key not in self._exports:
                avals = [jax.ShapeDtypeStruct(s, jnp.float32, sharding=jax.sharding.NamedSharding(
                    mesh, jax.sharding.PartitionSpec(*spec)))
                    for s, spec in zip(family.CASES[case["kind"]][2](8), case["specs"],
                                       strict=True)]  # fmt: skip
                if mesh.axis_types[0] == jax.sharding.AxisType.Auto and not self.batch_path(
                        case, avals):  # fmt: skip
                    # custom_partitioning cannot be serialized: a typed error naming the fix.
                    try:
                        jaxcc.export(jax.jit(k), *avals)
                    except jaxcc.ExportError as e:
                        assert "Explicit axes" in str(e), e
                        self._exports[key] = None
                    else:
                        raise AssertionError("an Auto-mesh rule exported")
                else:
                    blob = jaxcc.export(jax.jit(k), *avals).serialize()
                    self._exports[key] = jax.jit(jaxcc.deserialize(blob).call)
            if self._exports[key] is None:
                return None, jax.jit(k)
            return self._exports[key], jax.jit(k)
        raise AssertionError(t)

    def batch_path(self, case, avals):
        """Whether the call takes XLA's batch partitioner (no callback: it exports anywhere)."""
        from jaxcc.sharding import batch_partition

        if self.inline(case["kind"]).has_scratch:
            return False  # a workspace keeps the call off the batch partitioner (decision 118)
        rule = self.inline(case["kind"]).sharding
        ins, outs = rule.expand([a.shape for a in avals],
                                [t.shape for t in out_types(family.CASES, case)])  # fmt: skip
        return batch_partition.leading_batch_dims(rule, ins, outs) > 0

    def reference(self, case, reference, single):
        t = case["transform"]
        key = (case["kind"], t if t in BATCHING + ("grad", "backend") else "plain",
               case["backend"], tuple(case["batched"]), case["seed"])  # fmt: skip
        if key not in self._references:
            out = jax.tree.leaves(reference(*single))
            self._references[key] = [np.asarray(o) for o in out]
        return self._references[key]

    # -- the HLO guard -------------------------------------------------------------------

    @staticmethod
    def allowed(case, mesh):
        """(the rule allows these input shardings, a reduction factor is split), by the
        semantics docs/sharding.md states, computed here apart from jaxcc's own choice."""
        if case["transform"] == "backend":
            rule = jaxcc.ShardingRule(fuzz_backends.RULES[case["kind"]])
            shapes, outs = fuzz_backends.shapes(case["kind"], 8)
        else:
            rule = jaxcc.ShardingRule(family.CASES[case["kind"]][1])
            shapes = family.CASES[case["kind"]][2](8)
            outs = [t.shape for t in out_types(family.CASES, case)]
        ins, _ = rule.expand(shapes, outs)
        whole = set(rule.need_replication) | set(rule.permutation)
        whole |= {f for op in rule.inputs + rule.outputs for d in op if len(d) > 1 for f in d}
        if len(rule.outputs) > 1:
            whole |= set(rule.reduction)
        axes_of, owner = {}, {}
        for factors, spec in zip(ins, case["specs"], strict=True):
            for factor, entry in zip(factors, list(spec) + [None] * len(factors), strict=False):
                axes = () if entry is None else entry if isinstance(entry, tuple) else (entry,)
                axes = tuple(a for a in axes if mesh.shape[a] > 1)
                if not axes:
                    continue
                if factor is None or factor in whole or axes_of.setdefault(factor, axes) != axes:
                    return False, False
                if any(owner.setdefault(a, factor) != factor for a in axes):
                    return False, False
        return True, any(f in rule.reduction for f in axes_of)

    def guard(self, case, mesh, text, collectives, stats):
        ok, reduced = self.allowed(case, mesh)
        if not ok:
            return
        stats["guarded"] += 1
        counts = {c: text.count(c + "(") + text.count(c + "-start(") for c in collectives}
        assert counts["all-gather"] == 0 and counts["all-to-all"] == 0, counts
        assert (counts["all-reduce"] > 0) == reduced, (counts, reduced)
