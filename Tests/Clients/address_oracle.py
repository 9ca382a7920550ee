#!/usr/bin/env python3
"""Judges IP addresses with Python's ipaddress module (no code of ours): for each address in ADDRESSES (one a line),
writes "public" or "restricted" to OUT, in order.

Restricted: not `is_global`, or multicast (ipaddress calls 224.0.0.1 and ff02::1 global), plus what TileCache's rule
(NetworkAddress) adds to Python 3.11's tables, each for a reason:
- 192.0.0.0/24 and 192.88.99.0/24 (IANA: not globally reachable; Python 3.11.7 lists only parts of the first);
- fec0::/10, 3fff::/20, 5f00::/16, 64:ff9b:1::/48 (site-local, documentation, SRv6, local-use NAT64: IANA, not in
  Python 3.11's tables);
- IPv4-mapped and IPv4-compatible IPv6, Teredo: always; NAT64 (64:ff9b::/96) and 6to4: by the IPv4 address they
  wrap (Python judges them by the IPv6 block); an ISATAP interface identifier by the IPv4 address it wraps when that
  one is restricted.

Usage: address_oracle.py ADDRESSES OUT (NetworkAddressTests)."""
import ipaddress
import sys

EXTRA_V4 = [ipaddress.ip_network(n) for n in ("192.0.0.0/24", "192.88.99.0/24")]
EXTRA_V6 = [ipaddress.ip_network(n) for n in ("fec0::/10", "3fff::/20", "5f00::/16", "64:ff9b:1::/48")]
NAT64 = ipaddress.ip_network("64:ff9b::/96")


def restricted_v4(ip):
    return not ip.is_global or ip.is_multicast or any(ip in n for n in EXTRA_V4)


def restricted(text):
    ip = ipaddress.ip_address(text)
    if ip.version == 4:
        return restricted_v4(ip)
    value = int(ip)
    if ip.ipv4_mapped is not None or value >> 32 == 0:
        return True  # mapped, compatible, ::, ::1
    if ip in NAT64:
        return restricted_v4(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        return restricted_v4(ip.sixtofour)
    if ip.teredo is not None:
        return True
    if (value >> 32) & 0xFDFFFFFF == 0x00005EFE and restricted_v4(ipaddress.IPv4Address(value & 0xFFFFFFFF)):
        return True
    return not ip.is_global or ip.is_multicast or any(ip in n for n in EXTRA_V6)


with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        out.write(("restricted" if restricted(line.strip()) else "public") + "\n")
