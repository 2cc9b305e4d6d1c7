#!/usr/bin/env python3
"""Lists the op functions of src/ops and gives each an op id, a schema and traits.

    scripts/gen_op_list.py --report          # what it finds, one line per op
    scripts/gen_op_list.py --write           # writes src/core/op_list.def, inserts EMBER_OP lines

Used to create src/core/op_list.def and the `EMBER_OP(...)` entry lines of the op functions
(Note [Call path]). From then on the list is maintained by hand: a new op adds its row and its
entry line, and tests/python/test_call_path.py fails for an op function that has none.

An op function is a public function of namespace ember (or a nested public namespace) defined in
src/ops/**/*.cpp and declared in a public header under include/ember, or a Tensor method defined
there that does more than forward to a function of the same name.
"""

import argparse
import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Ops whose output shape depends on the data.
DYNAMIC = {"nonzero", "masked_select", "unique", "unique_consecutive", "unique_dim", "argwhere",
           "nonzero_static", "bincount", "histc", "histogram", "repeat_interleave",
           "_unique2", "unique_all", "where_cond"}
# Ops whose CPU result may depend on thread scheduling (PyTorch's nondeterministic list).
NONDET = {"index_add", "index_add_", "scatter_add", "scatter_add_", "index_put_", "index_put",
          "put_", "scatter_reduce", "scatter_reduce_", "embedding_bag", "histc", "bincount"}
# Views: the output shares the input's storage.
VIEWS = {"view", "view_as", "reshape_alias", "as_strided", "expand", "expand_as", "narrow",
         "select", "slice", "squeeze", "unsqueeze", "transpose", "t", "permute", "movedim",
         "moveaxis", "swapaxes", "swapdims", "diagonal", "unfold", "unbind", "split",
         "split_with_sizes", "tensor_split", "chunk", "real", "imag", "view_as_real",
         "view_as_complex", "alias", "detach", "conj", "mT", "mH", "adjoint", "T", "H",
         "hsplit", "vsplit", "dsplit", "unflatten", "_conj", "indices", "values", 
         "squeeze_", "unsqueeze_", "transpose_", "t_", "as_strided_",
         "detach_", "resolve_neg", "positive", "align_as", "lift", "narrow_copy_view", "_neg_view"}
# Ops that allocate but read or write no tensor data.
ALLOC_ONLY = {"empty", "empty_strided", "empty_like", "from_blob", "new_empty"}
# PyTorch's autocast lists (CPU and CUDA merged): ops computed in the lower-precision dtype,
# ops forced to float32, and ops that promote to the widest input.
AUTOCAST_LOWER = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d", "convolution", "mm", "mv", "matmul", "addmm", "addmv",
                  "addr", "bmm", "baddbmm", "addbmm", "linear", "prelu", "chain_matmul",
                  "linalg_multi_dot", "_convolution", "lstm_cell", "gru_cell", "rnn_tanh_cell",
                  "rnn_relu_cell", "einsum", "dot", "vdot", "tensordot"}
AUTOCAST_FP32 = {"acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2",
                 "log1p", "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm",
                 "group_norm", "norm", "nuclear_norm", "frobenius_norm", "cosine_similarity",
                 "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
                 "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss",
                 "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
                 "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
                 "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm",
                 "logsumexp", "softmax", "log_softmax", "cumprod", "cumsum", "prod", "sum",
                 "mean", "var", "std", "batch_norm", "instance_norm", "cross_entropy",
                 "binary_cross_entropy", "linalg_vector_norm", "linalg_matrix_norm",
                 "linalg_norm", "linalg_inv", "linalg_det", "linalg_solve", "linalg_cholesky",
                 "linalg_qr", "linalg_svd", "linalg_eigh", "linalg_eig", "linalg_eigvals",
                 "linalg_eigvalsh", "linalg_lstsq", "linalg_pinv", "linalg_slogdet",
                 "linalg_lu_factor", "linalg_lu", "fft_fft", "fft_ifft", "fft_rfft",
                 "upsample_trilinear3d", "upsample_bilinear2d", "grid_sampler"}
AUTOCAST_PROMOTE = {"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sample",
                    "index_put", "scatter_add", "tensordot", "cat", "stack", "index_copy",
                    "where", "lerp"}
# Creation ops without a tensor input.
FACTORY_FILES = {"factory.cpp", "random.cpp"}

TYPE_MAP = [
    (r"^(const )?Tensor ?&?$", "Tensor"),
    (r"^Tensor ?&$", "Tensor(a!)"),
    (r"^(const )?std::optional<Tensor> ?&?$", "Tensor?"),
    (r"^(const )?std::optional<Scalar> ?&?$", "Scalar?"),
    (r"^(const )?Scalar ?&?$", "Scalar"),
    (r"^int64_t$|^int$", "int"),
    (r"^double$|^float$", "float"),
    (r"^bool$", "bool"),
    (r"^std::optional<int64_t>$", "int?"),
    (r"^std::optional<double>$", "float?"),
    (r"^std::optional<bool>$", "bool?"),
    (r"^IntArrayRef$|^(const )?std::vector<int64_t> ?&?$|^(const )?DimVector ?&?$", "int[]"),
    (r"^OptionalIntArrayRef$|^std::optional<IntArrayRef>$", "int[]?"),
    (r"^ScalarType$", "ScalarType"),
    (r"^std::optional<ScalarType>$", "ScalarType?"),
    (r"^(const )?TensorOptions ?&?$", "TensorOptions"),
    (r"^ArrayRef<Tensor>$|^TensorList$|^(const )?std::vector<Tensor> ?&?$", "Tensor[]"),
    (r"^ArrayRef<std::optional<Tensor>>$|^(const )?std::vector<std::optional<Tensor>> ?&?$",
     "Tensor?[]"),
    (r"^std::string_view$|^(const )?std::string ?&?$|^const char ?\*$", "str"),
    (r"^std::optional<std::string_view>$|^(const )?std::optional<std::string> ?&?$", "str?"),
    (r"^(const )?std::optional<Generator> ?&?$|^(const )?Generator ?&?$", "Generator?"),
    (r"^Device$|^(const )?Device ?&$", "Device"),
    (r"^std::optional<Device>$", "Device?"),
    (r"^MemoryFormat$|^std::optional<MemoryFormat>$", "MemoryFormat?"),
    (r"^Layout$", "Layout"),
]


def schema_type(cpp):
    cpp = re.sub(r"\s+", " ", cpp.strip())
    for pat, name in TYPE_MAP:
        if re.match(pat, cpp):
            return name
    return "Any"


def return_type(cpp):
    cpp = re.sub(r"\s+", " ", cpp.strip())
    if cpp in ("Tensor", "const Tensor&"):
        return "Tensor"
    if cpp == "Tensor&":
        return "Tensor(a!)"
    m = re.match(r"std::tuple<(.*)>$", cpp)
    if m:
        parts = [p.strip() for p in split_top(m.group(1))]
        return "(" + ", ".join(return_type(p) for p in parts) + ")"
    if cpp in ("std::vector<Tensor>",):
        return "Tensor[]"
    return {"bool": "bool", "Scalar": "Scalar", "int64_t": "int", "double": "float",
            "void": "()"}.get(cpp, "Any")


def split_top(s):
    """Splits at commas outside <>, (), {} and quotes."""
    out, depth, cur, quote = [], 0, "", None
    for ch in s:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur)
    return out


def parse_params(text):
    params = []
    for p in split_top(text):
        p = p.strip()
        if not p or p == "void":
            continue
        default = None
        if "=" in p:
            p, default = [x.strip() for x in p.split("=", 1)]
        m = re.match(r"(.*?)([A-Za-z_][A-Za-z_0-9]*)$", p)
        if not m:
            params.append(("Any", p, "arg", default))
            continue
        params.append((m.group(1).strip(), schema_type(m.group(1)), m.group(2), default))
    return params


SIG = re.compile(r"^(?P<ret>[A-Za-z_][\w:<>,\s&*]*?)\s*(?P<amp>&?)\s*(?P<name>(?:Tensor::)?"
                 r"[A-Za-z_][A-Za-z_0-9]*)\((?P<params>.*)\)\s*(?P<const>const)?\s*(noexcept)?\s*\{$",
                 re.S)


def scan_file(path):
    """Top-level function definitions: (namespace path, anonymous?, ret, name, params, body,
    line of the opening brace)."""
    lines = open(path).read().split("\n")
    ns = []
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^namespace\s*([\w:]*)\s*\{", line)
        if m:
            ns.append(m.group(1) or "<anon>")
            i += 1
            continue
        if re.match(r"^\}\s*(//.*)?$", line) and ns:
            ns.pop()
            i += 1
            continue
        skipped = line.startswith(("template", "static", "using", "struct", "class", "enum",
                                   "constexpr", "inline", "extern", "typedef", "const ",
                                   "thread_local", "union"))
        if skipped and not line.rstrip().endswith(";"):
            # skip the whole item: to its closing line at column 0
            k = i
            while k < len(lines) and not lines[k].rstrip().endswith(("{", ";")):
                k += 1
            if k < len(lines) and lines[k].rstrip().endswith("{"):
                head = "\n".join(lines[i:k + 1])
                k += 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                # a template or static function: not an op, but a helper ops may call
                m = re.search(r"([A-Za-z_][A-Za-z_0-9]*)\((?:.|\n)*\)\s*(const)?\s*\{$", head)
                if m and line.startswith(("template", "static", "inline")):
                    out.append(dict(ns=list(ns) + ["<helper>"], ret="", name=m.group(1),
                                    params="", const=False,
                                    body="\n".join(lines[i + 1:k]), brace_line=-1, file=path,
                                    end_line=k, one_liner=False))
            i = k + 1
            continue
        if line and re.match(r"^[A-Za-z\[]", line) and not skipped:
            j, sig = i, line
            while not sig.rstrip().endswith(("{", ";", "}")) and j < i + 8:
                j += 1
                if j >= len(lines):
                    break
                sig += "\n" + lines[j]
            st = sig.rstrip()
            one_liner = st.endswith("}") and "{" in st and not st.endswith("{")
            if one_liner:
                # "Tensor f(args) { return g(...); }": split at the brace after the ")"
                head_end = st.index(")") if ")" in st else -1
                depth, cut = 0, -1
                for idx, ch in enumerate(st):
                    if ch == "(":
                        depth += 1
                    elif ch == ")":
                        depth -= 1
                    elif ch == "{" and depth == 0:
                        cut = idx
                        break
                m = SIG.match(st[:cut + 1].strip()) if cut > 0 else None
                if m:
                    ret = (m.group("ret") + m.group("amp")).strip()
                    out.append(dict(ns=list(ns), ret=ret, name=m.group("name"),
                                    params=m.group("params"), const=bool(m.group("const")),
                                    body=st[cut + 1:-1].strip(), brace_line=j, file=path,
                                    end_line=j, one_liner=True))
                    i = j + 1
                    continue
            m = SIG.match(st.strip()) if st.endswith("{") else None
            if m:
                # body until a line "}" at column 0
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                body = "\n".join(lines[j + 1:k])
                ret = (m.group("ret") + m.group("amp")).strip()
                out.append(dict(ns=list(ns), ret=ret, name=m.group("name"),
                                params=m.group("params"), const=bool(m.group("const")),
                                body=body, brace_line=j, file=path, end_line=k,
                                one_liner=False))
                i = k + 1
                continue
            if st.endswith("{"):
                # an item we do not list (a variable with an initializer, ...): skip its body
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                i = k + 1
                continue
            i = j + 1
            continue
        i += 1
    return out


def public_names():
    names = set()
    for dp, _, fs in os.walk(os.path.join(ROOT, "include", "ember")):
        if "compat" in dp:
            continue
        for f in fs:
            if f.endswith(".h"):
                txt = open(os.path.join(dp, f)).read()
                names.update(re.findall(r"\b([a-z_][a-z_0-9]*)\s*\(", txt))
    return names


def header_defaults():
    """name -> list of declarations (param text), for defaults."""
    decls = collections.defaultdict(list)
    for dp, _, fs in os.walk(os.path.join(ROOT, "include", "ember")):
        if "compat" in dp:
            continue
        for f in fs:
            if not f.endswith(".h"):
                continue
            txt = open(os.path.join(dp, f)).read()
            for m in re.finditer(r"^\s*(?:[\w:<>,&\s*]+?)\s+&?([a-z_][a-z_0-9]*)\(([^;{]*?)\)\s*"
                                 r"(?:const)?\s*;", txt, re.M):
                decls[m.group(1)].append(m.group(2))
    return decls


PRIMITIVE_MARKS = ("OpRecorder", "data_ptr", "cpu::", "kernels", "record(",
                   "record_inplace", "make_view", "as_strided_view", "run_plan", "parallel_for",
                   "device_backend", "LAPACK", "lapack", "cblas", "gemm", "Storage", "copy_data",
                   "EMBER_DISPATCH", "check_cpu", "is_cpu()")


def classify(funcs_by_file):
    """Adds `primitive`, `vjp`, `jvp` per function, following same-file helper calls."""
    for path, funcs in funcs_by_file.items():
        by_name = collections.defaultdict(list)
        for f in funcs:
            by_name[f["name"].split("::")[-1]].append(f)

        def reach(f, seen):
            body = f["body"]
            prim = any(mark in body for mark in PRIMITIVE_MARKS)
            f["ew"] = f.get("ew", False) or "elementwise(" in body or "binary_scalar(" in body
            vjp = "OpRecorder" in body or "record(" in body
            jvp = "JvpCtx" in body
            for callee in set(re.findall(r"\b([a-z_][a-z_0-9]*)(?:<[^>]*>)?\(", body)):
                for g in by_name.get(callee, []):
                    if g is f or id(g) in seen or not g["ns"] or g["ns"][-1] not in (
                            "<anon>", "detail", "<helper>") and not g["name"].endswith(
                                ("_impl", "_rec")):
                        continue
                    seen.add(id(g))
                    p2, v2, j2 = reach(g, seen)
                    f["ew"] = f.get("ew", False) or g.get("ew", False)
                    prim, vjp, jvp = prim or p2, vjp or v2, jvp or j2
            return prim, vjp, jvp

        for f in funcs:
            f["primitive"], f["vjp"], f["jvp"] = reach(f, {id(f)})


def is_forwarder(f):
    body = f["body"].strip()
    base = f["name"].split("::")[-1]
    return bool(re.match(r"^return (ember::)?(\w+::)*" + re.escape(base.rstrip("_")) +
                         r"_?(_out)?\(.*\);$", body, re.S)) and body.count(";") == 1


def collect():
    pub = public_names()
    funcs_by_file = {}
    # Op files live in family folders (src/ops/<family>/); keyed by file name.
    for d, _, names in sorted(os.walk(os.path.join(ROOT, "src", "ops"))):
        for f in sorted(names):
            if f.endswith(".cpp"):
                funcs_by_file[f] = scan_file(os.path.join(d, f))
    classify(funcs_by_file)
    ops = []
    for fname, funcs in funcs_by_file.items():
        for f in funcs:
            if not f["ns"] or f["ns"][0] != "ember" or "<anon>" in f["ns"] or "<helper>" in f["ns"]:
                continue
            if any(n in ("detail", "reduce_detail", "internal") or n.endswith("_detail")
                   for n in f["ns"]):
                continue
            base = f["name"].split("::")[-1]
            if base not in pub or f["ret"] in ("void", "bool", "int64_t", "double", "Scalar",
                                               "ScalarType", "DimVector", "std::string"):
                if not (f["ret"] in ("void", "bool", "Scalar") and base in pub and
                        f["primitive"]):
                    continue
            if f["name"].startswith("Tensor::") and is_forwarder(f):
                continue
            if f.get("ew") and not f["primitive"]:
                continue  # the elementwise op it calls is the entry
            f["fname"] = fname
            ops.append(f)
    return ops


ELEMENTWISE_IDS = set()


def elementwise_ids():
    txt = open(os.path.join(ROOT, "include", "ember", "op_list.h")).read()
    txt += open(os.path.join(ROOT, "src", "core", "op_table.h")).read().split("enum class")[0]
    return set(re.findall(r"_\(([a-z_0-9]+)\)", txt))


# Ops generated by macros, listed by hand: (id, schema, traits).
POOL_ROWS = []
for n in (1, 2, 3):
    POOL_ROWS += [
        (f"max_pool{n}d_with_indices", f"max_pool{n}d_with_indices(Tensor input, int[] kernel_size, "
         "int[] stride=[], int[] padding=0, int[] dilation=1, bool ceil_mode=False) -> "
         "(Tensor, Tensor)", "kVjp|kJvp"),
        (f"max_pool{n}d", f"max_pool{n}d(Tensor input, int[] kernel_size, int[] stride=[], "
         "int[] padding=0, int[] dilation=1, bool ceil_mode=False) -> Tensor", "kVjp|kJvp"),
        (f"avg_pool{n}d", f"avg_pool{n}d(Tensor input, int[] kernel_size, int[] stride=[], "
         "int[] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
         "int? divisor_override=None) -> Tensor", "kVjp|kJvp"),
        (f"adaptive_avg_pool{n}d", f"adaptive_avg_pool{n}d(Tensor input, int[] output_size) -> "
         "Tensor", "kVjp|kJvp"),
        (f"adaptive_max_pool{n}d", f"adaptive_max_pool{n}d(Tensor input, int[] output_size) -> "
         "(Tensor, Tensor)", "kVjp|kJvp"),
    ]


def op_ids(ops):
    """Unique C identifiers: the name, then name_<n> for later overloads."""
    seen = collections.Counter()
    ew = elementwise_ids()
    for f in ops:
        ns = [n for n in f["ns"][1:]]
        base = f["name"].replace("Tensor::", "")
        qual = "_".join(ns + [base])
        key = qual
        seen[key] += 1
        if key in ew:
            seen[key] += 1 if seen[key] == 1 else 0  # the elementwise op owns the plain name
        f["id"] = key if seen[key] == 1 else f"{key}_{seen[key] - 1}"
        f["aten"] = "_".join(([n for n in ns if n != "functional"]) + [base])
        f["overload"] = "" if seen[key] == 1 else str(seen[key] - 1)


def traits(f):
    base = f["name"].replace("Tensor::", "")
    t = []
    if base in VIEWS or base.rstrip("_") in VIEWS:
        t.append("kView")
    if base in ALLOC_ONLY:
        t.append("kAllocOnly")
    if base.endswith("_") and not base.startswith("_"):
        t.append("kInplace")
    if base.endswith("_out"):
        t.append("kOut")
    if f["fname"] == "random.cpp" or "Generator" in f["params"]:
        t.append("kRandom")
    if base in DYNAMIC or base.replace("_out", "") in DYNAMIC:
        t.append("kDynamicShape")
    if base.rstrip("_") in NONDET or base in NONDET:
        t.append("kNondeterministic")
    if f["fname"] in FACTORY_FILES and "Tensor& " not in f["params"] and \
            "const Tensor&" not in f["params"]:
        t.append("kFactory")
    if not f["primitive"]:
        t.append("kComposite")
    else:
        if f["vjp"]:
            t.append("kVjp")
        if f["jvp"]:
            t.append("kJvp")
    core = base.replace("_out", "").rstrip("_")
    if core in AUTOCAST_LOWER:
        t.append("kAutocastLower")
    elif core in AUTOCAST_FP32:
        t.append("kAutocastFp32")
    elif core in AUTOCAST_PROMOTE:
        t.append("kAutocastPromote")
    return "|".join(t) if t else "kNone"


def schema(f, decls):
    params = parse_params(f["params"])
    # defaults from the header declaration with the same parameter names
    names = [p[2] for p in params]
    for d in decls.get(f["name"].replace("Tensor::", ""), []):
        dp = parse_params(d)
        if [p[2] for p in dp] == names:
            params = [(p[0], p[1], p[2], dp[i][3]) for i, p in enumerate(params)]
            break
    args = []
    if f["name"].startswith("Tensor::"):
        args.append("Tensor(a!) self" if f["name"].endswith("_") else "Tensor self")
    for cpp, st, name, default in params:
        s = f"{st} {name}"
        if default is not None:
            d = default.replace("std::nullopt", "None").replace("{}", "None" if "?" in st
                                                                 else "[]")
            d = d.replace("true", "True").replace("false", "False").replace('"', "'")
            s += "=" + d
        args.append(s)
    name = f["aten"] + ("." + f["overload"] if f["overload"] else "")
    return f"{name}({', '.join(args)}) -> {return_type(f['ret'])}"


def param_names(f):
    names = [p[2] for p in parse_params(f["params"])]
    if f["name"].startswith("Tensor::"):
        names = ["*this"] + names
    return names


def write(ops, decls):
    rows = []
    for f in ops:
        rows.append(f'  _({f["id"]}, "{schema(f, decls)}", {traits(f)})')
    for op, sch, tr in POOL_ROWS:
        rows.append(f'  _({op}, "{sch}", {tr})')
    path = os.path.join(ROOT, "src", "core", "op_list.def")
    with open(path, "w") as fh:
        fh.write("// The op list: one row per op function that is not elementwise (those are the\n"
                 "// X-macro lists of include/ember/op_list.h). _(id, schema, traits)\n"
                 "// Note [Op list] in src/core/op_table.h says what the columns mean.\n"
                 "// clang-format off\n#define EMBER_NON_ELEMENTWISE_OPS(_) \\\n")
        fh.write(" \\\n".join(rows) + "\n// clang-format on\n")
    # entry lines
    by_file = collections.defaultdict(list)
    for f in ops:
        by_file[f["file"]].append(f)
    for path, fs in by_file.items():
        lines = open(path).read().split("\n")
        for f in sorted(fs, key=lambda f: -f["brace_line"]):
            if lines[f["brace_line"] + 1].strip().startswith("EMBER_OP("):
                continue
            args = ", ".join([f["id"]] + param_names(f))
            entry = f"  EMBER_OP({args});"
            if f["one_liner"]:
                line = lines[f["brace_line"]]
                body = f["body"]
                head = line[:line.rindex(body)].rstrip()
                lines[f["brace_line"]:f["brace_line"] + 1] = [head, entry, "  " + body, "}"]
            else:
                lines.insert(f["brace_line"] + 1, entry)
        txt = "\n".join(lines)
        if '#include "ops/call_path.h"' not in txt:
            # after the first include line
            txt = re.sub(r'(#include "[^"]+"\n)', r'\1#include "ops/call_path.h"\n', txt, count=1)
        open(path, "w").write(txt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--force", action="store_true",
                    help="overwrite src/core/op_list.def (hand edits to it are lost)")
    a = ap.parse_args()
    if a.write and not a.force and os.path.exists(os.path.join(ROOT, "src", "core", "op_list.def")):
        sys.exit("src/core/op_list.def exists and is maintained by hand; --force overwrites it")
    ops = collect()
    op_ids(ops)
    decls = header_defaults()
    if a.report:
        for f in ops:
            print(f'{f["fname"]:24} {f["id"]:36} {traits(f):40} {schema(f, decls)}')
        print(len(ops), "ops", file=sys.stderr)
    if a.write:
        write(ops, decls)


if __name__ == "__main__":
    main()
