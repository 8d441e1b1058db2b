# dfmpc_add_library(NAME <component> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Builds dfmpc_<component> with headers in <component>/include/dfmpc/<component>/,
# exports it as dfmpc::<component> and installs its headers under dfmpc/.
function(dfmpc_add_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target dfmpc_${ARG_NAME})
  add_library(${target} ${ARG_SOURCES})
  add_library(dfmpc::${ARG_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${ARG_NAME})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS}
                        PRIVATE ${ARG_PRIVATE_DEPS} $<BUILD_INTERFACE:dfmpc_warnings>)
  install(TARGETS ${target} EXPORT dfmpcTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/dfmpc
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
