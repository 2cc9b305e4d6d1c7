"""Every libtorch 1.13 `Tensor` method that ember has as a free function is also an ember method.

Reads the method list of libtorch's ATen/core/TensorBody.h (Debian's libtorch-dev; skipped when
absent) and ember's public headers, and fails listing each name that ember declares as a function
in namespace `ember` but not as a `Tensor` method. Only the C++ headers are read: no build needed.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TENSOR_BODY = pathlib.Path("/usr/include/ATen/core/TensorBody.h")
EMBER_INCLUDE = ROOT / "include" / "ember"

_KEYWORDS = {
    "if", "for", "while", "switch", "return", "sizeof", "decltype", "static_assert", "alignof",
    "noexcept", "defined", "operator", "template", "requires",
}


def _strip(text):
    """Removes comments, string literals and preprocessor lines (with their continuations)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])*'", "''", text)
    out, cont = [], False
    for line in text.split("\n"):
        is_pp = cont or line.lstrip().startswith("#")
        cont = is_pp and line.rstrip().endswith("\\")
        # X-macro invocations (`EMBER_UNARY_OPS(EMBER_DECL_X)`) end without a semicolon.
        is_macro_call = re.fullmatch(r"\s*[A-Z][A-Z0-9_]*\(\w*\)\s*", line) is not None
        out.append("" if is_pp or is_macro_call else line)
    return "\n".join(out)


def _decl_name(stmt):
    """The function name a declaration statement declares, or None."""
    depth, first = 0, None
    for i, c in enumerate(stmt):
        if c in "(<[" and depth == 0 and c == "(":
            first = i
            break
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
    if first is None:
        return None
    head = re.sub(r"\b(?:public|private|protected)\s*:(?!:)", " ", stmt[:first]).strip()
    if re.search(r"\boperator\b", head) or head.startswith(("using ", "typedef ", "return ")):
        return None
    m = re.search(r"([A-Za-z_]\w*)\s*$", head)
    if not m:
        return None
    name = m.group(1)
    prefix = head[: m.start()].strip()
    # A declaration has a return type before the name (constructors and calls have none).
    if not prefix or prefix in ("explicit", "inline", "constexpr", "static", "virtual", "friend"):
        return None
    if prefix.endswith(("=", ",", "(", "return", ".", "->")) or name in _KEYWORDS:
        return None
    return name


def _scan(text, on_decl):
    """Walks the scopes of a header; calls on_decl(scope_path, name) for each function declared.

    scope_path is a tuple such as ("ember",), ("ember", "class Tensor") or (..., "body") inside a
    function body. Braces inside parentheses (default arguments like `= {0, 1}`) are not scopes.
    """
    text = _strip(text)
    stack, stmt, paren = [], [], 0
    for c in text:
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        if paren > 0 or c not in "{};":
            stmt.append(c)
            continue
        s = " ".join("".join(stmt).split())
        stmt = []
        if c == ";":
            if s and (not stack or stack[-1] != "body"):
                name = _decl_name(s)
                if name:
                    on_decl(tuple(stack), name)
            continue
        if c == "}":
            if stack:
                stack.pop()
            continue
        # An opening brace: namespace, class, function body, or an initializer.
        m = re.match(r"^(?:inline\s+)?namespace\s*([\w:]*)$", s)
        if m:
            # `namespace a::b {` closes with one brace: one scope entry named "a.b".
            stack.append(m.group(1).replace("::", ".") or "<anon>")
            continue
        m = re.search(r"\b(class|struct|union|enum(?:\s+class)?)\s+(?:\w+\s+)*?([A-Za-z_]\w*)\s*"
                      r"(?:final\s*)?(?::[^{]*)?$", s)
        if m and "(" not in s:
            stack.append(f"class {m.group(2)}")
            continue
        if stack and stack[-1] != "body":
            name = _decl_name(s)
            if name and not s.rstrip().endswith("="):
                on_decl(tuple(stack), name)
        stack.append("body")
    return stack


def libtorch_methods(path=TENSOR_BODY):
    names = set()

    def on_decl(scope, name):
        if scope and scope[-1] == "class Tensor":
            names.add(name)

    _scan(path.read_text(), on_decl)
    return names


def _macro_lists(op_list_text):
    """The X-macro op lists of op_list.h: {macro name: [op, ...]}."""
    lists = {}
    for m in re.finditer(r"#define\s+(EMBER_\w+_OPS)\(_\)((?:[^\n]*\\\n)*[^\n]*)", op_list_text):
        lists[m.group(1)] = re.findall(r"_\((\w+)\)", m.group(2))
    return lists


def ember_api(include_dir=EMBER_INCLUDE):
    """(free function names in namespace ember, Tensor method names) from the public headers."""
    functions, methods = set(), set()
    lists = _macro_lists((include_dir / "op_list.h").read_text())

    def on_decl(scope, name):
        if re.fullmatch(r"[A-Z0-9_]+", name):
            return
        if scope == ("ember",):
            functions.add(name)
        elif scope == ("ember", "class Tensor"):
            methods.add(name)

    for h in sorted(include_dir.rglob("*.h")):
        text = h.read_text()
        _scan(text, on_decl)
        # Declarations generated from the op lists (ops.h: functions; tensor.h: methods).
        for macro, ops in lists.items():
            if not re.search(rf"^\s*{macro}\(EMBER_DECL_\w+\)", text, flags=re.M):
                continue
            target = methods if h.name == "tensor.h" else functions
            for op in ops:
                target.add(op)
                if "PREDICATE" not in macro and "COMPARISON" not in macro or h.name == "tensor.h":
                    target.add(op + "_")
    return functions, methods


def test_parser_sees_known_declarations():
    functions, methods = ember_api()
    # Plain, overloaded, macro-generated and multi-line declarations.
    assert {"sum", "var", "exp", "exp_", "add", "where", "tril", "softmax"} <= functions
    assert {"sum", "var", "exp", "mul_", "view", "index_select", "topk"} <= methods
    assert "Tensor" not in methods and "operator" not in methods


@pytest.mark.skipif(not TENSOR_BODY.exists(), reason="libtorch-dev (TensorBody.h) not installed")
def test_libtorch_method_list_parses():
    lt = libtorch_methods()
    assert {"var", "std", "sum", "tril", "triu", "index_select", "to", "view"} <= lt
    assert len(lt) > 500


@pytest.mark.skipif(not TENSOR_BODY.exists(), reason="libtorch-dev (TensorBody.h) not installed")
def test_every_libtorch_method_ember_has_as_function_is_a_method():
    lt = libtorch_methods()
    functions, methods = ember_api()
    missing = sorted((lt & functions) - methods)
    assert not missing, (
        f"{len(missing)} libtorch Tensor methods exist in ember only as free functions "
        f"(add them to include/ember/tensor.h): {', '.join(missing)}")


if __name__ == "__main__":
    lt = libtorch_methods()
    functions, methods = ember_api()
    print("missing:", " ".join(sorted((lt & functions) - methods)))
