# The CUDA multiwalks of the SPH sample (user_templates/cuda/sph_*) as a static library,
# grove_user_sph_cuda, for samples/sph and the GPU tests (included by each; the first include
# defines it). Needs GROVE_CUDA_ENABLED. The kernels implement samples/sph's physics for its
# particle classes, so the library sees that folder's headers too.
if(NOT TARGET grove_user_sph_cuda)
  add_library(grove_user_sph_cuda STATIC ${CMAKE_CURRENT_LIST_DIR}/sph_multiwalk.cu)
  target_link_libraries(grove_user_sph_cuda PUBLIC grove::gpu)
  target_include_directories(grove_user_sph_cuda PUBLIC ${CMAKE_CURRENT_LIST_DIR}/.. ${PROJECT_SOURCE_DIR}/samples/sph)
  set_target_properties(grove_user_sph_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()

# The SPH sample's GPU-resident step (samples/sph/resident_gpu.cu: the sample's physics over
# grove's resident short-range trees), for samples/sph and the GPU tests.
if(NOT TARGET grove_sph_resident)
  add_library(grove_sph_resident STATIC ${PROJECT_SOURCE_DIR}/samples/sph/resident_gpu.cu)
  target_link_libraries(grove_sph_resident PUBLIC grove::gpu)
  target_include_directories(grove_sph_resident PUBLIC ${PROJECT_SOURCE_DIR}/samples/sph)
  set_target_properties(grove_sph_resident PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()
