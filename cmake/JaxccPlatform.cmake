# The two things a jaxcc build cannot do without, checked first, so that their absence is one
# message naming the fix rather than a CMake trace (decision 99). Enables the CXX language.
if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  message(FATAL_ERROR
    "jaxcc supports Linux only (x86_64 and aarch64), and this build is for ${CMAKE_SYSTEM_NAME}. "
    "It loads kernels with dlopen, builds them with g++/clang++ and ninja, and locks its cache "
    "with POSIX calls. On macOS or Windows, run it in a Linux container or WSL2.")
endif()

include(CheckLanguage)
check_language(CXX)
if(NOT CMAKE_CXX_COMPILER)
  if(DEFINED ENV{CXX} AND NOT "$ENV{CXX}" STREQUAL "")
    set(_jaxcc_searched "CXX=$ENV{CXX} is not a working C++ compiler")
  else()
    set(_jaxcc_searched "no c++, g++ or clang++ on PATH, and CXX is not set")
  endif()
  message(FATAL_ERROR
    "jaxcc needs a C++17 compiler to build, and found none (${_jaxcc_searched}). "
    "Install one, e.g.\n"
    "  Debian/Ubuntu: apt-get install g++        Fedora/RHEL: dnf install gcc-c++\n"
    "  conda (no root): conda install -c conda-forge cxx-compiler\n"
    "or set CXX to its path, then run pip again. jaxcc also compiles your kernels with it at "
    "run time; only jaxcc.load_library (prebuilt bundles) works without one.")
endif()
enable_language(CXX)
