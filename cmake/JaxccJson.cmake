# nlohmann-json (header-only) as the target nlohmann_json::nlohmann_json, from, in this order:
#   1. an installed CMake package (Debian's nlohmann-json3-dev, conda, vcpkg, a -DCMAKE_PREFIX_PATH);
#   2. PyPI's nlohmann-json package in the Python that builds jaxcc: a [build-system] requirement
#      in pyproject.toml, so `pip install .` needs no system package (docs/dependencies.md).
find_package(nlohmann_json 3.9 CONFIG QUIET)
if(nlohmann_json_FOUND)
  message(STATUS "jaxcc: nlohmann-json ${nlohmann_json_VERSION} from ${nlohmann_json_DIR}")
  return()
endif()

# scikit-build-core passes the building interpreter as Python_EXECUTABLE.
set(_jaxcc_python "${Python_EXECUTABLE}")
if(NOT _jaxcc_python)
  find_program(_jaxcc_python NAMES python3 python)
endif()
if(_jaxcc_python)
  execute_process(
    COMMAND "${_jaxcc_python}" -c
            "import importlib.metadata as m, pathlib, nlohmann_json as j; \
print(pathlib.Path(j.__file__).parent / 'include'); print(m.version('nlohmann-json'))"
    RESULT_VARIABLE _jaxcc_json_rc
    OUTPUT_VARIABLE _jaxcc_json_out
    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
if(_jaxcc_python AND _jaxcc_json_rc EQUAL 0)
  string(REPLACE "\n" ";" _jaxcc_json_out "${_jaxcc_json_out}")
  list(GET _jaxcc_json_out 0 _jaxcc_json_include)
  list(GET _jaxcc_json_out 1 _jaxcc_json_version)
endif()
if(NOT _jaxcc_json_include OR NOT EXISTS "${_jaxcc_json_include}/nlohmann/json.hpp"
   OR _jaxcc_json_version VERSION_LESS 3.9)
  message(FATAL_ERROR
    "jaxcc needs nlohmann-json 3.9 or newer (header-only JSON) to build, and found neither a CMake "
    "package nor PyPI's nlohmann-json in ${_jaxcc_python}. `pip install .` installs it into its "
    "build environment by itself; for a build without build isolation run "
    "`pip install nlohmann-json` (or apt-get install nlohmann-json3-dev).")
endif()
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
# Imported include directories are system directories (-isystem), searched before /usr/include.
target_include_directories(nlohmann_json::nlohmann_json INTERFACE "${_jaxcc_json_include}")
set(nlohmann_json_VERSION "${_jaxcc_json_version}")
message(STATUS "jaxcc: nlohmann-json ${_jaxcc_json_version} from PyPI's package, ${_jaxcc_json_include}")
