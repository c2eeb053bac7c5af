"""safetensors written and read by hand, from the format's specification.

File = 8-byte little-endian u64 N, then N bytes of UTF-8 JSON, then the raw data.
The JSON maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} where the
offsets count bytes from the first byte AFTER the header; "__metadata__" holds string pairs.
Data is little-endian and row-major. The header is padded with spaces to a multiple of 8 so the
data starts aligned (the reference implementation does the same).

Rounding to the stored dtype happens here and nowhere else, so the golden values can be computed
from what read_file() gives back: exactly the numbers the file holds.
"""

import json
import struct

import numpy as np

_NP_DTYPE = {"F32": "<f4", "F16": "<f2"}
ITEM_BYTES = {"F32": 4, "F16": 2, "BF16": 2}


def f32_to_bf16_bits(x):
    """float32 array -> uint16 bf16 bit patterns, round to nearest, ties to even.

    bf16 is the top 16 bits of an f32. Adding 0x7FFF plus the lowest kept bit before the shift
    rounds to nearest with ties to even. No NaN/Inf can occur in these random weights (checked).
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    if not np.all(np.isfinite(x)):
        raise ValueError("bf16 rounding: non-finite weight")
    u = x.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_bits_to_f32(bits):
    """uint16 bf16 bit patterns -> float32 (exact: shift the 16 bits up)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def encode_tensor(array, dtype):
    """float array -> (raw little-endian bytes in `dtype`)."""
    a = np.asarray(array, dtype=np.float64)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        h = a.astype(np.float32).astype("<f2")  # IEEE round to nearest even
        if not np.all(np.isfinite(h)):
            raise ValueError("f16 rounding overflowed")
        return h.tobytes()
    if dtype == "BF16":
        return f32_to_bf16_bits(a.astype(np.float32)).astype("<u2").tobytes()
    raise ValueError(f"dtype must be F32, F16 or BF16, got {dtype}")


def write_file(path, tensors, dtype):
    """tensors: list of (name, float array) in the order they go into the file; one dtype for all."""
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    offset = 0
    for name, array in tensors:
        raw = encode_tensor(array, dtype)
        shape = list(np.shape(array))
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
    return offset  # bytes of tensor data


def read_file(path):
    """path -> (dict name -> float64 numpy array, dict name -> dtype, metadata)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n].decode("utf-8"))
    body = data[8 + n :]
    meta = header.pop("__metadata__", {})
    out, dtypes = {}, {}
    end_max = 0
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = info["dtype"]
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        if end - begin != count * ITEM_BYTES[dtype]:
            raise ValueError(f"{path}: {name} has {end - begin} bytes for shape {info['shape']}")
        raw = body[begin:end]
        if dtype == "BF16":
            arr = bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2"))
        else:
            arr = np.frombuffer(raw, dtype=_NP_DTYPE[dtype])
        out[name] = arr.astype(np.float64).reshape(info["shape"])
        dtypes[name] = dtype
        end_max = max(end_max, end)
    if end_max != len(body):
        raise ValueError(f"{path}: data is {len(body)} bytes, tensors cover {end_max}")
    return out, dtypes, meta
