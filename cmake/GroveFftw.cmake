# Finds FFTW 3 (double precision) for grove's particle-mesh module, and FFTW's MPI library when
# grove is built with MPI. Sets GROVE_HAS_PM (ON when everything PM needs is there) and
# GROVE_FFTW_LIBRARIES (full paths, so an installed grove's exported link line needs no find
# module of its own). Without FFTW grove builds as before, without PS::PM::ParticleMesh.
option(GROVE_PM "Build the particle-mesh module (PS::PM::ParticleMesh) when FFTW is found" ON)

set(GROVE_HAS_PM OFF)
set(GROVE_FFTW_LIBRARIES)
if(GROVE_PM)
  find_path(GROVE_FFTW_INCLUDE_DIR fftw3.h)
  find_library(GROVE_FFTW_LIBRARY NAMES fftw3)
  set(grove_fftw_required GROVE_FFTW_INCLUDE_DIR GROVE_FFTW_LIBRARY)
  if(GROVE_MPI)
    find_path(GROVE_FFTW_MPI_INCLUDE_DIR fftw3-mpi.h HINTS ${GROVE_FFTW_INCLUDE_DIR})
    find_library(GROVE_FFTW_MPI_LIBRARY NAMES fftw3_mpi HINTS ${GROVE_FFTW_LIBRARY}/..)
    list(APPEND grove_fftw_required GROVE_FFTW_MPI_INCLUDE_DIR GROVE_FFTW_MPI_LIBRARY)
  endif()
  set(grove_fftw_missing)
  foreach(var IN LISTS grove_fftw_required)
    if(NOT ${var})
      list(APPEND grove_fftw_missing ${var})
    endif()
  endforeach()
  if(grove_fftw_missing)
    message(STATUS "grove: FFTW not found (${grove_fftw_missing}): building without the particle-mesh "
                   "module (PS::PM::ParticleMesh) and its tests; install libfftw3-dev libfftw3-mpi-dev to get it")
  else()
    set(GROVE_HAS_PM ON)
    if(GROVE_MPI)
      # fftw3_mpi before fftw3: static links resolve left to right.
      set(GROVE_FFTW_LIBRARIES ${GROVE_FFTW_MPI_LIBRARY} ${GROVE_FFTW_LIBRARY})
    else()
      set(GROVE_FFTW_LIBRARIES ${GROVE_FFTW_LIBRARY})
    endif()
    message(STATUS "grove: particle-mesh module on (FFTW: ${GROVE_FFTW_LIBRARIES})")
  endif()
endif()
