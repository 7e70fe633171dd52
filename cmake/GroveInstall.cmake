# Installs headers, the library and an exported package so that an outside project can
#   find_package(grove) and link grove::grove, and, where grove was built with CUDA, grove::gpu
#   (libgrove_gpu.a with its usage requirements: the CUDA runtime, FMT_USE_CONSTEXPR=1,
#   --expt-relaxed-constexpr and -Xcompiler=-fopenmp for the user's .cu files).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY framework/include/grove DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/generated/grove/config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grove)
set(grove_installed_targets grove)
if(GROVE_HAS_PM)
  list(APPEND grove_installed_targets grove_pm)  # grove links it, so the export needs it too
endif()
if(GROVE_HAS_HDF5)
  list(APPEND grove_installed_targets grove_io)
endif()
if(GROVE_CUDA_ENABLED)
  list(APPEND grove_installed_targets grove_gpu)  # exported as grove::gpu (its EXPORT_NAME)
endif()
install(TARGETS ${grove_installed_targets} EXPORT groveTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT groveTargets NAMESPACE grove::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/grove)

configure_package_config_file(cmake/groveConfig.cmake.in
  ${PROJECT_BINARY_DIR}/groveConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/grove)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/groveConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/groveConfig.cmake ${PROJECT_BINARY_DIR}/groveConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/grove)
