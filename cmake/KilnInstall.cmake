# Install rules: the public headers, the libraries an application links, the kiln CLI, a CMake
# package (find_package(kiln CONFIG)) and pkg-config files (docs/install.md).
#
# Static (the default): every library is installed and exported, because libkiln.a needs the
# layer archives and their dependencies (glslang, SPIRV-Tools, Vulkan) at an application's link
# time; kilnConfig.cmake finds those. Shared (BUILD_SHARED_LIBS=ON): libkiln.so has absorbed the
# layers, so only the public libraries are installed.
include(CMakePackageConfigHelpers)

set(KILN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

foreach(lib ${KILN_PUBLIC_LIBRARIES})
  string(REGEX REPLACE "^kiln_" "" export_name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${export_name})
  # The headers need C++20: consumers of the exported targets get it too.
  target_compile_features(${lib} PUBLIC cxx_std_20)
  # The same names in this tree, for a project that adds Kiln with add_subdirectory.
  add_library(kiln::${export_name} ALIAS ${lib})
endforeach()

set(KILN_INSTALL_TARGETS ${KILN_PUBLIC_LIBRARIES})
if(NOT BUILD_SHARED_LIBS)
  list(APPEND KILN_INSTALL_TARGETS ${KILN_LAYER_LIBRARIES} kiln_glslang)
endif()
install(TARGETS ${KILN_INSTALL_TARGETS} EXPORT kilnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The whole directory, so that a header added to include/kiln/ is installed without an edit here.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

if(TARGET kiln_cli)
  if(BUILD_SHARED_LIBS)
    file(RELATIVE_PATH kiln_bin_to_lib ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
         ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
    set_target_properties(kiln_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${kiln_bin_to_lib}")
  endif()
  install(TARGETS kiln_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# --- CMake package ------------------------------------------------------------------------------
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_CMAKE_DIR})
set(KILN_SHARED ${BUILD_SHARED_LIBS})
if(NOT KILN_SHARED)
  set(KILN_SHARED OFF)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kilnConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/kilnConfig.cmake
                              INSTALL_DESTINATION ${KILN_CMAKE_DIR})
# SameMajorVersion matches the SONAME (libkiln.so.<major>).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kilnConfig.cmake ${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
        DESTINATION ${KILN_CMAKE_DIR})

# --- pkg-config ---------------------------------------------------------------------------------
# Relocatable: the prefix is found from the .pc file's own place, so `cmake --install --prefix P`
# (which does not reconfigure) gives correct paths.
if(IS_ABSOLUTE ${CMAKE_INSTALL_LIBDIR} OR IS_ABSOLUTE ${CMAKE_INSTALL_INCLUDEDIR})
  message(FATAL_ERROR "kiln.pc needs CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR relative")
endif()
file(RELATIVE_PATH KILN_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" KILN_PC_TO_PREFIX "${KILN_PC_TO_PREFIX}")
if(BUILD_SHARED_LIBS)
  set(KILN_PC_LIBS "-lkiln")
  set(KILN_PC_REQUIRES "")
  set(KILN_ONNX_PC_LIBS "-lkiln_onnx")
  set(KILN_ONNX_PC_REQUIRES "kiln")
else()
  # Static archives in link order, then what they need (glslang.pc lacks SPIRV and the
  # default resource limits).
  set(KILN_PC_LIBS "-lkiln -lkiln_codegen -lkiln_vk -lkiln_eager -lkiln_cache -lkiln_shaders")
  string(APPEND KILN_PC_LIBS " -lkiln_graph -lSPIRV -lglslang-default-resource-limits")
  set(KILN_PC_REQUIRES "glslang SPIRV-Tools vulkan openblas")
  set(KILN_ONNX_PC_LIBS "-lkiln_onnx -lonnx_proto")
  set(KILN_ONNX_PC_REQUIRES "kiln protobuf")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln.pc.in ${CMAKE_BINARY_DIR}/kiln.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln-onnx.pc.in ${CMAKE_BINARY_DIR}/kiln-onnx.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/kiln.pc ${CMAKE_BINARY_DIR}/kiln-onnx.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
