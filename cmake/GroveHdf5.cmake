# Finds HDF5 for grove's snapshots (grove/io): the parallel library in an MPI build (Debian's
# libhdf5-openmpi-dev), the serial one otherwise (libhdf5-dev; with it, at several ranks, rank 0
# writes every rank's rows). Sets GROVE_HAS_HDF5 and GROVE_HDF5_LIBRARIES (full paths, so an
# installed grove's exported link line needs no find module). Without HDF5 grove builds as
# before, the samples write ASCII snapshots, and the HDF5 tests are not built.
option(GROVE_HDF5 "Build grove::io's HDF5 snapshots when HDF5 is found" ON)

set(GROVE_HAS_HDF5 OFF)
set(GROVE_HDF5_PARALLEL OFF)  # every rank writes its own rows of a snapshot (the parallel library)
set(GROVE_HDF5_LIBRARIES)
if(GROVE_HDF5)
  # FindHDF5 probes the C library with the C compiler.
  include(CheckLanguage)
  check_language(C)
  if(CMAKE_C_COMPILER)
    enable_language(C)
    set(HDF5_PREFER_PARALLEL ${GROVE_MPI})
    find_package(HDF5 QUIET COMPONENTS C)
  endif()
  if(HDF5_FOUND AND HDF5_IS_PARALLEL AND NOT GROVE_MPI)
    message(STATUS "grove: HDF5 ${HDF5_VERSION} is the parallel library and this build has no MPI: building "
                   "without grove::io's HDF5 snapshots (install libhdf5-dev for them)")
  elseif(HDF5_FOUND)
    set(GROVE_HAS_HDF5 ON)
    set(GROVE_HDF5_PARALLEL ${HDF5_IS_PARALLEL})
    set(GROVE_HDF5_LIBRARIES ${HDF5_C_LIBRARIES})
    set(GROVE_HDF5_INCLUDE_DIRS ${HDF5_C_INCLUDE_DIRS})
    set(GROVE_HDF5_DEFINITIONS ${HDF5_C_DEFINITIONS})
    if(GROVE_MPI AND NOT HDF5_IS_PARALLEL)
      message(STATUS "grove: HDF5 ${HDF5_VERSION} is the serial library: rank 0 writes every rank's rows of a "
                     "snapshot (install libhdf5-openmpi-dev for parallel writes)")
    endif()
    message(STATUS "grove: HDF5 snapshots on (HDF5 ${HDF5_VERSION}, parallel: ${HDF5_IS_PARALLEL})")
  else()
    message(STATUS "grove: HDF5 not found: building without grove::io's HDF5 snapshots (install "
                   "libhdf5-openmpi-dev, or libhdf5-dev for a build without MPI)")
  endif()
endif()
