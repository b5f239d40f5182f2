#!/usr/bin/env python3
"""Records the raw ctnetlink datagrams of the network namespace it runs in, one per line as
`LENGTH HEX`, for the captured-bytes tests of agent/translate/ (tests/unit/translate/).

Usage: ip netns exec NS conntrack_record.py OUT SECONDS
Creates OUT.ready once subscribed (to NEW and DESTROY events, the groups the agent reads), then
writes every datagram that arrives within SECONDS.
"""
import socket
import sys
import time

NETLINK_NETFILTER = 12
NF_NETLINK_CONNTRACK_NEW = 1
NF_NETLINK_CONNTRACK_DESTROY = 4

out_path, seconds = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
s.bind((0, NF_NETLINK_CONNTRACK_NEW | NF_NETLINK_CONNTRACK_DESTROY))
open(out_path + ".ready", "w").close()
deadline = time.monotonic() + seconds
with open(out_path, "w") as out:
    while (left := deadline - time.monotonic()) > 0:
        s.settimeout(left)
        try:
            data = s.recv(65536)
        except socket.timeout:
            break
        out.write(f"{len(data)} {data.hex()}\n")
        out.flush()
