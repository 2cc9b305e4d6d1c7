"""Writes the PyTorch checkpoints under tests/data/pt with Debian's torch 1.13:
    /usr/bin/python3 tests/data/pt/make_fixtures.py
tests/cpp/test_serialize_pt.cpp checks them against values derived by hand (arange-based), and
scripts/fuzz seeds the unpickler fuzzer with them."""

import collections
import io
import os
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ["float16", "bfloat16", "complex64", "complex128", "bool", "int8", "uint8", "int16",
          "int32", "int64", "float32", "float64"]


def dtypes_state_dict():
    sd = collections.OrderedDict()
    for name in DTYPES:
        dt = getattr(torch, name)
        v = torch.arange(6) % 2 if dt == torch.bool else torch.arange(6)
        sd[name] = v.to(dt).reshape(2, 3)
    base = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    sd["shared.base"] = base
    sd["shared.t"] = base.t()          # non-contiguous view
    sd["shared.row"] = base[1]         # offset 3
    sd["shared.col"] = base[1:, 2]     # offset 5, stride 3
    sd["scalar"] = torch.tensor(2.5, dtype=torch.float64)
    sd["empty"] = torch.zeros(0, 3)
    return sd


def main():
    sd = dtypes_state_dict()
    torch.save(sd, os.path.join(HERE, "state_dict.pt"))

    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.arange(6.).reshape(2, 3))
        lin.bias.copy_(torch.tensor([-1., 1.]))
    nested = {"model": lin.state_dict(), "epoch": 3, "lr": 0.125, "name": "net",
              "list": [torch.ones(2), torch.zeros(1, dtype=torch.int64)],
              "tuple": (torch.full((2,), 7.0), None), 5: torch.tensor([5]),
              "param": torch.nn.Parameter(torch.tensor([1.5, -2.0]))}
    torch.save(nested, os.path.join(HERE, "nested.pt"))

    # The dtype state dict again with every record DEFLATE-compressed.
    buf = io.BytesIO()
    torch.save(sd, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src, \
            zipfile.ZipFile(os.path.join(HERE, "deflate.pt"), "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))

    torch.save(torch.arange(3.), os.path.join(HERE, "legacy.pt"),
               _use_new_zipfile_serialization=False)

    # data.pkl calling posix.system: must be refused before anything runs.
    evil = b"\x80\x02cposix\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03."
    with zipfile.ZipFile(os.path.join(HERE, "hostile.pt"), "w") as z:
        z.writestr("archive/data.pkl", evil)
        z.writestr("archive/version", "3\n")


if __name__ == "__main__":
    main()
