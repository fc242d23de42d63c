// jaxcc._core's bundle entry points: write_bundle (jaxcc build), load_bundle (jaxcc.load_library),
// read_bundle_manifest, and the BundleManifest class they return.
#pragma once

#include <nanobind/nanobind.h>

namespace jaxcc::bindings {

void BindBundle(nanobind::module_& m);

}  // namespace jaxcc::bindings
