# The root filesystem entry, shared by every kernel: Debian bookworm (debootstrap
# --variant=minbase) with rootfs-packages, as an ext4 image (mkfs.ext4 -d) labelled kroot.
# The shared libraries the binaries to run load (ldd, then dpkg -S) must come from packages it
# holds: run-in-guest builds a second entry with the missing ones added if any is not (its key
# then names them too), so a build with a new library still runs.
# run-in-guest opens it with snapshot=on: runs never change it.

# library_packages BINARY...: the Debian packages of the libraries the binaries load (one
# dpkg -S for all of them: it reads every file list, each call costs seconds)
library_packages() {
  local libs
  libs=$(ldd "$@" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p' | sort -u)
  [ -n "$libs" ] || return 0
  # merged /usr: dpkg knows a library by one of /lib/... and /usr/lib/...
  # (dpkg -S fails for the spellings it does not know: expected, hence `|| true`)
  { echo "$libs"; sed 's|^/usr/|/|' <<<"$libs"; sed 's|^/lib|/usr/lib|' <<<"$libs"; } | sort -u |
    { xargs dpkg -S 2>/dev/null || true; } | sed 's/:.*//' | tr ', ' '\n\n' | { grep -v '^$' || true; } | sort -u
}

# named_packages: rootfs-packages, one a line, sorted
named_packages() {
  sed 's/#.*//' "$KERNELS_DIR/rootfs-packages" | tr -s ' \t' '\n' | grep -v '^$' | sort -u
}

# missing_packages ENTRY BINARY...: the packages of the binaries' libraries that the root
# filesystem of ENTRY lacks (none when rootfs-packages names them all, as it should)
missing_packages() {
  local entry=$1; shift
  [ $# -gt 0 ] || return 0
  library_packages "$@" | comm -23 - "$entry/INSTALLED"
}

# build_rootfs_entry DIR PACKAGES_FILE: exit 77 when the archive cannot be reached.
build_rootfs_entry() (
  set -euo pipefail
  local dir=$1 packages=$2 tree size
  tree=$(mktemp -d "$KERNELS_CACHE/.rootfs.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$tree' '$tree.log'" EXIT
  echo "run-in-guest: building the root filesystem (debootstrap bookworm, $(wc -l <"$packages") packages; a few minutes)" >&2
  if ! debootstrap --variant=minbase --include="$(paste -sd, "$packages")" \
    bookworm "$tree" "$(debian_mirror)" >"$tree.log" 2>&1; then
    tail -15 "$tree.log" >&2
    if grep -qiE 'Failed getting release file|Couldn.t download|Temporary failure|Could not resolve' "$tree.log"; then
      rm -f "$tree.log"; return 77
    fi
    rm -f "$tree.log"; return 1
  fi
  rm -f "$tree.log"
  # Nothing in the guest needs the package caches or documentation.
  rm -rf "$tree"/var/cache/apt/archives/*.deb "$tree"/var/lib/apt/lists/* "$tree"/usr/share/doc \
    "$tree"/usr/share/man "$tree"/usr/share/locale
  cp "$packages" "$dir/PACKAGES"
  dpkg-query --admindir="$tree/var/lib/dpkg" -W -f '${Package}\n' | sort -u >"$dir/INSTALLED"
  size=$(du -sm "$tree" | cut -f1)
  # Room for what runs write (logs, the lab's files): they go to qemu's snapshot, not the image.
  mkfs.ext4 -q -L kroot -d "$tree" "$dir/rootfs.img" "$((size + 768))M" >/dev/null
)
