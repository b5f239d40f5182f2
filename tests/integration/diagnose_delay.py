#!/usr/bin/env python3
"""One-way delay on one lab host's sends, without netem (this kernel has no netem or fq qdisc).

Run inside the host's network namespace:  diagnose_delay.py DELAY_MS IFACE PEER_IP=PEER_MAC...
Routes each PEER_IP/32 through a TUN device; every IP packet the host sends to a peer is read
from it, held DELAY_MS, and sent out IFACE in an Ethernet frame to the peer's MAC (AF_PACKET).
What the peers send back arrives on IFACE as before, so only this host's direction is slower: a
path asymmetry at the network layer, below the sockets whose timestamps the agent takes. On
SIGTERM the routes are removed (rp_filter is turned off in this namespace, the lab host's own:
replies come in on IFACE while the route to their source is the TUN device).
"""
import collections
import fcntl
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
TUN_NAME = "dly0"


def sh(*args):
    subprocess.run(args, check=True)


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        delay = float(argv[1]) / 1000
    except ValueError:
        print(f"diagnose_delay: DELAY_MS {argv[1]!r} is not a number", file=sys.stderr)
        return 2
    if not 0 < delay <= 1:
        print("diagnose_delay: DELAY_MS must be in (0, 1000]", file=sys.stderr)
        return 2
    iface, peers = argv[2], {}
    for arg in argv[3:]:
        ip, _, mac = arg.partition("=")
        octets = mac.split(":")
        if len(octets) != 6:
            print(f"diagnose_delay: {arg!r} is not PEER_IP=PEER_MAC", file=sys.stderr)
            return 2
        socket.inet_aton(ip)
        peers[ip] = bytes(int(o, 16) for o in octets)
    own_mac = bytes(int(o, 16) for o in open(f"/sys/class/net/{iface}/address").read().strip().split(":"))

    tun = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", TUN_NAME.encode(), IFF_TUN | IFF_NO_PI))
    out = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    out.bind((iface, 0))
    sh("sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", f"net.ipv4.conf.{iface}.rp_filter=0")
    sh("ip", "link", "set", TUN_NAME, "up")
    for ip in peers:
        sh("ip", "route", "add", f"{ip}/32", "dev", TUN_NAME)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    held = collections.deque()  # (due, frame)
    sent = dropped = 0
    print("diagnose_delay: ready", flush=True)
    try:
        while not stopping:
            timeout = max(0.0, held[0][0] - time.monotonic()) if held else 0.2
            try:
                readable, _, _ = select.select([tun], [], [], timeout)
            except InterruptedError:
                continue
            if readable:
                packet = os.read(tun, 65536)
                # IPv4 only; the destination picks the frame's MAC. Anything else is counted.
                if len(packet) >= 20 and packet[0] >> 4 == 4 and socket.inet_ntoa(packet[16:20]) in peers:
                    dst = peers[socket.inet_ntoa(packet[16:20])]
                    held.append((time.monotonic() + delay, dst + own_mac + b"\x08\x00" + packet))
                else:
                    dropped += 1
            now = time.monotonic()
            while held and held[0][0] <= now:
                out.send(held.popleft()[1])
                sent += 1
    finally:
        for ip in peers:
            subprocess.run(["ip", "route", "del", f"{ip}/32", "dev", TUN_NAME], check=False)
        print(f"diagnose_delay: sent {sent}, dropped {dropped} (not IPv4 to a peer)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
