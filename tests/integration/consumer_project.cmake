# Installs grove from a build tree into a scratch prefix, then configures, builds and runs
# tests/consumer against that prefix, as an outside project would use grove.
#
#   cmake -DGROVE_BUILD_DIR=<grove build> -DCONSUMER_SOURCE_DIR=<tests/consumer>
#         -DWORK_DIR=<scratch dir> [-DCXX_COMPILER=<c++>] [-DGENERATOR=<generator>]
#         [-DBUILD_TYPE=<type>] [-DEXTRA_PREFIX_PATH=<a;b>] [-DMPIEXEC=<mpirun> [-DNUMPROC_FLAG=-np]]
#         [-DPROGRAM=<executable name>] [-DCUDA_COMPILER=<nvcc>] [-DBUILD_ONLY=ON]
#         -P consumer_project.cmake
# The program runs once as one plain process; with MPIEXEC, once more on 3 ranks. With
# BUILD_ONLY (the GPU consumer, tests/consumer_gpu) it is built and not run here: ctest runs it
# as a test of its own, which skips without a device. Either way the installed package must
# refuse the versions the policy calls incompatible (CHANGELOG.md).
cmake_minimum_required(VERSION 3.25)

foreach(required GROVE_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "consumer_project: -D${required}=... is required")
  endif()
endforeach()

set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
set(ENV{OMPI_MCA_btl_vader_single_copy_mechanism} none)

if(NOT DEFINED PROGRAM OR PROGRAM STREQUAL "")
  set(PROGRAM grove_consumer)
endif()
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${prefix}" "${build}")
file(MAKE_DIRECTORY "${prefix}" "${build}")

# Runs one step; on failure stops with the step's name, its command and its output.
function(run_step name)
  string(JOIN " " command_line ${ARGN})
  message(STATUS "[${name}] ${command_line}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output
                  TIMEOUT 600)
  if(NOT result STREQUAL "0")
    message(FATAL_ERROR "consumer_project: step '${name}' FAILED (${result})\ncommand: ${command_line}\n${output}")
  endif()
  message(STATUS "[${name}] ok")
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

run_step(install "${CMAKE_COMMAND}" --install "${GROVE_BUILD_DIR}" --prefix "${prefix}")
if(NOT EXISTS "${prefix}/include/grove/grove.hpp" OR NOT EXISTS "${prefix}/include/grove/config.hpp")
  message(FATAL_ERROR "consumer_project: the install into ${prefix} has no include/grove/grove.hpp or config.hpp")
endif()
file(GLOB_RECURSE config_files "${prefix}/*/groveConfig.cmake")
if(NOT config_files)
  message(FATAL_ERROR "consumer_project: the install into ${prefix} has no groveConfig.cmake")
endif()

# The version policy: a project asking for another minor version (0.x: any other) is refused,
# before the package's own config file runs. A project of one line per version, no compiler.
file(READ "${GROVE_BUILD_DIR}/groveConfigVersion.cmake" version_file)
string(REGEX MATCH "set\\(PACKAGE_VERSION \"([0-9]+)\\.([0-9]+)\\.([0-9]+)\"\\)" _ "${version_file}")
set(installed_version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
math(EXPR older_minor "${CMAKE_MATCH_2} - 1")
math(EXPR newer_minor "${CMAKE_MATCH_2} + 1")
foreach(asked "${CMAKE_MATCH_1}.${older_minor}" "${CMAKE_MATCH_1}.${newer_minor}")
  if(asked MATCHES "-")
    continue()  # no older minor version of x.0
  endif()
  set(version_project "${WORK_DIR}/asks_${asked}")
  file(MAKE_DIRECTORY "${version_project}")
  file(WRITE "${version_project}/CMakeLists.txt"
       "cmake_minimum_required(VERSION 3.25)\nproject(asks LANGUAGES NONE)\nfind_package(grove ${asked} REQUIRED)\n")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${version_project}" -B "${version_project}/build"
                          "-DCMAKE_PREFIX_PATH=${prefix}"
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output TIMEOUT 120)
  if(result STREQUAL "0" OR NOT output MATCHES "${installed_version}")
    message(FATAL_ERROR "consumer_project: find_package(grove ${asked} REQUIRED) against grove ${installed_version} "
                        "should fail, naming the installed version; it gave (${result}):\n${output}")
  endif()
  message(STATUS "[version] grove ${installed_version} refuses a project that asks for ${asked}: ok")
endforeach()

set(configure_args -S "${CONSUMER_SOURCE_DIR}" -B "${build}" "-DCMAKE_PREFIX_PATH=${prefix}")
if(DEFINED EXTRA_PREFIX_PATH AND NOT EXTRA_PREFIX_PATH STREQUAL "")
  string(REPLACE ";" "\\;" extra "${EXTRA_PREFIX_PATH}")
  set(configure_args -S "${CONSUMER_SOURCE_DIR}" -B "${build}" "-DCMAKE_PREFIX_PATH=${prefix}\\;${extra}")
endif()
if(DEFINED CXX_COMPILER AND NOT CXX_COMPILER STREQUAL "")
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(DEFINED CUDA_COMPILER AND NOT CUDA_COMPILER STREQUAL "")
  list(APPEND configure_args "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}")
endif()
if(DEFINED GENERATOR AND NOT GENERATOR STREQUAL "")
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(DEFINED BUILD_TYPE AND NOT BUILD_TYPE STREQUAL "")
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
run_step(configure "${CMAKE_COMMAND}" ${configure_args})
# The consumer must have used the installed package, not grove's build tree.
string(REGEX MATCH "found grove [^\n]* in [^\n]*" found_line "${step_output}")
message(STATUS "${found_line}")
string(FIND "${found_line}" "in ${prefix}/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "consumer_project: find_package(grove) did not take the installed package under ${prefix}:\n"
                      "${step_output}")
endif()
run_step(build "${CMAKE_COMMAND}" --build "${build}" -j2)
# "An outside program builds with no warning": also those -Werror does not turn into errors (the
# nvcc driver's own, the linker's).
if(step_output MATCHES "[Ww]arning")
  message(FATAL_ERROR "consumer_project: building ${PROGRAM} against the installed grove printed a warning:\n${step_output}")
endif()

find_program(consumer_exe ${PROGRAM} PATHS "${build}" "${build}/Debug" "${build}/Release" NO_DEFAULT_PATH)
if(NOT consumer_exe)
  message(FATAL_ERROR "consumer_project: the build in ${build} produced no ${PROGRAM} executable")
endif()
if(BUILD_ONLY)
  message(STATUS "consumer_project: ${consumer_exe} built; PASSED")
  return()
endif()
run_step(run "${consumer_exe}")
message(STATUS "${step_output}")
if(NOT step_output MATCHES "1 ranks, global count 1000 \\(expected 1000\\)")
  message(FATAL_ERROR "consumer_project: grove_consumer on one process did not report 1000 particles:\n${step_output}")
endif()
if(DEFINED MPIEXEC AND NOT MPIEXEC STREQUAL "")
  if(NOT DEFINED NUMPROC_FLAG OR NUMPROC_FLAG STREQUAL "")
    set(NUMPROC_FLAG -np)
  endif()
  run_step(run_3_ranks "${MPIEXEC}" ${NUMPROC_FLAG} 3 --oversubscribe "${consumer_exe}")
  message(STATUS "${step_output}")
  if(NOT step_output MATCHES "3 ranks, global count 3000 \\(expected 3000\\)")
    message(FATAL_ERROR "consumer_project: grove_consumer on 3 ranks did not report 3000 particles:\n${step_output}")
  endif()
endif()
message(STATUS "consumer_project: PASSED")
