# The Debian package (CPack DEB; scripts/package builds it): the agent, its systemd unit, the
# default configuration, man pages generated from the CLI's own --help, the Prometheus rules and
# scrape example, and the documentation operators need. Everything is component "skewscope", so
# nothing else the build defines can slip into the package.
include(GNUInstallDirs)
# scripts/package builds the agent and the man pages itself: cpack's install step must not build
# every test and benchmark first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(SKEWSCOPE_PKG ${CMAKE_SOURCE_DIR}/packaging)
set(SKEWSCOPE_PKG_OUT ${CMAKE_BINARY_DIR}/packaging)

install(TARGETS skewscope RUNTIME DESTINATION bin COMPONENT skewscope)
# /lib, not /usr/lib: Debian 12's dpkg does not yet follow the merged-/usr aliasing for units.
install(FILES ${SKEWSCOPE_PKG}/systemd/skewscope.service DESTINATION /lib/systemd/system COMPONENT skewscope)
install(FILES ${SKEWSCOPE_PKG}/deb/agent.conf DESTINATION /etc/skewscope PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        COMPONENT skewscope)
set(SKEWSCOPE_DOC share/doc/skewscope)
install(FILES ${SKEWSCOPE_PKG}/prometheus/prometheus.yml ${SKEWSCOPE_PKG}/prometheus/skewscope.rules.yml
              ${SKEWSCOPE_PKG}/prometheus/README.md
        DESTINATION ${SKEWSCOPE_DOC}/prometheus COMPONENT skewscope)
install(FILES ${SKEWSCOPE_PKG}/deb/copyright ${CMAKE_SOURCE_DIR}/docs/install.md ${CMAKE_SOURCE_DIR}/docs/contract.md
              ${CMAKE_SOURCE_DIR}/docs/troubleshooting.md
        DESTINATION ${SKEWSCOPE_DOC} COMPONENT skewscope)

# The compressed changelog, changelog.gz as for a native package (gzip -n: reproducible).
configure_file(${SKEWSCOPE_PKG}/deb/changelog.in ${SKEWSCOPE_PKG_OUT}/changelog @ONLY)
add_custom_command(OUTPUT ${SKEWSCOPE_PKG_OUT}/changelog.gz
  COMMAND gzip -9nc ${SKEWSCOPE_PKG_OUT}/changelog > ${SKEWSCOPE_PKG_OUT}/changelog.gz
  DEPENDS ${SKEWSCOPE_PKG_OUT}/changelog VERBATIM)

# Man pages from the binary's own --help (packaging/deb/man-page, help2man), one for the command
# and one per subcommand, so they cannot disagree with the CLI.
find_program(HELP2MAN help2man)
if(NOT HELP2MAN)
  message(STATUS "help2man not found: the man pages (and the package) cannot be built")
endif()
set(SKEWSCOPE_SUBCOMMANDS agent status top simulate doctor clocks whatif)
set(man_pages)
foreach(sub - ${SKEWSCOPE_SUBCOMMANDS})
  if(sub STREQUAL -)
    set(name skewscope)
  else()
    set(name skewscope-${sub})
  endif()
  set(out ${SKEWSCOPE_PKG_OUT}/man/${name}.1.gz)
  add_custom_command(OUTPUT ${out}
    COMMAND ${SKEWSCOPE_PKG}/deb/man-page $<TARGET_FILE:skewscope> ${sub} ${PROJECT_VERSION} ${SKEWSCOPE_PKG_OUT}/man
    DEPENDS skewscope ${SKEWSCOPE_PKG}/deb/man-page VERBATIM)
  list(APPEND man_pages ${out})
endforeach()
add_custom_target(skewscope_package_files DEPENDS ${man_pages} ${SKEWSCOPE_PKG_OUT}/changelog.gz)
install(FILES ${man_pages} DESTINATION share/man/man1 COMPONENT skewscope)
install(FILES ${SKEWSCOPE_PKG_OUT}/changelog.gz DESTINATION ${SKEWSCOPE_DOC} COMPONENT skewscope)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME skewscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "skewscope maintainers <skewscope@localhost.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "eBPF agent: are timestamps across hosts still in causal order?")
set(CPACK_PACKAGE_DESCRIPTION
  "skewscope captures every TCP message twice, where it leaves a process\n\
and where it enters one, pairs the halves and reports per pair of hosts\n\
the rate of negative spans (received, by the receiver's clock, before it\n\
was sent, by the sender's clock), a causality health signal, the clock\n\
offset bounded from the traffic itself and what PTP and NTP claim about\n\
the clocks, as a Prometheus target, a JSON API and a live terminal view.")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://skewscope.invalid/")
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_COMPONENTS_ALL skewscope)
set(CPACK_INSTALL_CMAKE_PROJECTS_SUB "")
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};skewscope;skewscope;/")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# deb-systemd-helper/-invoke in the maintainer scripts.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "init-system-helpers (>= 1.54~)")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${SKEWSCOPE_PKG}/deb/conffiles ${SKEWSCOPE_PKG}/deb/postinst ${SKEWSCOPE_PKG}/deb/prerm ${SKEWSCOPE_PKG}/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
include(CPack)
