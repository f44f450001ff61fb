#!/usr/bin/env python3
"""The independent header walk of docs/cuda.md: lists the entries of an ELF64 file's .nv_fatbin
from the section headers and the fatbinary container and entry headers alone, without envdoctor's
reader. One line per entry: "sm_100f" for a cubin, "compute_80 isa9.4" for PTX.

Layout (docs/cuda.md): container {u32 magic 0xBA55ED50, u16 version, u16 header_size, u64 fat_size};
entry {u16 kind (1 PTX, 2 cubin), u16 version, u32 header_size, u64 payload_size, ...,
u16 minor @24, u16 major @26, u32 arch @28, u64 flags @40 (0x100000 'a', 0x200000 'f')}."""
import struct
import sys


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    for name, _type, _flags, _addr, offset, size in headers:
        yield data[strtab + name:data.index(b"\0", strtab + name)].decode(), offset, size


def entries(section):
    at = 0
    while at + 16 <= len(section):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", section, at)
        if magic != 0xBA55ED50:
            at += 8  # zero padding between containers
            continue
        entry, end = at + header_size, at + header_size + fat_size
        while entry < end:
            kind, _v, entry_header, payload = struct.unpack_from("<HHIQ", section, entry)
            minor, major, arch = struct.unpack_from("<HHI", section, entry + 24)
            flags, = struct.unpack_from("<Q", section, entry + 40)
            variant = "a" if flags & 0x100000 else "f" if flags & 0x200000 else ""
            if kind == 2:
                yield "sm_%d%s" % (arch, variant)
            elif kind == 1:
                yield "compute_%d%s isa%d.%d" % (arch, variant, major, minor)
            entry += entry_header + payload
        at = end


def main(path):
    data = open(path, "rb").read()
    for name, offset, size in sections(data):
        if name == ".nv_fatbin":
            for line in entries(data[offset:offset + size]):
                print(line)


if __name__ == "__main__":
    main(sys.argv[1])
