# Shared CMake helpers: warnings, library and test targets.

function(kiln_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wno-missing-field-initializers)
  if(KILN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# The libraries named in KILN_PUBLIC_LIBRARIES (top-level CMakeLists.txt) follow
# BUILD_SHARED_LIBS and carry the project version (libkiln.so.0 -> libkiln.so.0.1.0); every
# other library is an internal layer: static and position-independent, so that a shared libkiln
# can absorb it (docs/install.md). Installed consumers see only include/ (the public headers);
# the layer-internal include directories are for targets in this tree.
function(kiln_add_library name)
  if(NOT ARGN)
    message(FATAL_ERROR "library ${name} has no sources")
  endif()
  if(name IN_LIST KILN_PUBLIC_LIBRARIES)
    add_library(${name} ${ARGN})
    set_target_properties(${name} PROPERTIES VERSION ${PROJECT_VERSION}
                          SOVERSION ${PROJECT_VERSION_MAJOR})
  else()
    add_library(${name} STATIC ${ARGN})
  endif()
  foreach(dir ${KILN_INCLUDES})
    target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${dir}>)
  endforeach()
  target_include_directories(${name} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  kiln_set_warnings(${name})
endfunction()

# kiln_add_test(NAME SRCS a.cpp b.cpp DEPS lib... LABELS null|device)
# Every test runs with the Khronos validation layer on (KILN_VALIDATE=1).
function(kiln_add_test name)
  cmake_parse_arguments(T "" "" "SRCS;DEPS;LABELS" ${ARGN})
  foreach(src ${T_SRCS})
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${src})
      message(WARNING "test ${name}: ${src} does not exist; target not added")
      return()
    endif()
  endforeach()
  add_executable(${name} ${T_SRCS})
  target_include_directories(${name} PRIVATE ${KILN_INCLUDES} ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  kiln_set_warnings(${name})
  # Test code compiles at -O1 with line tables only, in half the time of -O2 -g (the library it
  # tests keeps the build type's flags); the sanitizer builds use these flags throughout.
  if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
    target_compile_options(${name} PRIVATE -O1 -g1)
  elseif(CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${name} PRIVATE -O1)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" ENVIRONMENT "KILN_VALIDATE=1"
                       TIMEOUT 900)
endfunction()
