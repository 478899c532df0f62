# Shared CMake helpers: warnings, library and test targets.

function(kiln_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wno-missing-field-initializers)
  if(KILN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(kiln_add_library name)
  if(NOT ARGN)
    message(FATAL_ERROR "library ${name} has no sources")
  endif()
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC ${KILN_INCLUDES})
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
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" ENVIRONMENT "KILN_VALIDATE=1"
                       TIMEOUT 900)
endfunction()
