# JAXCC_TEST_XLA_INCLUDE_DIR: XLA's FFI headers of the jax that the configuring Python imports, for
# the C++ tests that compare jaxcc with them (kernel_api's ffi_bridge, loader's ABI mirror); empty
# without jax, and those tests skip themselves (__has_include).
set(JAXCC_TEST_XLA_INCLUDE_DIR "")
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import jax.ffi; print(jax.ffi.include_dir())"
    OUTPUT_VARIABLE jaxcc_xla_include_dir
    RESULT_VARIABLE jaxcc_xla_include_result
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET)
  if(jaxcc_xla_include_result EQUAL 0 AND EXISTS "${jaxcc_xla_include_dir}/xla/ffi/api/ffi.h")
    set(JAXCC_TEST_XLA_INCLUDE_DIR "${jaxcc_xla_include_dir}")
  endif()
endif()
if(NOT JAXCC_TEST_XLA_INCLUDE_DIR)
  message(STATUS "jax.ffi.include_dir() not found; the tests against XLA's headers will skip")
endif()
