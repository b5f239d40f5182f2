# Debian's archive without touching this machine's apt configuration: a private apt state per
# suite under the cache (its own sources.list, lists, cache and an empty dpkg status), used by
# kernel-image.sh (apt-get download) and rootfs-image.sh (debootstrap needs only the mirror).

# The mirror of this machine's apt sources (the first Debian one), or SKEWSCOPE_DEBIAN_MIRROR.
debian_mirror() {
  if [ -n "${SKEWSCOPE_DEBIAN_MIRROR:-}" ]; then echo "$SKEWSCOPE_DEBIAN_MIRROR"; return; fi
  local m
  m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n -e 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/\?$/\1/p' \
      -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\/debian\)\/\?[[:space:]].*/\2/p' | head -1)
  echo "${m:-http://deb.debian.org/debian}"
}

# private_apt SUITE ARGS...: apt-get or apt-cache (first of ARGS) on the private state of SUITE
private_apt() {
  local suite=$1 tool=$2; shift 2
  local d=$KERNELS_CACHE/apt/$suite
  mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/prefs.d" "$d/parts.d"
  [ -f "$d/status" ] || : >"$d/status"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) $suite main" >"$d/sources.list"
  "$tool" -q -o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts="$d/parts.d" \
    -o Dir::Etc::Preferences="$d/prefs" -o Dir::Etc::PreferencesParts="$d/prefs.d" \
    -o Dir::State::Lists="$d/lists" -o Dir::State::status="$d/status" -o Dir::Cache="$d/cache" \
    -o APT::Architecture=amd64 -o APT::Sandbox::User=root -o Debug::NoLocking=1 "$@"
}
