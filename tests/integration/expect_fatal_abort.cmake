# Runs fatal_error_program and checks that an uncaught grove::Error on one rank ends the whole
# run cleanly: a non-zero exit code, no hang (the other ranks wait in a barrier), and the
# failing rank's message in the output.
#
#   cmake -DPROGRAM=<fatal_error_program> [-DMPIEXEC=<mpirun> [-DRANKS=3]] [-DFAILING_RANK=<r>]
#         -P expect_fatal_abort.cmake
#
# With MPIEXEC the program runs on RANKS ranks (default 3) and the failing rank defaults to the
# last; without it the program runs as one plain process, where the failing rank is 0.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED PROGRAM OR NOT EXISTS "${PROGRAM}")
  message(FATAL_ERROR "expect_fatal_abort: PROGRAM (the fatal_error_program executable) is missing: '${PROGRAM}'")
endif()
if(NOT DEFINED TIMEOUT_SECONDS)
  set(TIMEOUT_SECONDS 60)
endif()

# OpenMPI refuses root without these, and its single-copy shared-memory path needs ptrace rights.
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
set(ENV{OMPI_MCA_btl_vader_single_copy_mechanism} none)

set(program_args)
if(DEFINED FAILING_RANK AND NOT FAILING_RANK STREQUAL "")
  set(program_args ${FAILING_RANK})
endif()

if(DEFINED MPIEXEC AND NOT MPIEXEC STREQUAL "")
  if(NOT DEFINED RANKS)
    set(RANKS 3)
  endif()
  if(NOT DEFINED NUMPROC_FLAG)
    set(NUMPROC_FLAG -np)
  endif()
  set(command ${MPIEXEC} ${NUMPROC_FLAG} ${RANKS} --oversubscribe ${PROGRAM} ${program_args})
else()
  set(RANKS 1)
  set(command ${PROGRAM} ${program_args})
endif()
if(DEFINED FAILING_RANK AND NOT FAILING_RANK STREQUAL "")
  set(expected_rank ${FAILING_RANK})
else()
  math(EXPR expected_rank "${RANKS} - 1")
endif()

# execute_process's TIMEOUT kills only the launcher; coreutils' timeout, a little sooner, sends
# it SIGTERM instead, so that it takes its ranks down with it and leaves no process spinning.
math(EXPR soft_timeout "${TIMEOUT_SECONDS} - 5")
find_program(timeout_tool timeout)
set(soft_timeout_codes)
if(timeout_tool AND soft_timeout GREATER 0)
  set(command ${timeout_tool} -k 3 ${soft_timeout} ${command})
  set(soft_timeout_codes 124 137)
endif()

string(JOIN " " command_line ${command})
message(STATUS "running: ${command_line}")
string(TIMESTAMP started "%s")
# One variable for both streams: the output is stdout and stderr merged.
execute_process(COMMAND ${command}
                RESULT_VARIABLE result
                OUTPUT_VARIABLE output
                ERROR_VARIABLE output
                TIMEOUT ${TIMEOUT_SECONDS})
string(TIMESTAMP finished "%s")
math(EXPR elapsed "${finished} - ${started}")
message(STATUS "exit: '${result}' after ${elapsed} s; output:\n${output}")

if(NOT result MATCHES "^-?[0-9]+$")
  # Not an exit code: a timeout ("Process terminated due to timeout") or death by a signal.
  if(result MATCHES "timeout")
    message(FATAL_ERROR "FAILED: the run did not end within ${TIMEOUT_SECONDS} s: the ranks waiting in the "
                        "barrier were not aborted (${result})")
  endif()
  message(FATAL_ERROR "FAILED: the run was killed (${result}) instead of exiting with an error code: grove's "
                      "fatal-error handler did not end it cleanly")
elseif(result IN_LIST soft_timeout_codes)
  message(FATAL_ERROR "FAILED: the run did not end within ${soft_timeout} s (timeout exit ${result}): the ranks "
                      "waiting in the barrier were not aborted")
elseif(result EQUAL 0)
  message(FATAL_ERROR "FAILED: the run exited with code 0 although rank ${expected_rank} threw grove::Error")
endif()

# A clean abort goes through grove's handler: its own line, starting with grove's error text and
# naming the rank, not the C++ runtime's "terminate called ... what(): ..." followed by a
# SIGABRT (which a launcher would also turn into a non-zero exit).
set(expected_line "(^|\n)grove error on rank ${expected_rank} [^\n]*deliberate failure")
if(NOT output MATCHES "${expected_line}")
  message(FATAL_ERROR "FAILED: no output line starts with grove's error naming rank ${expected_rank} and the text "
                      "'deliberate failure'")
endif()
foreach(crash_sign IN ITEMS "terminate called" "received signal" "exited on signal")
  string(FIND "${output}" "${crash_sign}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "FAILED: the output says '${crash_sign}': the program crashed instead of being ended by "
                        "grove's fatal-error handler")
  endif()
endforeach()
message(STATUS "PASSED: exit '${result}', rank ${expected_rank}'s error reported, no hang (${elapsed} s)")
