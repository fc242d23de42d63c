"""Tuned bundles (decision 159b): `jaxcc build` of a module loaded with `tune=` (or a tune="..."
annotation) ships every variant and the tuning decisions made so far; `jaxcc.load_library`
registers the variants and returns TunedFunctions that use the shipped decisions.

    OUT/<name>/jaxcc-tuned.json           what is tuned, the builds, every file's size and SHA-256
    OUT/<name>/autotune-decisions.json    the decisions, re-keyed to the shipped reference build
    OUT/<name>/tune-<CONFIG>/             one ordinary bundle per build (src/bundle/)

The top manifest hashes each build's `jaxcc-bundle.json`, which hashes its library (the core
verifies those before dlopen), and the decisions file: every byte is covered by one chain."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile

from jaxcc.errors import BundleError, SpecError

from .spec import Autotune, TuneSpec, config_tag

MANIFEST = "jaxcc-tuned.json"
DECISIONS = "autotune-decisions.json"
_FORMAT = 1


def is_tuned_bundle(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, MANIFEST))


def _digest(path: str) -> tuple[int, str]:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return os.path.getsize(path), h.hexdigest()


def _file_entry(root: str, relative: str) -> dict:
    size, sha = _digest(os.path.join(root, relative))
    return {"path": relative, "size": size, "sha256": sha}


def _shipped_decisions(module, bundle_key: str) -> list[dict]:
    """The cache's decisions made for exactly this module's builds and candidates, with their ids
    recomputed for the bundle's reference key (a bundle's CUDA build links the static runtime,
    so its key can differ from the in-process build's)."""
    from . import store

    records = []
    stored = store.list_decisions(module._tune_cache_dir)
    for fn, tuned in module.functions.items():
        if not hasattr(tuned, "_variants"):
            continue
        candidates, reference = list(tuned._variants), tuned._reference_tag
        for record in stored:
            if record.get("module") != module.name or record.get("function") != fn:
                continue
            key, device = record.get("key"), record.get("device")
            ident = store.decision_id(module.key, fn, candidates, reference, key, device)
            if record.get("id") != ident:
                continue  # an older build's or another candidate list's
            ident = store.decision_id(bundle_key, fn, candidates, reference, key, device)
            records.append({**record, "id": ident})
    return records


def _function_entry(tuned) -> dict:
    spec, options = tuned._tune, tuned._tune.options
    return {
        "params": {name: list(dict.fromkeys(c[name] for c in spec.configs)) for name in spec.names},
        "configs": spec.configs,
        "reference": spec.reference,
        "candidates": list(tuned._variants),
        "reference_tag": tuned._reference_tag,
        "rtol": options.rtol,
        "atol": options.atol,
        "custom_key": options.key is not None,
        "custom_inputs": options.tune_inputs is not None,
    }


def _check_replaceable(out_dir: str) -> None:
    if not os.path.exists(out_dir) or not os.listdir(out_dir) or is_tuned_bundle(out_dir):
        return
    if os.path.isfile(os.path.join(out_dir, "jaxcc-bundle.json")):
        return
    raise BundleError(
        f"--out {out_dir} exists and is not a jaxcc bundle; give an empty or new directory, or "
        "an earlier bundle to replace"
    )


def write(module, out_dir: str, write_one) -> dict:
    """Writes `module` (a tuned CompiledModule) as a tuned bundle. `write_one(request, dir)` writes
    one build's ordinary bundle and returns its manifest."""
    out_dir = os.path.abspath(out_dir)
    _check_replaceable(out_dir)
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=os.path.basename(out_dir) + ".tmp-", dir=parent)
    try:
        builds, files, bundle_key = [], [], None
        for index, (config, request) in enumerate(module._tune_builds):
            folder = f"tune-{config_tag(config)}"
            manifest = write_one(request, os.path.join(staging, folder))
            if index == 0:
                bundle_key = manifest.key
            builds.append({"dir": folder, "config": config})
            files.append(_file_entry(staging, f"{folder}/jaxcc-bundle.json"))
        decisions = _shipped_decisions(module, bundle_key)
        with open(os.path.join(staging, DECISIONS), "w", encoding="utf-8") as f:
            json.dump(decisions, f, indent=1)
        files.append(_file_entry(staging, DECISIONS))
        tuned = {n: f for n, f in module.functions.items() if hasattr(f, "_variants")}
        top = {
            "format": _FORMAT,
            "module_name": module.name,
            "target_prefix": module._tune_prefix,
            "reference_key": bundle_key,
            "base": module._tune_base,
            "builds": builds,
            "functions": {n: _function_entry(f) for n, f in tuned.items()},
            "files": files,
        }
        with open(os.path.join(staging, MANIFEST), "w", encoding="utf-8") as f:
            json.dump(top, f, indent=1)
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        os.rename(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"builds": len(builds), "decisions": len(decisions), "functions": sorted(tuned)}


def _refused(directory: str, what: str) -> BundleError:
    return BundleError(
        f"bundle {directory}: {what}. Rebuild it with `jaxcc build` (or reinstall the package "
        "that ships it). Nothing was loaded from this bundle."
    )


def _read_manifest(directory: str) -> dict:
    try:
        with open(os.path.join(directory, MANIFEST), encoding="utf-8") as f:
            top = json.load(f)
    except (OSError, ValueError) as e:
        raise _refused(directory, f"{MANIFEST} cannot be read ({e})") from None
    if not isinstance(top, dict) or top.get("format") != _FORMAT:
        raise _refused(directory, f"{MANIFEST} is not format {_FORMAT}")
    return top


def _verify(directory: str, top: dict) -> None:
    """Size and SHA-256 of every file the manifest lists, before anything is loaded."""
    listed = {entry.get("path") for entry in top.get("files", [])}
    needed = {f"{b['dir']}/jaxcc-bundle.json" for b in top.get("builds", [])} | {DECISIONS}
    if needed - listed:
        raise _refused(directory, f"the manifest does not cover {sorted(needed - listed)}")
    for entry in top["files"]:
        relative = str(entry.get("path", ""))
        parts = relative.split("/")
        if os.path.isabs(relative) or ".." in parts or not relative:
            raise _refused(directory, f"the manifest lists an unsafe path {relative!r}")
        path = os.path.join(directory, relative)
        if not os.path.isfile(path):
            raise _refused(directory, f"file {relative} is missing")
        size, sha = _digest(path)
        if size != entry.get("size"):
            raise _refused(
                directory, f"file {relative} has {size} bytes and the manifest says "
                f"{entry.get('size')} (altered)"
            )  # fmt: skip
        if sha != entry.get("sha256"):
            raise _refused(
                directory, f"file {relative} has SHA-256 {sha[:16]}..., and the manifest says "
                f"{str(entry.get('sha256'))[:16]}... (altered)"
            )  # fmt: skip


def _spec(fn: str, entry: dict, given) -> TuneSpec:
    """The shipped declaration, with the callables only the user can give back (`tune=` of
    load_library: key=, tune_inputs=) taken from `given`."""
    options = {"rtol": entry["rtol"], "atol": entry["atol"], "reference": entry["reference"]}
    if given is not None:
        options.update(key=given.key, tune_inputs=given.tune_inputs)
    if entry.get("custom_key") and options.get("key") is None:
        raise SpecError(
            f"load_library: the bundle tuned {fn!r} with a key= function, which a bundle cannot "
            f"carry; pass it again: load_library(path, tune={{{fn!r}: jaxcc.Autotune(key=...)}})"
        )
    spec = TuneSpec(fn, Autotune(**options, **entry["params"]), [dict(c) for c in entry["configs"]])
    return spec


def load(directory: str, load_dir, options: tuple, tune) -> object:
    """`load_dir(dir, target_prefix, *options)` loads one ordinary bundle."""
    from jaxcc.environment import cache_dir

    from . import variants as tune_variants
    from .choose import TunedFunction

    top = _read_manifest(directory)
    _verify(directory, top)
    target_prefix, *rest = options
    prefix = target_prefix or top["target_prefix"]
    tune = dict(tune or {})
    unknown = sorted(set(tune) - set(top["functions"]))
    if unknown:
        raise SpecError(f"load_library: tune= names {unknown}, which the bundle does not tune")
    modules, recipes = {}, {}
    for build in top["builds"]:
        sub = os.path.join(directory, build["dir"])
        tag = config_tag(build["config"])
        sub_prefix = tune_variants.variant_prefix(prefix, build["config"])
        modules[tag] = load_dir(sub, sub_prefix, *rest)
        # How the tuning child loads it (runner.py; decision 191): the same verified bundle.
        recipes[tag] = ("bundle", sub, sub_prefix, modules[tag]._vmap_method)
    reference = load_dir(os.path.join(directory, top["builds"][0]["dir"]), prefix, *rest)
    reference._tune_cache_dir = str(cache_dir.get_cache_dir())
    with open(os.path.join(directory, DECISIONS), encoding="utf-8") as f:
        shipped = {r["id"]: r for r in json.load(f) if isinstance(r, dict) and "id" in r}
    for fn, entry in top["functions"].items():
        spec = _spec(fn, entry, tune.get(fn))
        base = dict(top["base"])
        variants = {}
        for config in spec.configs:
            module = modules.get(config_tag({**base, **config}))
            if module is not None:
                variants[config_tag(config)] = (config, module.functions[fn])
        variants = {t: variants[t] for t in entry["candidates"] if t in variants}
        tuned = TunedFunction(reference, reference.functions[fn], spec, variants)
        tuned._recipes = {
            config_tag(c): recipes[config_tag({**base, **c})] for c, _ in variants.values()
        }
        tuned._reference_tag = entry["reference_tag"]
        tuned._shipped = shipped
        reference.functions[fn] = tuned
        reference.__dict__.pop(fn, None)
    return reference
