"""jaxcc.environment.discovery.nvcc_wheel_dirs keeps its answer between loads (decision 106) but still sees
a pip nvcc wheel appear or go away under a sys.path entry in the same process."""

from __future__ import annotations

import importlib.util
import shutil

from jaxcc.environment import discovery


def _counting_find_spec(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        calls.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    return calls


def test_answer_is_kept_while_nothing_changes(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    first = discovery.nvcc_wheel_dirs()
    # The first look-up of a process is not kept (a single CUDA load skips setting up the memo).
    assert discovery.nvcc_wheel_dirs() == first
    calls = _counting_find_spec(monkeypatch)
    assert discovery.nvcc_wheel_dirs() == first
    assert discovery.nvcc_wheel_dirs() == first
    assert calls == []  # answered from the memo: no importlib look-up


def test_a_wheel_installed_or_removed_in_process_is_seen(tmp_path, monkeypatch):
    monkeypatch.delitem(__import__("sys").modules, "nvidia", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = discovery.nvcc_wheel_dirs()
    bin_dir = tmp_path / "nvidia" / "cu13" / "bin"
    bin_dir.mkdir(parents=True)  # what installing nvidia-cuda-nvcc (cu13) leaves
    importlib.invalidate_caches()
    after = discovery.nvcc_wheel_dirs()
    assert str(bin_dir) in after
    assert after == discovery._find_wheel_dirs()[0]  # the memo agrees with a fresh look-up
    shutil.rmtree(tmp_path / "nvidia")
    importlib.invalidate_caches()
    assert discovery.nvcc_wheel_dirs() == before


def test_bin_added_under_an_existing_wheel_folder_is_seen(tmp_path, monkeypatch):
    # nvidia/cu13 already there (e.g. from a cuBLAS wheel), nvcc's bin/ added later.
    monkeypatch.delitem(__import__("sys").modules, "nvidia", raising=False)
    (tmp_path / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert not any(d.startswith(str(tmp_path)) for d in discovery.nvcc_wheel_dirs())
    (tmp_path / "nvidia" / "cu13" / "bin").mkdir()
    importlib.invalidate_caches()
    assert str(tmp_path / "nvidia" / "cu13" / "bin") in discovery.nvcc_wheel_dirs()
