#!/usr/bin/env bash
# Re-captures the management datagrams in this folder from Debian's ptp4l (linuxptp 3.1.1):
# a grandmaster and a `free_running 1` slave (never adjusts a clock) with software timestamping
# on a veth pair between two network namespaces created here and removed on exit.
#   sudo tests/data/ptp4l/capture.sh [OUTDIR]      (default: this folder)
# Datagrams are recorded with strace around pmc (and a few lines of Python for the error case),
# independent of the C++ codec under test.
set -euo pipefail
out=$(realpath "${1:-$(dirname "$0")}")
name=ptpcap$$
tmp=$(mktemp -d /tmp/$name.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  ip netns del ${name}a 2>/dev/null || true
  ip netns del ${name}b 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add ${name}a
ip netns add ${name}b
ip link add eth0 netns ${name}a type veth peer name eth0 netns ${name}b
ip -n ${name}a addr add 10.78.0.1/24 dev eth0
ip -n ${name}b addr add 10.78.0.2/24 dev eth0
for ns in ${name}a ${name}b; do ip -n $ns link set eth0 up; ip -n $ns link set lo up; done

printf '[global]\nuds_address %s/gm.sock\npriority1 10\n' "$tmp" > "$tmp/gm.conf"
printf '[global]\nuds_address %s/slave.sock\nfree_running 1\nslaveOnly 1\n' "$tmp" > "$tmp/slave.conf"
ip netns exec ${name}a ptp4l -S -i eth0 -f "$tmp/gm.conf" > "$tmp/gm.log" 2>&1 & pids+=($!)
ip netns exec ${name}b ptp4l -S -i eth0 -f "$tmp/slave.conf" > "$tmp/slave.log" 2>&1 & pids+=($!)

for _ in $(seq 60); do
  if pmc -u -b 0 -s "$tmp/slave.sock" 'GET TIME_STATUS_NP' 2>/dev/null | grep -q 'gmPresent *true'; then break; fi
  sleep 1
done
sleep 3  # let the slave measure a path delay

# Each data set as pmc -z asked for it and ptp4l answered, with pmc's own decoding next to it:
# the unit tests check our decoder against pmc's text, an implementation independent of ours.
extract() {  # strace log -> request.bin and response .bin
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def grab(call):
    m = re.search(call + r'\(3, "((?:\\x[0-9a-f]{2})*)", \d+,.*= (\d+)$', text, re.M)
    data = bytes(int(h, 16) for h in re.findall(r"\\x([0-9a-f]{2})", m.group(1)))
    assert len(data) == int(m.group(2)), call
    return data
open(sys.argv[2], "wb").write(grab("sendto"))
open(sys.argv[3], "wb").write(grab("recvfrom"))
PY
}
for role in slave gm; do
  for ds in TIME_STATUS_NP PORT_DATA_SET CURRENT_DATA_SET PARENT_DATA_SET; do
    base="$out/${role}_${ds,,}"
    strace -s 4096 -e trace=sendto,recvfrom -xx -o "$tmp/strace.txt" \
      pmc -z -u -b 0 -s "$tmp/$role.sock" "GET $ds" > "$base.pmc.txt"
    extract "$tmp/strace.txt" "$base.request.bin" "$base.bin"
  done
done

# An id ptp4l does not implement (TRANSPARENT_CLOCK_DEFAULT_DATA_SET, which pmc refuses to send)
# draws a MANAGEMENT_ERROR_STATUS TLV.
python3 - "$tmp" "$out/slave_error_not_supported.bin" <<'PY'
import os, socket, struct, sys
tmp, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(os.path.join(tmp, "capture.sock"))
s.settimeout(2)
hdr = struct.pack(">BBHBBHQI8sHHBB", 0x0D, 2, 54, 0, 0, 0, 0, 0, bytes(8), 0x1234, 200, 0x04, 0x7F)
mgmt = b"\xff" * 10 + bytes([0, 0, 0, 0]) + struct.pack(">HHH", 1, 2, 0x4000)
s.sendto(hdr + mgmt, os.path.join(tmp, "slave.sock"))
data = s.recv(2048)
assert data[48:50] == b"\x00\x02", "expected an error TLV"
open(path, "wb").write(data)
PY
ls -l "$out"/*.bin
