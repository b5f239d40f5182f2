# Sourced first by the packaging tests that run the agent as a node runs it (packaging_oci under
# podman, packaging_systemd under capsh): the test re-executes itself in a private mount namespace,
# where tracefs is mounted as on a node if the host has not, so nothing is left on the machine.
# ($0 and "$@" are the sourcing test's.)
if [ -z "${SKEWSCOPE_PRIVATE_MOUNTS:-}" ]; then
  exec unshare --mount --propagation private env SKEWSCOPE_PRIVATE_MOUNTS=1 bash "$0" "$@"
fi
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
