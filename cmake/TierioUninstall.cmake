# `cmake --build BUILD --target uninstall`: remove every file the last install of this
# build tree wrote (CMake lists them in install_manifest.txt), then the directories of
# tierio's own that it leaves empty. Files of other packages in the prefix stay.
set(manifest "${CMAKE_CURRENT_BINARY_DIR}/install_manifest.txt")
if(NOT EXISTS "${manifest}")
  message(FATAL_ERROR "uninstall: ${manifest} not found: nothing was installed from this "
                      "build tree (or it was already uninstalled)")
endif()
file(STRINGS "${manifest}" files)
set(dirs "")
foreach(f IN LISTS files)
  if(IS_SYMLINK "${f}" OR EXISTS "${f}")
    file(REMOVE "${f}")
    message(STATUS "uninstall: removed ${f}")
  endif()
  get_filename_component(d "${f}" DIRECTORY)
  list(APPEND dirs "${d}")
endforeach()
# tierio's own directories (include/tierio, lib/cmake/tierio), when left empty.
list(REMOVE_DUPLICATES dirs)
foreach(d IN LISTS dirs)
  if(d MATCHES "/tierio$" AND IS_DIRECTORY "${d}")
    file(GLOB left "${d}/*")
    if(NOT left)
      file(REMOVE_RECURSE "${d}")
    endif()
  endif()
endforeach()
file(REMOVE "${manifest}")
