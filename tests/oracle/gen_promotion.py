#!/usr/bin/python3
"""Type-promotion oracle: writes <out>/promotion.txt from Debian's PyTorch 1.13.

Read by tests/cpp/test_promotion.cpp. One record per line, space separated:

  V 1                       format version
  P <mode> <a> <b> <res>    expected result dtype of a promotion query
  C <from> <to> <0|1>       torch.can_cast(from, to)

Modes (a, b are dtype names as torch prints them without "torch.", or the Python scalar kinds
b=bool, i=int, f=float, c=complex):
  pt  torch.promote_types(a, b)                         -> ember::promoteTypes
  tt  torch.result_type(1-D a, 1-D b)                   -> ember::result_type(Tensor, Tensor)
  t0  torch.result_type(1-D a, 0-dim b)
  0t  torch.result_type(0-dim a, 1-D b)
  00  torch.result_type(0-dim a, 0-dim b)
  ts  torch.result_type(1-D a, scalar b)                -> ember::result_type(Tensor, Scalar)
  st  torch.result_type(scalar a, 1-D b)                -> ember::result_type(Scalar, Tensor)
  0s  torch.result_type(0-dim a, scalar b)
  s0  torch.result_type(scalar a, 0-dim b)
  ss  torch.result_type(scalar a, scalar b)             -> ember::result_type(Scalar, Scalar)

Run with /usr/bin/python3 (the interpreter that has torch): gen_promotion.py --out DIR
"""

import argparse
import os
import sys

import torch

DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
    torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128
]
SCALARS = {"b": True, "i": 3, "f": 2.5, "c": 1.5 - 0.5j}


def name(dt):
    return str(dt).replace("torch.", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    assert torch.get_default_dtype() == torch.float32
    lines = ["V 1"]

    def tensor(dt, zero_dim):
        return torch.ones((), dtype=dt) if zero_dim else torch.ones(2, dtype=dt)

    for a in DTYPES:
        for b in DTYPES:
            lines.append(f"P pt {name(a)} {name(b)} {name(torch.promote_types(a, b))}")
            for mode, za, zb in (("tt", False, False), ("t0", False, True), ("0t", True, False),
                                 ("00", True, True)):
                r = torch.result_type(tensor(a, za), tensor(b, zb))
                lines.append(f"P {mode} {name(a)} {name(b)} {name(r)}")
            lines.append(f"C {name(a)} {name(b)} {int(torch.can_cast(a, b))}")
        for k, v in SCALARS.items():
            lines.append(f"P ts {name(a)} {k} {name(torch.result_type(tensor(a, False), v))}")
            lines.append(f"P st {k} {name(a)} {name(torch.result_type(v, tensor(a, False)))}")
            lines.append(f"P 0s {name(a)} {k} {name(torch.result_type(tensor(a, True), v))}")
            lines.append(f"P s0 {k} {name(a)} {name(torch.result_type(v, tensor(a, True)))}")
    for ka, va in SCALARS.items():
        for kb, vb in SCALARS.items():
            lines.append(f"P ss {ka} {kb} {name(torch.result_type(va, vb))}")

    path = os.path.join(args.out, "promotion.txt")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)
    print(f"gen_promotion: {len(lines) - 1} records -> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
