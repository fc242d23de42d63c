# jaxcc_add_stage(<stage> [TESTS_COMPILE_THE_CODE] [DEPS ...] [LIBS ...]): one static library
# per pipeline stage. Sources are every *.cc in src/<stage>/ except *_test.cc; the tests form
# <stage>_tests. The library is built at the build type's level; with JAXCC_TEST_FILES_AT_O0 the
# tests' own files are compiled at -O0 (about 45% less compile time for the GoogleTest-heavy
# files, decision 145), unless TESTS_COMPILE_THE_CODE says the code under test is header-only and
# compiled into the tests themselves, where -O0 would test it at a level no user builds.
option(JAXCC_TEST_PCH "Precompile GoogleTest's header once for the unit tests' files" ON)

# jaxcc_test_pch(<tests target> SHARED|OWN): the tests' files get <gtest/gtest.h> precompiled
# (decision 255): parsing it is about 1.5 s of a test file's 3 s, under g++ and under clang with
# the sanitizers alike, and there are about a hundred test files. The -O0 test binaries share one
# precompiled header, made by jaxcc_test_pch_holder with exactly their flags (an executable, for
# -fPIE; no test of its own); a binary whose files compile at another level has its own (OWN).
# Each file still includes gtest.h itself, so a build without it (JAXCC_TEST_PCH=OFF) compiles.
function(jaxcc_test_pch target kind)
  if(NOT JAXCC_TEST_PCH)
    return()
  endif()
  if(kind STREQUAL "OWN")
    target_precompile_headers(${target} PRIVATE <gtest/gtest.h>)
    return()
  endif()
  if(NOT TARGET jaxcc_test_pch_holder)
    set(holder_source "${CMAKE_BINARY_DIR}/jaxcc_test_pch_holder.cc")
    if(NOT EXISTS "${holder_source}")
      file(WRITE "${holder_source}" "// Owns the unit tests' precompiled header (JaxccStage.cmake)\n")
    endif()
    add_executable(jaxcc_test_pch_holder EXCLUDE_FROM_ALL "${holder_source}")
    target_link_libraries(jaxcc_test_pch_holder PRIVATE GTest::gtest_main Threads::Threads)
    target_compile_definitions(jaxcc_test_pch_holder PRIVATE
      JAXCC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    target_compile_options(jaxcc_test_pch_holder PRIVATE -O0)
    target_precompile_headers(jaxcc_test_pch_holder PRIVATE <gtest/gtest.h>)
  endif()
  target_precompile_headers(${target} REUSE_FROM jaxcc_test_pch_holder)
endfunction()

function(jaxcc_add_stage stage)
  cmake_parse_arguments(ARG "TESTS_COMPILE_THE_CODE" "" "DEPS;LIBS" ${ARGN})
  file(GLOB stage_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cc")
  file(GLOB stage_tests CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc")
  if(stage_tests)
    list(REMOVE_ITEM stage_sources ${stage_tests})
  endif()
  set(target jaxcc_${stage})
  if(stage_sources)
    add_library(${target} STATIC ${stage_sources})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} PUBLIC ${ARG_DEPS} ${ARG_LIBS})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} INTERFACE ${ARG_DEPS} ${ARG_LIBS})
  endif()
  if(stage_sources)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${target} PRIVATE ${JAXCC_WARNINGS})
  endif()
  if(JAXCC_BUILD_TESTS AND stage_tests)
    # One test binary per stage, so a stage can be built and tested on its own.
    add_executable(${stage}_tests ${stage_tests})
    target_link_libraries(${stage}_tests PRIVATE ${target} GTest::gtest_main Threads::Threads)
    target_compile_definitions(${stage}_tests PRIVATE
      JAXCC_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    if(JAXCC_TEST_FILES_AT_O0 AND NOT ARG_TESTS_COMPILE_THE_CODE)
      target_compile_options(${stage}_tests PRIVATE -O0)
      jaxcc_test_pch(${stage}_tests SHARED)
    else()
      jaxcc_test_pch(${stage}_tests OWN)
    endif()
    gtest_discover_tests(${stage}_tests DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
