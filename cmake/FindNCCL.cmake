# Locates NCCL (nccl.h and libnccl) and defines NCCL::nccl. The copy that ships inside the CUDA
# toolkit is preferred (it matches the toolkit's driver API); NCCL_ROOT or CMAKE_PREFIX_PATH point
# elsewhere. Call after find_package(CUDAToolkit).
#
# Sets NCCL_FOUND, NCCL_INCLUDE_DIR, NCCL_LIBRARY and NCCL_VERSION (major.minor.patch from nccl.h).
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
find_library(NCCL_LIBRARY nccl HINTS ${NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
             "${CUDAToolkit_LIBRARY_ROOT}" PATH_SUFFIXES lib lib64)

set(NCCL_VERSION "")
if(NCCL_INCLUDE_DIR)
  foreach(_part MAJOR MINOR PATCH)
    file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _line REGEX "^#define NCCL_${_part} +[0-9]+")
    string(REGEX REPLACE ".* ([0-9]+).*" "\\1" _num "${_line}")
    list(APPEND NCCL_VERSION "${_num}")
  endforeach()
  list(JOIN NCCL_VERSION "." NCCL_VERSION)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
                                  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                                              INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
