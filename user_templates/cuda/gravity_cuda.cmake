# The CUDA gravity multiwalks of user_templates/cuda as a static library, grove_user_gravity_cuda,
# for the GPU tests and benchmarks (included by each; the first include defines it). Needs
# GROVE_CUDA_ENABLED. A user's own project compiles gravity_multiwalk.cu the same way.
if(NOT TARGET grove_user_gravity_cuda)
  add_library(grove_user_gravity_cuda STATIC ${CMAKE_CURRENT_LIST_DIR}/gravity_multiwalk.cu)
  target_link_libraries(grove_user_gravity_cuda PUBLIC grove::gpu)
  target_include_directories(grove_user_gravity_cuda PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
  set_target_properties(grove_user_gravity_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()
