#include "bindings/bundle_types.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/raise_error.h"
#include "bindings/request_types.h"
#include "bundle/bundle.h"

namespace nb = nanobind;

namespace jaxcc::bindings {
namespace {

using bundle::BundleManifest;

BundleManifest WriteBundlePy(const FrozenRequest& request, pipeline::BuildEnvironment environment,
                             const std::string& out_dir, nb::object on_build_start) {
  AttachCallbacks(environment, nb::none(), std::move(on_build_start));
  Result<BundleManifest> written = [&] {
    nb::gil_scoped_release release;
    return bundle::WriteBundle(request.value, environment, out_dir);
  }();
  if (!written.ok()) RaiseError(written.error());
  return std::move(*written);
}

std::pair<BundleManifest, pipeline::LoadedModule> LoadBundlePy(
    const std::string& dir, const std::string& ffi_include_dir,
    const std::vector<std::string>& gpu_archs, const std::map<std::string, std::string>& sharding) {
  Result<bundle::LoadedBundle> loaded = [&]() -> Result<bundle::LoadedBundle> {
    nb::gil_scoped_release release;
    auto ffi = bundle::ReadFfiApiVersion(ffi_include_dir);
    if (!ffi.ok()) return ffi.error();
    return bundle::LoadBundle(dir, bundle::Runtime{bundle::HostPlatform(), *ffi, gpu_archs},
                              sharding);
  }();
  if (!loaded.ok()) RaiseError(loaded.error());
  return {std::move(loaded->manifest), std::move(loaded->module)};
}

BundleManifest ReadManifestPy(const std::string& dir) {
  auto manifest = bundle::ReadBundleManifest(dir);
  if (!manifest.ok()) RaiseError(manifest.error());
  return std::move(*manifest);
}

nb::tuple FfiApiVersionPy(const std::string& ffi_include_dir) {
  auto version = bundle::ReadFfiApiVersion(ffi_include_dir);
  if (!version.ok()) RaiseError(version.error());
  return nb::make_tuple(version->major, version->minor);
}

}  // namespace

void BindBundle(nb::module_& m) {
  nb::class_<BundleManifest>(m, "BundleManifest", "The manifest of a prebuilt bundle.")
      .def_ro("format", &BundleManifest::format)
      .def_ro("module_name", &BundleManifest::module_name)
      .def_ro("key", &BundleManifest::key)
      .def_ro("jaxcc_version", &BundleManifest::jaxcc_version)
      .def_ro("platform", &BundleManifest::platform)
      .def_ro("host", &BundleManifest::host)
      .def_ro("cuda_archs", &BundleManifest::cuda_archs)
      .def_ro("ptx_arch", &BundleManifest::ptx_arch)
      .def_prop_ro(
          "xla_ffi_api",
          [](const BundleManifest& b) { return nb::make_tuple(b.ffi_api.major, b.ffi_api.minor); })
      .def_ro("compiler", &BundleManifest::compiler)
      .def_ro("nvcc", &BundleManifest::nvcc)
      .def_ro("optimization_level", &BundleManifest::optimization_level)
      .def_ro("target_prefix", &BundleManifest::target_prefix)
      .def_ro("vmap_method", &BundleManifest::vmap_method)
      .def_ro("functions", &BundleManifest::functions)
      .def_prop_ro("files",
                   [](const BundleManifest& b) {
                     std::vector<std::string> names;
                     for (const auto& f : b.files) names.push_back(f.path);
                     return names;
                   })
      .def_ro("created_unix", &BundleManifest::created_unix);
  m.def("write_bundle", &WriteBundlePy, nb::arg("request"), nb::arg("environment"),
        nb::arg("out_dir"), nb::arg("on_build_start") = nb::none(),
        "Build (or fetch) a module and write it as a bundle directory.");
  m.def("load_bundle", &LoadBundlePy, nb::arg("dir"), nb::arg("ffi_include_dir"),
        nb::arg("gpu_archs"), nb::arg("sharding") = std::map<std::string, std::string>(),
        "Verify a bundle, apply `sharding` over its rules and dlopen its library: "
        "(BundleManifest, LoadedModule).");
  m.def("read_bundle_manifest", &ReadManifestPy, nb::arg("dir"));
  m.def("xla_ffi_api_version", &FfiApiVersionPy, nb::arg("ffi_include_dir"),
        "(major, minor) of the XLA FFI C API headers in ffi_include_dir.");
}

}  // namespace jaxcc::bindings
