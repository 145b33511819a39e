"""NPZ files built to exhaust memory end in one line and exit code 2, decided from their zip
directory and .npy headers before anything is decompressed: a zip bomb, a directory that
declares more than its compressed bytes can hold, a method that decompresses whole reads
at once, a header that declares more than follows it."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import zipfile
import zlib

import numpy as np
import pytest

MIB = 2**20


def npy_header(shape: tuple[int, ...]) -> bytes:
    """The .npy header (format 1.0) of a float64 array of ``shape``."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def zip_archive(name: str, method: int, data: bytes, size: int, crc: int) -> bytes:
    """A zip archive of one member ``name`` whose ``data`` (compressed by ``method``) its
    local header and directory say decompress to ``size`` bytes with checksum ``crc``."""
    encoded = name.encode()
    fields = struct.pack("<HHHHHIIIHH", 20, 0, method, 0, 33, crc, len(data), size, len(encoded), 0)
    local = b"PK\x03\x04" + fields + encoded
    central = b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack("<HHHII", 0, 0, 0, 0, 0) + encoded
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    return local + data + central + end


def zero_bomb(shape: tuple[int, ...]) -> tuple[bytes, int, int]:
    """A deflate stream of the .npy of a zero float64 array of ``shape`` (its data a whole
    number of MiB), with its size and CRC-32: one MiB of zeros compressed once, after a full
    flush (so it refers to nothing before it), and repeated."""
    header = npy_header(shape)
    mebibytes = int(np.prod(shape)) * 8 // MIB
    zeros = bytes(MIB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(header)
    for _ in range(mebibytes):
        crc = zlib.crc32(zeros, crc)
    return head + block * mebibytes + compressor.flush(zlib.Z_FINISH), len(header) + mebibytes * MIB, crc


def refusal(path) -> str:
    """What ``cbai bound PATH`` says on stderr; it must fail with exit code 2 and nothing on stdout."""
    run = subprocess.run([sys.executable, "-m", "cbai_cli", "bound", str(path)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 2 and run.stdout == "", run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("cbai: error: ")
    return run.stderr[len("cbai: error: "):-1].replace(str(path), "F")


def test_the_deflate_stream_of_the_bomb_decompresses_to_what_it_declares():
    # the helper itself, on a bomb small enough to decompress here: 2 MiB of zeros
    stream, size, crc = zero_bomb((2 * MIB // 8,))
    data = zlib.decompress(stream, -15)
    assert len(data) == size and zlib.crc32(data) == crc and data.endswith(bytes(2 * MIB))


def test_a_zip_bomb_is_refused_from_its_directory(tmp_path):
    # 1.5 MiB on disk, a 6,144,000 × 32 array of 1500 MiB once decompressed: loading holds three times that
    stream, size, crc = zero_bomb((6_144_000, 32))
    path = tmp_path / "bomb.npz"
    path.write_bytes(zip_archive("arms.npy", zipfile.ZIP_DEFLATED, stream, size, crc))
    assert path.stat().st_size < 2 * MIB
    assert refusal(path) == ("F: its arrays decompress to 1.46 GiB, and loading them holds about 4.39 GiB, more than "
                             "the limit of 4 GiB (CBAI_MEMORY_LIMIT raises it); or store fewer arms or dimensions")


def test_a_directory_declaring_more_than_its_compressed_bytes_can_hold_is_refused(tmp_path):
    stream = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = stream.compress(npy_header((10,)) + bytes(80)) + stream.flush()
    path = tmp_path / "hostile.npz"
    path.write_bytes(zip_archive("arms.npy", zipfile.ZIP_DEFLATED, data, 4_000_000_000, 0))
    assert refusal(path) == (f"F: not a valid .npz file (member 'arms.npy': its directory declares 4,000,000,000 "
                             f"bytes, more than its {len(data)} deflated bytes can hold)")


def test_a_stored_member_declaring_more_than_it_stores_is_refused(tmp_path):
    data = npy_header((10,)) + bytes(80)
    path = tmp_path / "hostile.npz"
    path.write_bytes(zip_archive("arms.npy", zipfile.ZIP_STORED, data, len(data) + 1, zlib.crc32(data)))
    assert refusal(path) == (f"F: not a valid .npz file (member 'arms.npy': its directory declares {len(data) + 1} "
                             f"bytes, more than its {len(data)} stored bytes can hold)")


@pytest.mark.parametrize(("method", "number"), [(zipfile.ZIP_BZIP2, 12), (zipfile.ZIP_LZMA, 14)])
def test_a_member_compressed_otherwise_than_numpy_writes_is_refused_before_it_is_read(tmp_path, method, number):
    path = tmp_path / "other.npz"
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        archive.writestr("arms.npy", npy_header((10,)) + bytes(80))
    assert refusal(path) == (f"F: not a valid .npz file (member 'arms.npy' is compressed with zip method {number}; NPZ "
                             "members are stored or deflated)")


def test_a_header_declaring_more_than_follows_it_is_refused(tmp_path):
    data = npy_header((10**7, 10**6)) + bytes(64)
    path = tmp_path / "hostile.npz"
    path.write_bytes(zip_archive("arms.npy", zipfile.ZIP_STORED, data, len(data), zlib.crc32(data)))
    assert refusal(path) == ("F: not a valid .npz file (field 'arms': its header declares a 10000000×1000000 array of "
                             "80,000,000,000,000 bytes but only 64 bytes follow it)")
