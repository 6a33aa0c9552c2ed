# Locates libtorch 2.x (the one inside an installed PyTorch wheel, or an unpacked libtorch
# archive) and defines adaqp::torch. Only the CPU libraries are linked, so CPU-only builds never need
# CUDA headers; with ADAQP_WITH_CUDA, GPU processes load libtorch_cuda at run time. Sets
# ADAQP_WITH_TORCH_CUDA and ADAQP_TORCH_CUDA_LIBRARY.
#
# TORCH_ROOT: the directory holding include/ and lib/ of libtorch (for a wheel: site-packages/torch).
# If unset, it is asked from ADAQP_PYTHON without importing torch (an import needs the CUDA runtime).
if(NOT TORCH_ROOT)
  find_program(ADAQP_PYTHON NAMES python3 python)
  execute_process(
    COMMAND "${ADAQP_PYTHON}" -c
            "import importlib.util as u; s = u.find_spec('torch'); print(s.submodule_search_locations[0] if s else '')"
    OUTPUT_VARIABLE _torch_root OUTPUT_STRIP_TRAILING_WHITESPACE)
  # FORCE: an empty entry left by a configure whose Python had no torch would otherwise stick.
  set(TORCH_ROOT "${_torch_root}" CACHE PATH "libtorch root (include/ and lib/)" FORCE)
endif()
find_path(TORCH_INCLUDE_DIR torch/csrc/api/include/torch/torch.h PATHS "${TORCH_ROOT}/include" NO_DEFAULT_PATH)
find_library(TORCH_CPU_LIBRARY torch_cpu PATHS "${TORCH_ROOT}/lib" NO_DEFAULT_PATH)
find_library(TORCH_C10_LIBRARY c10 PATHS "${TORCH_ROOT}/lib" NO_DEFAULT_PATH)
if(NOT TORCH_INCLUDE_DIR OR NOT TORCH_CPU_LIBRARY OR NOT TORCH_C10_LIBRARY)
  message(FATAL_ERROR "libtorch not found under TORCH_ROOT='${TORCH_ROOT}'. Run scripts/setup.sh, "
                      "or pass -DTORCH_ROOT=<dir with include/ and lib/>.")
endif()
# libtorch 2.x keeps the version in headeronly/version.h (newer) or csrc/api/include/torch/version.h.
file(GLOB _torch_version_header "${TORCH_INCLUDE_DIR}/torch/headeronly/version.h")
if(NOT _torch_version_header)
  set(_torch_version_header "${TORCH_INCLUDE_DIR}/torch/csrc/api/include/torch/version.h")
endif()
set(ADAQP_TORCH_VERSION "")
foreach(_part MAJOR MINOR PATCH)
  file(STRINGS "${_torch_version_header}" _line REGEX "#define TORCH_VERSION_${_part} ")
  string(REGEX REPLACE ".* ([0-9]+).*" "\\1" _num "${_line}")
  list(APPEND ADAQP_TORCH_VERSION "${_num}")
endforeach()
list(JOIN ADAQP_TORCH_VERSION "." ADAQP_TORCH_VERSION)
if(ADAQP_TORCH_VERSION VERSION_LESS 2.0)
  message(FATAL_ERROR "libtorch ${ADAQP_TORCH_VERSION} at ${TORCH_ROOT}: version 2.x is required")
endif()
message(STATUS "libtorch ${ADAQP_TORCH_VERSION} at ${TORCH_ROOT}")

# A CUDA-enabled wheel's libtorch_cpu needs libcudart/libcupti at link and run time; they sit in
# the wheel's companion nvidia packages or the CUDA toolkit.
get_filename_component(_site "${TORCH_ROOT}" DIRECTORY)
file(GLOB _nvidia_lib_dirs LIST_DIRECTORIES true "${_site}/nvidia/*/lib" "${_site}/nvidia/cu*/lib")
set(ADAQP_TORCH_RPATH "${TORCH_ROOT}/lib" ${_nvidia_lib_dirs})

# libtorch's include/ also bundles third-party headers, among them fmt (a newer major version than
# the system fmt that spdlog is built against): expose libtorch's include/ without its fmt/.
set(ADAQP_TORCH_INCLUDE_VIEW "${CMAKE_BINARY_DIR}/libtorch-include")
file(MAKE_DIRECTORY "${ADAQP_TORCH_INCLUDE_VIEW}")
file(GLOB _torch_include_entries RELATIVE "${TORCH_INCLUDE_DIR}" "${TORCH_INCLUDE_DIR}/*")
list(REMOVE_ITEM _torch_include_entries fmt)
foreach(_entry ${_torch_include_entries})
  if(NOT EXISTS "${ADAQP_TORCH_INCLUDE_VIEW}/${_entry}")
    file(CREATE_LINK "${TORCH_INCLUDE_DIR}/${_entry}" "${ADAQP_TORCH_INCLUDE_VIEW}/${_entry}"
         SYMBOLIC)
  endif()
endforeach()

add_library(adaqp_torch INTERFACE)
add_library(adaqp::torch ALIAS adaqp_torch)
target_include_directories(adaqp_torch SYSTEM INTERFACE "${ADAQP_TORCH_INCLUDE_VIEW}"
                                                        "${TORCH_INCLUDE_DIR}/torch/csrc/api/include")
target_link_libraries(adaqp_torch INTERFACE "${TORCH_CPU_LIBRARY}" "${TORCH_C10_LIBRARY}")

# With ADAQP_WITH_CUDA, a CUDA build of libtorch also has libtorch_cuda (and libc10_cuda, its
# dependency), so that tensors can live on the GPU. Nothing calls into it (it registers the CUDA
# backend when loaded), and loading it costs about 0.15 s of CPU a process, so it is not linked:
# processes that train on a GPU load it (tensor/torch_cuda_backend.h) from ADAQP_TORCH_CUDA_LIBRARY.
# A CPU-only libtorch leaves ADAQP_WITH_TORCH_CUDA off.
set(ADAQP_WITH_TORCH_CUDA OFF)
set(ADAQP_TORCH_CUDA_LIBRARY "")
if(ADAQP_WITH_CUDA)
  find_library(TORCH_CUDA_LIBRARY torch_cuda PATHS "${TORCH_ROOT}/lib" NO_DEFAULT_PATH)
  if(TORCH_CUDA_LIBRARY)
    set(ADAQP_WITH_TORCH_CUDA ON)
    set(ADAQP_TORCH_CUDA_LIBRARY "${TORCH_CUDA_LIBRARY}")
    target_link_libraries(adaqp_torch INTERFACE CUDA::cudart)
    message(STATUS "libtorch CUDA backend, loaded by GPU processes: ${TORCH_CUDA_LIBRARY}")
  else()
    message(STATUS "libtorch at ${TORCH_ROOT} has no CUDA libraries: tensors stay on the CPU")
  endif()
endif()
foreach(_dir ${ADAQP_TORCH_RPATH})
  target_link_options(adaqp_torch INTERFACE "LINKER:-rpath,${_dir}" "LINKER:-rpath-link,${_dir}")
endforeach()

# adaqp_precompile_torch(TARGET): precompiles the libtorch headers for those of TARGET's sources that
# include libtorch, directly or through the project's headers. They are most of a fresh build's
# time: such a unit takes 8-17 s to compile on the 2-core machine, 3-8 s with the precompiled
# headers; a unit without libtorch would only pay for loading them (2-3 s), so it is left out.
# The first target called for (adaqp_nn) builds the header; every later one reuses it, since each
# build of it costs about 27 s. GCC accepts it only under the same code-model flags, so a reusing
# executable compiles position-independent (-fPIC) like the library rather than -fPIE.
# ADAQP_PRECOMPILE_TORCH=OFF turns it off.
option(ADAQP_PRECOMPILE_TORCH "Precompile the libtorch headers" ON)

# _adaqp_uses_torch(FILE VAR): whether FILE includes a libtorch header, following the quoted
# includes that resolve under include/ or beside FILE; answers are memoised per configure.
function(_adaqp_uses_torch file var)
  get_property(_known GLOBAL PROPERTY "ADAQP_USES_TORCH:${file}" SET)
  if(NOT _known)
    # Marked "no" first, so that an include cycle ends.
    set_property(GLOBAL PROPERTY "ADAQP_USES_TORCH:${file}" FALSE)
    file(STRINGS "${file}" _includes REGEX "^#include [<\"]")
    set(_uses FALSE)
    foreach(_line ${_includes})
      if(_line MATCHES "^#include <(torch|ATen|c10)/")
        set(_uses TRUE)
      elseif(_line MATCHES "^#include \"([^\"]+)\"")
        get_filename_component(_dir "${file}" DIRECTORY)
        foreach(_candidate "${PROJECT_SOURCE_DIR}/include/${CMAKE_MATCH_1}" "${_dir}/${CMAKE_MATCH_1}")
          if(EXISTS "${_candidate}")
            _adaqp_uses_torch("${_candidate}" _child)
            if(_child)
              set(_uses TRUE)
            endif()
            break()
          endif()
        endforeach()
      endif()
      if(_uses)
        break()
      endif()
    endforeach()
    set_property(GLOBAL PROPERTY "ADAQP_USES_TORCH:${file}" ${_uses})
  endif()
  get_property(_uses GLOBAL PROPERTY "ADAQP_USES_TORCH:${file}")
  set(${var} ${_uses} PARENT_SCOPE)
endfunction()

function(adaqp_precompile_torch target)
  if(NOT ADAQP_PRECOMPILE_TORCH)
    return()
  endif()
  get_property(_owner GLOBAL PROPERTY ADAQP_TORCH_PCH_OWNER)
  if(_owner)
    target_precompile_headers(${target} REUSE_FROM ${_owner})
    get_target_property(_type ${target} TYPE)
    if(_type STREQUAL "EXECUTABLE")
      set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
      target_compile_options(${target} PRIVATE -fPIC)
    endif()
  else()
    set_property(GLOBAL PROPERTY ADAQP_TORCH_PCH_OWNER ${target})
    target_precompile_headers(${target} PRIVATE <ATen/ATen.h> <torch/autograd.h> <torch/nn/module.h>
                              <torch/optim/adam.h>)
  endif()
  get_target_property(_sources ${target} SOURCES)
  get_target_property(_source_dir ${target} SOURCE_DIR)
  foreach(_source ${_sources})
    get_filename_component(_path "${_source}" ABSOLUTE BASE_DIR "${_source_dir}")
    if(_path MATCHES "\\.cpp$")
      _adaqp_uses_torch("${_path}" _uses)
      if(NOT _uses)
        set_source_files_properties("${_source}" TARGET_DIRECTORY ${target} PROPERTIES
                                    SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endif()
  endforeach()
endfunction()
