# Finds PT-Scotch with 64-bit SCOTCH_Num (Debian: libptscotch-dev, its scotch-int64 variant) and
# defines PTScotch::PTScotch (the distributed library, the sequential one it builds on and the
# error handler that returns errors to the caller).
find_path(PTSCOTCH_INCLUDE_DIR ptscotch.h PATH_SUFFIXES scotch-int64)
# The libraries of that variant: <prefix>/lib/<arch>/scotch-int64 beside <prefix>/include/scotch-int64.
get_filename_component(_ptscotch_prefix "${PTSCOTCH_INCLUDE_DIR}/../.." ABSOLUTE)
set(_ptscotch_hints "${_ptscotch_prefix}/lib/${CMAKE_LIBRARY_ARCHITECTURE}/scotch-int64")
find_library(PTSCOTCH_LIBRARY ptscotch HINTS ${_ptscotch_hints} NO_DEFAULT_PATH)
find_library(PTSCOTCH_SCOTCH_LIBRARY scotch HINTS ${_ptscotch_hints} NO_DEFAULT_PATH)
find_library(PTSCOTCH_ERR_LIBRARY ptscotcherr HINTS ${_ptscotch_hints} NO_DEFAULT_PATH)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(
  PTScotch REQUIRED_VARS PTSCOTCH_LIBRARY PTSCOTCH_SCOTCH_LIBRARY PTSCOTCH_ERR_LIBRARY
                         PTSCOTCH_INCLUDE_DIR)
if(PTScotch_FOUND AND NOT TARGET PTScotch::PTScotch)
  add_library(PTScotch::PTScotch INTERFACE IMPORTED)
  set_target_properties(
    PTScotch::PTScotch
    PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${PTSCOTCH_INCLUDE_DIR}"
               INTERFACE_LINK_LIBRARIES
               "${PTSCOTCH_LIBRARY};${PTSCOTCH_SCOTCH_LIBRARY};${PTSCOTCH_ERR_LIBRARY}")
endif()
