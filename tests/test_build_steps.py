"""`module.build_steps`: each compile and the link of a fresh build as ninja's log recorded them,
only this run's (a user's build_directory keeps older runs in the same log)."""

import pytest

import jaxcc

SOURCE = r"""
#include "jaxcc/jaxcc.h"
void add(const jaxcc::Tensor x, jaxcc::Tensor out) {
  for (int64_t i = 0; i < x.numel(); ++i) out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + C;
}
"""


def outputs(module) -> list:
    return sorted(step.output for step in module.build_steps)


def test_steps_of_each_run_only(tmp_path, unique_name):
    build_dir = tmp_path / "build"
    first = jaxcc.load_cpp_inline(
        unique_name, SOURCE.replace("C", "1.0f"), ["add"], build_directory=str(build_dir)
    )
    so = f"{unique_name}.so"
    assert outputs(first) == sorted(["ffi_frame_runtime.o", "ffi_wrapper.o", "kernel_0.o", so])
    for step in first.build_steps:
        assert 0 <= step.start_seconds <= step.end_seconds <= first.build_seconds + 0.05
    link = next(s for s in first.build_steps if s.output == so)
    assert all(s.end_seconds <= link.start_seconds for s in first.build_steps if s is not link)
    # An edit in the same directory: ninja compiles the kernel unit and links; the log's earlier
    # lines are not this run's.
    with pytest.warns(jaxcc.ReloadWarning):  # new code under a live name (decision 155)
        edited = jaxcc.load_cpp_inline(
            unique_name, SOURCE.replace("C", "2.0f"), ["add"], build_directory=str(build_dir)
        )
    assert outputs(edited) == sorted(["kernel_0.o", so])
