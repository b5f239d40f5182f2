# Cache entries under $KERNELS_CACHE (default /var/cache/skewscope-kernels), for run-in-guest.
# An entry is a directory NAME-HASH, HASH a digest of everything that went into it. It is built in
# a temporary directory beside it and renamed into place only when complete, with a MANIFEST
# (sha256 of every file) written last: an entry without a MANIFEST, or whose files do not match
# it, is partial or corrupt and is rebuilt, never used. A lock per entry lets two runs that need
# the same entry (two helpers, two kernels of one matrix) build it once.
# SKEWSCOPE_KERNELS_OFFLINE=1: use only what is cached; a missing entry is "not reachable" (77).

KERNELS_CACHE=${SKEWSCOPE_KERNELS_CACHE:-/var/cache/skewscope-kernels}

# cache_key WORDS...: a short digest of the words and of the files among them that exist
cache_key() {
  local w
  for w in "$@"; do
    if [ -f "$w" ]; then sha256sum <"$w"; else printf '%s\n' "$w"; fi
  done | sha256sum | cut -c1-16
}

cache_valid() {  # cache_valid DIR
  [ -s "$1/MANIFEST" ] && (cd "$1" && sha256sum --quiet --strict -c MANIFEST >/dev/null 2>&1)
}

# cache_entry NAME KEY BUILDER ARGS...: prints the entry's directory, building it first with
# `BUILDER DIR ARGS...` (DIR empty and temporary) when it is missing or not valid. BUILDER's
# status is returned when it fails (nothing is kept then). BUILDER must be a function whose body
# is a subshell with set -e; call cache_entry itself with set +e (see run-in-guest).
cache_entry() {
  set -e
  local name=$1 key=$2 builder=$3; shift 3
  local dir=$KERNELS_CACHE/$name-$key
  mkdir -p "$KERNELS_CACHE"
  exec {lock}>"$KERNELS_CACHE/.$name-$key.lock"
  flock "$lock"
  if ! cache_valid "$dir"; then
    if [ "${SKEWSCOPE_KERNELS_OFFLINE:-0}" = 1 ]; then
      echo "run-in-guest: SKEWSCOPE_KERNELS_OFFLINE=1 and no valid cache entry $name-$key" >&2
      exec {lock}>&-
      return 77
    fi
    [ -e "$dir" ] && echo "run-in-guest: cache entry $dir is partial or corrupt: rebuilding" >&2
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp"
    # Not as `builder || rc=$?`: bash ignores set -e inside a command whose status is tested,
    # so a failing step of the builder would go unnoticed.
    local rc
    set +e
    "$builder" "$dir.tmp" "$@" >&2
    rc=$?
    set -e
    if [ $rc -ne 0 ]; then rm -rf "$dir.tmp"; exec {lock}>&-; return $rc; fi
    (cd "$dir.tmp" && find . -type f ! -name 'MANIFEST*' -print0 | sort -z | xargs -0 sha256sum >MANIFEST.new &&
      mv MANIFEST.new MANIFEST)
    mv "$dir.tmp" "$dir"
  fi
  exec {lock}>&-
  echo "$dir"
}
