#!/usr/bin/env bash
# tests/kernels/run-in-guest, the kernel matrix's runner (scripts/kernel-matrix runs the matrix
# itself as a phase of scripts/test):
#  - usage errors exit 2; a mirror that cannot be reached exits 77 ("not reachable"), as does
#    SKEWSCOPE_KERNELS_OFFLINE=1 without a cached kernel; both in a private, temporary cache;
#  - the cache: an entry is built once, used while its files match its MANIFEST, rebuilt when a
#    file is corrupted or the MANIFEST is missing (a partial entry), and a builder's failure
#    keeps nothing;
#  - with the 6.12 kernel and root filesystem cached (a matrix run made them; offline, so this test
#    never downloads), a real guest: the payload is the command's directory, its output streams
#    out, its exit status comes back, and what it wrote comes out with --results.
source "$(dirname "$0")/lib.sh"
RUN=$SOURCE/tests/kernels/run-in-guest

set +e
"$RUN" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no arguments should exit 2"
"$RUN" --kernel 4.19 -- true >/dev/null 2>&1; [ $? -eq 2 ] || fail "an unknown kernel should exit 2"
"$RUN" --kernel 6.1 --timeout x -- true >/dev/null 2>&1; [ $? -eq 2 ] || fail "a bad --timeout should exit 2"
SKEWSCOPE_KERNELS_CACHE=$WORK/cache SKEWSCOPE_DEBIAN_MIRROR=http://127.0.0.1:9/debian \
  "$RUN" --kernel 6.1 -- true >"$WORK/unreachable.out" 2>&1
rc=$?
[ $rc -eq 77 ] && grep -q "not reachable" "$WORK/unreachable.out" || { cat "$WORK/unreachable.out"; fail "an unreachable mirror exited $rc, not 77"; }
SKEWSCOPE_KERNELS_CACHE=$WORK/cache SKEWSCOPE_KERNELS_OFFLINE=1 "$RUN" --kernel 6.12 -- true >"$WORK/offline.out" 2>&1
rc=$?
[ $rc -eq 77 ] || { cat "$WORK/offline.out"; fail "offline without a cached kernel exited $rc, not 77"; }
set -e
note "usage 2, unreachable 77, offline and cold 77"

# The cache, with a builder that counts its runs.
(
  SKEWSCOPE_KERNELS_CACHE=$WORK/cache2
  source "$SOURCE/tests/kernels/cache.sh"
  builds=$WORK/builds
  counting_builder() ( set -e; echo run >>"$builds"; echo "content" >"$1/file"; [ "$2" = ok ] )
  entry() { set +e; cache_entry test k1 counting_builder "$1"; local r=$?; set -e; return $r; }
  d=$(entry ok) && [ "$(wc -l <"$builds")" -eq 1 ] && [ -f "$d/file" ] || fail "first build"
  d=$(entry ok) && [ "$(wc -l <"$builds")" -eq 1 ] || fail "a valid entry was rebuilt"
  echo corrupt >"$d/file"
  d=$(entry ok) && [ "$(wc -l <"$builds")" -eq 2 ] && [ "$(cat "$d/file")" = content ] || fail "a corrupt entry was used"
  rm "$d/MANIFEST"
  d=$(entry ok) && [ "$(wc -l <"$builds")" -eq 3 ] || fail "an entry without MANIFEST was used"
  rm -rf "$d"
  r=0; entry fail >/dev/null 2>&1 || r=$?
  [ $r -ne 0 ] && [ ! -e "$d" ] && [ ! -e "$d.tmp" ] || fail "a failed build left something (status $r)"
)
note "cache: built once, corrupt and partial entries rebuilt, a failed build keeps nothing"

# A real guest, from the cache only.
mkdir -p "$WORK/payload"
echo "into the guest" >"$WORK/payload/in"
set +e
SKEWSCOPE_KERNELS_OFFLINE=1 "$RUN" --kernel 6.12 --smp 1 --memory 1024 --timeout 300 --payload "$WORK/payload" \
  --results "$WORK/results" -- bash -c 'cat in; uname -r; echo out >made; exit 7' >"$WORK/guest.out" 2>"$WORK/guest.err"
rc=$?
set -e
if [ $rc -eq 77 ]; then
  note "SKIP the guest part: the 6.12 kernel or the root filesystem is not cached (run scripts/kernel-matrix once)"
  echo "kmatrix_run_in_guest: 1 passed (guest part skipped), 0 failed"
  exit 0
fi
cat "$WORK/guest.out"
[ $rc -eq 7 ] || { cat "$WORK/guest.err"; fail "the command's exit status 7 came back as $rc"; }
grep -qx "into the guest" "$WORK/guest.out" || fail "the payload was not the command's directory"
grep -q '^6\.12\.' "$WORK/guest.out" || fail "the guest did not run Linux 6.12"
[ "$(cat "$WORK/results/made" 2>/dev/null)" = out ] || fail "--results did not bring the command's file out"
echo "kmatrix_run_in_guest: 1 passed, 0 failed"
