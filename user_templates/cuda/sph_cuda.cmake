# The CUDA multiwalks of the SPH sample (user_templates/cuda/sph_*) as a static library,
# grove_user_sph_cuda, for samples/sph and the GPU tests (included by each; the first include
# defines it). Needs GROVE_CUDA_ENABLED. The kernels implement the SPH physics of user_templates/sph
# for its particle classes; user_templates/ is the library's include folder ("sph/...", "cuda/...").
if(NOT TARGET grove_user_sph_cuda)
  add_library(grove_user_sph_cuda STATIC ${CMAKE_CURRENT_LIST_DIR}/sph_multiwalk.cu)
  target_link_libraries(grove_user_sph_cuda PUBLIC grove::gpu)
  target_include_directories(grove_user_sph_cuda PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
  set_target_properties(grove_user_sph_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()

# The GPU-resident SPH step (sph_resident.cu: user_templates/sph's physics over grove's resident
# short-range trees), for samples/sph, samples/scaling and the GPU tests.
if(NOT TARGET grove_sph_resident)
  add_library(grove_sph_resident STATIC ${CMAKE_CURRENT_LIST_DIR}/sph_resident.cu)
  target_link_libraries(grove_sph_resident PUBLIC grove::gpu)
  target_include_directories(grove_sph_resident PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
  set_target_properties(grove_sph_resident PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()
