#!/usr/bin/env python3
"""Runs the builds of one libtorch program and compares what they print.

Usage: compare_output.py --source prog.cpp BIN [BIN ...]

The first binary (the program built against ember through include/ember/compat) is the
reference; every other one (the ported build, the libtorch build) must print the same lines.
Lines are compared token by token: numbers within a tolerance, everything else exactly, after
mapping "ember::" to "torch::" (the ported build prints ember's namespace). The tolerance is
rtol=1e-4, atol=1e-6 unless the source has a line "// compat: rtol=1e-3 atol=1e-5". Each binary
runs in its own empty working directory, so files a program saves do not collide.
"""
import argparse
import difflib
import math
import os
import re
import subprocess
import sys
import tempfile

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)")
TOKEN = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b|\s+|.")


def tolerances(source):
    rtol, atol = 1e-4, 1e-6
    with open(source, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*//\s*compat:(.*)", line)
            if m:
                for key, value in re.findall(r"(rtol|atol)=([0-9.eE+-]+)", m.group(1)):
                    if key == "rtol":
                        rtol = float(value)
                    else:
                        atol = float(value)
    return rtol, atol


def tokens(line):
    # Whitespace runs collapse to one space, so column alignment does not matter.
    out = []
    for t in TOKEN.findall(line.replace("ember::", "torch::")):
        if t.isspace():
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(t)
    while out and out[-1] == " ":
        out.pop()
    while out and out[0] == " ":
        out.pop(0)
    return out


def same_token(a, b, rtol, atol):
    if a == b:
        return True
    if NUMBER.fullmatch(a) and NUMBER.fullmatch(b):
        x, y = float(a), float(b)
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return abs(x - y) <= atol + rtol * max(abs(x), abs(y))
    return False


def same_line(a, b, rtol, atol):
    ta, tb = tokens(a), tokens(b)
    return len(ta) == len(tb) and all(same_token(x, y, rtol, atol) for x, y in zip(ta, tb))


def run(binary):
    with tempfile.TemporaryDirectory(prefix="ember-compat-") as cwd:
        p = subprocess.run([binary], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=540)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        sys.exit(f"FAIL: {binary} exited with {p.returncode}")
    return p.stdout.splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    rtol, atol = tolerances(args.source)
    ref_bin = args.binaries[0]
    ref = run(ref_bin)
    print(f"{os.path.basename(ref_bin)}: {len(ref)} lines")
    failed = False
    for other_bin in args.binaries[1:]:
        other = run(other_bin)
        bad = [i for i in range(max(len(ref), len(other)))
               if i >= len(ref) or i >= len(other) or not same_line(ref[i], other[i], rtol, atol)]
        name = os.path.basename(other_bin)
        if bad:
            failed = True
            print(f"{name}: {len(bad)} of {len(other)} lines differ (rtol={rtol}, atol={atol}); "
                  f"first at line {bad[0] + 1}")
            sys.stdout.writelines(difflib.unified_diff(
                [l + "\n" for l in ref], [l + "\n" for l in other],
                os.path.basename(ref_bin), name, n=2))
        else:
            print(f"{name}: same output")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
