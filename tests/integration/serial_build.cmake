# Builds the whole repository without MPI or CUDA in a fresh build directory and runs that
# build's tests: grove must work as a plain single-process library with the same API.
#
#   cmake -DSOURCE_DIR=<repository> -DBUILD_DIR=<scratch dir> [-DCXX_COMPILER=<c++>]
#         [-DGENERATOR=<generator>] [-DBUILD_TYPE=<type>] -P serial_build.cmake
cmake_minimum_required(VERSION 3.25)

foreach(required SOURCE_DIR BUILD_DIR)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "serial_build: -D${required}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${SOURCE_DIR}/CMakeLists.txt")
  message(FATAL_ERROR "serial_build: ${SOURCE_DIR} holds no CMakeLists.txt")
endif()

file(REMOVE_RECURSE "${BUILD_DIR}")
file(MAKE_DIRECTORY "${BUILD_DIR}")

function(run_step name timeout)
  string(JOIN " " command_line ${ARGN})
  message(STATUS "[${name}] ${command_line}")
  string(TIMESTAMP started "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output
                  TIMEOUT ${timeout})
  string(TIMESTAMP finished "%s")
  math(EXPR elapsed "${finished} - ${started}")
  if(NOT result STREQUAL "0")
    message(FATAL_ERROR "serial_build: step '${name}' FAILED (${result}) after ${elapsed} s\n"
                        "command: ${command_line}\n${output}")
  endif()
  message(STATUS "[${name}] ok (${elapsed} s)")
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

set(configure_args -S "${SOURCE_DIR}" -B "${BUILD_DIR}" -DGROVE_MPI=OFF -DGROVE_CUDA=OFF -DGROVE_BUILD_SAMPLES=OFF
                   -DGROVE_BUILD_TESTS=ON)
if(DEFINED CXX_COMPILER AND NOT CXX_COMPILER STREQUAL "")
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(DEFINED GENERATOR AND NOT GENERATOR STREQUAL "")
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(DEFINED BUILD_TYPE AND NOT BUILD_TYPE STREQUAL "")
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
# What this build checks is that the single-process Grove compiles and passes its suites, not its
# speed: -O1 compiles the template-heavy suites about 30% faster than -O3 (CI's budget), and the
# suites still run in seconds. NDEBUG as in an ordinary release build.
list(APPEND configure_args "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG")

run_step(configure 300 "${CMAKE_COMMAND}" ${configure_args})
run_step(build 1200 "${CMAKE_COMMAND}" --build "${BUILD_DIR}" -j2)
# A serial build must not have linked MPI: its config says so.
file(READ "${BUILD_DIR}/generated/grove/config.hpp" config)
if(NOT config MATCHES "#define GROVE_HAS_MPI 0")
  message(FATAL_ERROR "serial_build: ${BUILD_DIR}/generated/grove/config.hpp does not say GROVE_HAS_MPI 0:\n${config}")
endif()
get_filename_component(cmake_bin "${CMAKE_COMMAND}" DIRECTORY)
find_program(ctest_exe ctest HINTS "${cmake_bin}" REQUIRED)
run_step(ctest 1200 "${ctest_exe}" --test-dir "${BUILD_DIR}" --output-on-failure --no-tests=error)
message(STATUS "${step_output}")
message(STATUS "serial_build: PASSED")
