# The kernel entry of one Debian suite: Debian's stock linux-image-*-amd64, unpacked with dpkg -x
# (this machine's /boot and apt configuration are untouched), with
#   vmlinuz          the kernel
#   initramfs.cpio.gz  busybox-static and the modules that mount the root disk (virtio_blk, ext4
#                      and what they depend on), loaded in dependency order by initramfs-init
#   modules.img      an ext4 image of the whole /lib/modules/VERSION (depmod -b run here), mounted
#                    in the guest, so any module (veth, rdma_rxe, netdevsim...) can be modprobed
#   VERSION, PACKAGE, config
# Why not the whole root in the initramfs: the root filesystem is shared by every kernel and is
# hundreds of MB; unpacking that into RAM on every TCG boot would cost more than reading a disk.

# The Debian suite of each kernel the matrix knows.
kernel_suite() {
  case "$1" in
    5.10) echo bullseye ;;
    6.1) echo bookworm ;;
    6.12) echo bookworm-backports ;;
    *) return 1 ;;
  esac
}

# modules_in_order MODROOT VERSION MODULE...: the .ko paths (relative to the version's directory)
# of MODULEs and their dependencies, dependencies first, each once; built-in modules are skipped.
modules_in_order() {
  local root=$1 ver=$2; shift 2
  awk -v want="$*" '
    function base(p) { sub(/.*\//, "", p); sub(/\.ko(\.[a-z]+)?$/, "", p); gsub(/-/, "_", p); return p }
    function visit(m,   i, n, d) {
      if (m in done || !(m in path)) return
      done[m] = 1
      n = split(deps[m], d, " ")
      for (i = 1; i <= n; i++) visit(base(d[i]))
      print path[m]
    }
    { m = $1; sub(/:$/, "", m); p = m; m = base(m); path[m] = p; $1 = ""; deps[m] = $0 }
    END { n = split(want, w, " "); for (i = 1; i <= n; i++) { gsub(/-/, "_", w[i]); visit(w[i]) } }
  ' "$root/lib/modules/$ver/modules.dep"
}

# build_kernel_entry DIR SUITE: fetches and prepares the entry (see above) into DIR.
# Exit 77 when the archive cannot be reached or has no such kernel.
build_kernel_entry() (
  set -euo pipefail
  local dir=$1 suite=$2 work meta pkg deb ver
  work=$(mktemp -d "$KERNELS_CACHE/.kernel-$suite.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  echo "run-in-guest: fetching Debian's $suite kernel from $(debian_mirror)" >&2
  private_apt "$suite" apt-get update --error-on=any >&2 || { echo "run-in-guest: $suite: apt-get update failed" >&2; return 77; }
  # linux-image-amd64 names the suite's current ABI package, e.g. linux-image-6.1.0-57-amd64.
  meta=$(private_apt "$suite" apt-cache depends linux-image-amd64 2>/dev/null) || true
  pkg=$(sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' <<<"$meta" | head -1)
  [ -n "$pkg" ] || { echo "run-in-guest: $suite: linux-image-amd64 names no kernel package" >&2; return 77; }
  (cd "$work" && private_apt "$suite" apt-get download "$pkg" >&2) ||
    { echo "run-in-guest: $suite: apt-get download $pkg failed" >&2; return 77; }
  deb=$(ls "$work"/*.deb)
  dpkg -x "$deb" "$work/root"
  # merged /usr (6.12's package) or not (5.10, 6.1): one lib/modules for depmod -b
  if [ -d "$work/root/usr/lib/modules" ] && [ ! -d "$work/root/lib/modules" ]; then
    mkdir -p "$work/root/lib" && mv "$work/root/usr/lib/modules" "$work/root/lib/modules"
  fi
  ver=$(ls "$work/root/lib/modules")
  [ -f "$work/root/boot/vmlinuz-$ver" ] || { echo "run-in-guest: $deb has no /boot/vmlinuz-$ver" >&2; return 1; }
  depmod -b "$work/root" "$ver"
  cp "$work/root/boot/vmlinuz-$ver" "$dir/vmlinuz"
  cp "$work/root/boot/config-$ver" "$dir/config"
  echo "$ver" >"$dir/VERSION"
  basename "$deb" >"$dir/PACKAGE"

  # The initramfs: modules the root disk needs, decompressed (busybox insmod reads plain .ko).
  local ird=$work/initramfs m
  mkdir -p "$ird/bin" "$ird/modules" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/newroot"
  cp /bin/busybox "$ird/bin/busybox"
  cp "$KERNELS_DIR/initramfs-init" "$ird/init"
  chmod 755 "$ird/init"
  : >"$ird/modules.order"
  for m in $(modules_in_order "$work/root" "$ver" virtio_pci virtio_blk ext4 crc32c_generic crc32c_intel); do
    local out=$ird/modules/$(basename "${m%%.ko*}").ko
    case "$m" in
      *.ko.xz) xz -dc "$work/root/lib/modules/$ver/$m" >"$out" ;;
      *.ko.zst) zstd -qdc "$work/root/lib/modules/$ver/$m" >"$out" ;;
      *.ko.gz) gzip -dc "$work/root/lib/modules/$ver/$m" >"$out" ;;
      *) cp "$work/root/lib/modules/$ver/$m" "$out" ;;
    esac
    basename "$out" >>"$ird/modules.order"
  done
  (cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initramfs.cpio.gz"

  # Every module of the kernel, for modprobe in the guest (mounted on /lib/modules/VERSION).
  local size
  size=$(du -sm "$work/root/lib/modules/$ver" | cut -f1)
  mkfs.ext4 -q -L kmodules -d "$work/root/lib/modules/$ver" "$dir/modules.img" "$((size * 12 / 10 + 32))M" >/dev/null
)
