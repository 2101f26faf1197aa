#!/usr/bin/env python3
"""Reads a one-entry zip with Python's zipfile, as a user would.

usage: read_zip.py ZIP ENTRY_NAME SIZE CRC32 [EXPECTED_CONTENT_FILE | --directory-only]

Checks that the archive holds exactly ENTRY_NAME, streamed (general purpose bit 3), whose
content has SIZE bytes and CRC-32 CRC32 (decimal) when read through zipfile (which checks the
CRC itself), and equals EXPECTED_CONTENT_FILE when given. --directory-only checks the central
directory (ZIP64 records included) without reading the entry. Exits 0 and prints "ok" if so.
"""
import sys
import zipfile
import zlib


def main():
    path, name, size, crc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    directory_only = sys.argv[5:] == ["--directory-only"]
    expected = None
    if len(sys.argv) > 5 and not directory_only:
        expected = open(sys.argv[5], "rb").read()
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == [name], [i.filename for i in infos]
        info = infos[0]
        assert info.flag_bits & 0x08, "no data descriptor flag"
        assert info.compress_type == zipfile.ZIP_DEFLATED, info.compress_type
        assert info.file_size == size, (info.file_size, size)
        assert info.CRC == crc, (info.CRC, crc)
        if directory_only:
            print("ok")
            return
        read_size, read_crc, content = 0, 0, bytearray()
        with archive.open(info) as entry:
            while True:
                block = entry.read(1 << 22)
                if not block:
                    break
                read_size += len(block)
                read_crc = zlib.crc32(block, read_crc)
                if expected is not None:
                    content += block
        assert read_size == size, (read_size, size)
        assert read_crc == crc, (read_crc, crc)
        if expected is not None:
            assert bytes(content) == expected, "content differs"
    print("ok")


if __name__ == "__main__":
    main()
