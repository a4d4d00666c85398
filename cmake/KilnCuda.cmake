# The CUDA backend: kiln's own kernels (.cu), cuDNN and cuBLASLt layers, the GPU executor and
# session. Included from the top-level CMakeLists.txt only when KILN_CUDA is on, so a CPU-only
# build never needs nvcc. It appends the GPU sources to KILN_SOURCES; kiln_add_cuda_to(target)
# then links the vendor libraries.
set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "GPU architectures the CUDA code is built for")
# CMake 3.25 knows no CUDA 20 dialect for nvcc; .cu files include only small C++17 headers.
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
if(CCACHE_PROGRAM)
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
# One CUDA runtime, the shared one that CUDA::cudart links, not a second static copy.
set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

# cuDNN ships outside the toolkit on most machines (/usr/lib/x86_64-linux-gnu with headers in
# /usr/include/x86_64-linux-gnu), inside it on others.
find_path(KILN_CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include/x86_64-linux-gnu /usr/include REQUIRED)
find_library(KILN_CUDNN_LIBRARY cudnn
  HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib /usr/local/cuda/lib
        /usr/lib/x86_64-linux-gnu REQUIRED)
message(STATUS "kiln CUDA backend: cuDNN ${KILN_CUDNN_LIBRARY} (headers ${KILN_CUDNN_INCLUDE_DIR}), "
               "architectures ${CMAKE_CUDA_ARCHITECTURES}")

file(GLOB_RECURSE KILN_GPU_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/backends/gpu/*.cpp ${PROJECT_SOURCE_DIR}/src/backends/gpu/*.cu
  ${PROJECT_SOURCE_DIR}/src/runtime/gpu_*.cpp ${PROJECT_SOURCE_DIR}/src/api/gpu_*.cpp)
list(APPEND KILN_SOURCES ${KILN_GPU_SOURCES})

function(kiln_add_cuda_to target)
  string(REPLACE ";" "," archs "${CMAKE_CUDA_ARCHITECTURES}")  # a ';' would split the definition
  target_compile_definitions(${target} PUBLIC KILN_HAVE_CUDA=1
    PRIVATE KILN_CUDA_ARCHITECTURES="${archs}")
  target_include_directories(${target} PRIVATE ${KILN_CUDNN_INCLUDE_DIR})
  target_link_libraries(${target} PUBLIC CUDA::cudart CUDA::cublasLt ${KILN_CUDNN_LIBRARY})
  # The host compiler's warning flags are not nvcc's; kernels keep nvcc's defaults.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
endfunction()
