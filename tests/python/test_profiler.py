"""ember.profiler against torch.profiler (PyTorch 1.13): the same programs profiled by both.

Compared with torch: the API names and calls, the table's columns and cell formats, the op
names and call counts of the ops a program calls, input shapes, the schedule's actions and
on_trace_ready calls, record_function as a decorator, and the exception types of bad input.
Checked within ember: the table agrees with the events and the trace (sums, counts), the
trace-event JSON (nesting, "Input Dims", "[memory]" events), memory columns, stacks, threads.

Debian's PyTorch 1.13 is built without Kineto, so its export_chrome_trace writes the older JSON
list format; the trace layout is checked against Kineto's format ({"traceEvents": [...]}), not
against that file. No test asserts a time beyond consistency.
"""

import gzip
import inspect
import json
import re
import threading
import time

import pytest
import torch
import torch.autograd.profiler as torch_autograd_profiler
import torch.profiler as tprof

import ember
import ember.autograd.profiler as ember_autograd_profiler
import ember.profiler as eprof

LIBS = {"torch": (torch, tprof), "ember": (ember, eprof)}
BOTH = pytest.mark.parametrize("lib", ["torch", "ember"])

# The ops the test programs call (what both libraries must show with equal counts).
USER_OPS = ["aten::mm", "aten::relu", "aten::sum", "aten::add", "aten::mul"]


def program(t, n=1):
    """mm, relu, sum, add and mul on small tensors, `n` times."""
    x = t.ones(4, 5)
    w = t.ones(5, 3)
    b = t.ones(4, 3)
    out = []
    for _ in range(n):
        y = t.mm(x, w).relu().sum()
        z = x + x
        v = (t.mm(x, w) * b).sum()
        out.append((y, z, v))
    return out


def profiled(lib, fn=program, n=1, **kwargs):
    """Runs fn(library, n) under `lib`'s profiler; returns the finished profile."""
    t, prof = LIBS[lib]
    with prof.profile(activities=[prof.ProfilerActivity.CPU], **kwargs) as p:
        fn(t, n)
    return p


# ---- table parsing ----

def parse_table(text):
    """(header cells, rows of cells, 'Self CPU time total' in us) of a key_averages table. The
    columns are the dash runs of the first line."""
    lines = text.splitlines()
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[0])]
    cells = lambda line: [line[a:b].strip() for a, b in spans]  # noqa: E731
    header = cells(lines[1])
    assert set(lines[2]) <= {"-", " "}
    rows = []
    for line in lines[3:]:
        if line.startswith("-"):
            break
        rows.append(cells(line))
    m = re.search(r"^Self CPU time total: (\S+)$", text, re.M)
    assert m, text
    return header, rows, parse_time(m.group(1))


def parse_time(s):
    """'1.881ms' -> 1881.0 (microseconds)."""
    m = re.fullmatch(r"(-?\d+\.\d{3})(us|ms|s)", s)
    assert m, s
    return float(m.group(1)) * {"us": 1.0, "ms": 1e3, "s": 1e6}[m.group(2)]


def parse_memory(s):
    """'32.00 Kb' -> 32768.0 bytes; '48 b' -> 48."""
    m = re.fullmatch(r"(-?\d+(?:\.\d{2})?) (b|Kb|Mb|Gb)", s)
    assert m, s
    return float(m.group(1)) * {"b": 1, "Kb": 1 << 10, "Mb": 1 << 20, "Gb": 1 << 30}[m.group(2)]


def column(header, rows, name):
    i = header.index(name)
    return [r[i] for r in rows]


def op_counts(events):
    out = {}
    for e in events:
        out[e.name] = out.get(e.name, 0) + 1
    return out


# ---- API ----

def test_api_names():
    for name in ["profile", "schedule", "record_function", "tensorboard_trace_handler",
                 "ProfilerActivity", "ProfilerAction", "supported_activities"]:
        assert hasattr(tprof, name) and hasattr(eprof, name), name
    for enum in ["ProfilerActivity", "ProfilerAction"]:
        assert (set(getattr(tprof, enum).__members__) ==
                set(getattr(eprof, enum).__members__)), enum
    assert ember.profiler is eprof
    assert ember.autograd.profiler is ember_autograd_profiler
    assert ember_autograd_profiler.record_function is eprof.record_function
    assert eprof.ProfilerActivity.CPU in eprof.supported_activities()


@BOTH
def test_start_stop_and_step_num(lib):
    t, prof = LIBS[lib]
    p = prof.profile()
    p.start()
    program(t)
    p.stop()
    names = {e.name for e in p.events()}
    assert "aten::mm" in names
    assert p.step_num == 0
    assert p.key_averages().table()


@BOTH
def test_autograd_profiler_front_end(lib):
    t, prof = LIBS[lib]
    ap = torch_autograd_profiler if lib == "torch" else ember_autograd_profiler
    with ap.profile(record_shapes=True) as p:
        with ap.record_function("block"):
            program(t)
    names = [e.name for e in p.function_events]
    assert "block" in names and "aten::mm" in names
    assert p.self_cpu_time_total > 0
    assert "Self CPU time total" in p.table(sort_by="self_cpu_time_total", row_limit=5)
    with ap.profile(enabled=False) as q:
        program(t)
    if lib == "ember":  # torch raises on a disabled profile's results
        with pytest.raises(RuntimeError):
            q.key_averages()


# ---- the table ----

@pytest.mark.parametrize("profile_memory", [False, True])
@pytest.mark.parametrize("group_by_input_shape", [False, True])
def test_table_columns_match_torch(profile_memory, group_by_input_shape):
    tables = {}
    for lib in LIBS:
        p = profiled(lib, record_shapes=True, profile_memory=profile_memory)
        tables[lib] = p.key_averages(group_by_input_shape=group_by_input_shape).table()
    (th, _, _), (eh, _, _) = parse_table(tables["torch"]), parse_table(tables["ember"])
    assert eh == th, (tables["ember"], tables["torch"])
    # The fixed-width columns (all but Name and Input Shapes) have torch's widths.
    tw = [len(s) for s in tables["torch"].splitlines()[0].split("  ") if s]
    ew = [len(s) for s in tables["ember"].splitlines()[0].split("  ") if s]
    assert len(ew) == len(tw)
    fixed = slice(1, -1) if group_by_input_shape else slice(1, None)
    assert ew[fixed] == tw[fixed]
    assert tables["ember"].endswith("\n") == tables["torch"].endswith("\n")


@BOTH
@pytest.mark.parametrize("profile_memory", [False, True])
def test_table_cell_formats(lib, profile_memory):
    p = profiled(lib, record_shapes=True, profile_memory=profile_memory)
    header, rows, total = parse_table(p.key_averages(group_by_input_shape=True).table())
    assert rows and total > 0
    for r in rows:
        assert len(r) == len(header)
        for name, cell in zip(header, r):
            if name.endswith("%"):
                assert re.fullmatch(r"-?\d+\.\d{2}%", cell), cell
            elif name in ("Self CPU", "CPU total", "CPU time avg"):
                parse_time(cell)
            elif "Mem" in name:
                parse_memory(cell)
            elif name == "# of Calls":
                assert int(cell) >= 1
            elif name == "Input Shapes":
                assert cell.startswith("[") and cell.endswith("]"), cell


@BOTH
def test_table_sort_limit_and_name_width(lib):
    p = profiled(lib, n=3)
    ka = p.key_averages()
    header, rows, _ = parse_table(ka.table(sort_by="self_cpu_time_total", row_limit=2))
    assert len(rows) == 2
    times = [parse_time(c) for c in column(header, rows, "Self CPU")]
    assert times == sorted(times, reverse=True)
    header, rows, _ = parse_table(ka.table(sort_by="count", row_limit=-1))
    calls = [int(c) for c in column(header, rows, "# of Calls")]
    assert calls == sorted(calls, reverse=True) and len(rows) == len(ka)
    text = ka.table(max_name_column_width=8)
    assert len(text.splitlines()[0].split("  ")[0]) == 8
    names = column(*parse_table(text)[:2], "Name")
    assert "aten:..." in names and all(len(n) <= 8 for n in names)


def test_table_rows_first_seen_order_matches_torch_for_user_ops():
    orders = {}
    for lib in LIBS:
        p = profiled(lib)
        keys = [r.key for r in p.key_averages()]
        orders[lib] = [k for k in keys if k in USER_OPS]
    assert orders["ember"] == orders["torch"]


# ---- op names, counts, shapes ----

def torch_counts(n):
    """Per-op call counts of torch's profile of program(n). Its legacy profiler nests events by
    microsecond timestamps and merges an op into a same-named parent (aten::sum calls
    aten::sum.dim_IntList); when the times tie the nesting is missed and the inner call stays
    as a second event (its end may even pass its parent's by a microsecond). An event that
    starts inside an earlier one of the same name is that call's inner half: not counted."""
    events = list(profiled("torch", n=n).events())
    out = {}
    for i, e in enumerate(events):
        start = e.time_range.start
        if any(f.name == e.name and f.time_range.start <= start < f.time_range.end
               for f in events[:i]):
            continue
        out[e.name] = out.get(e.name, 0) + 1
    return out


@pytest.mark.parametrize("n", [1, 3])
def test_op_names_and_counts_match_torch(n):
    want = torch_counts(n)
    p = profiled("ember", n=n)
    got = op_counts(p.events())
    rows = {r.key: r.count for r in p.key_averages()}
    for op in USER_OPS:
        assert op in want and op in got, (op, got, want)
        assert got[op] == want[op], (op, got, want)
        assert rows[op] == got[op]


@BOTH
def test_input_shapes(lib):
    p = profiled(lib, record_shapes=True)
    mm = [e for e in p.events() if e.name == "aten::mm"]
    assert [list(s) for s in mm[0].input_shapes] == [[4, 5], [5, 3]]
    grouped = {(r.key, str(r.input_shapes)): r.count
               for r in p.key_averages(group_by_input_shape=True)}
    assert grouped[("aten::mm", "[[4, 5], [5, 3]]")] == 2
    table = p.key_averages(group_by_input_shape=True).table(row_limit=-1)
    header, rows, _ = parse_table(table)
    assert ["aten::mm", "[[4, 5], [5, 3]]"] in [[r[0], r[-1]] for r in rows]
    q = profiled(lib, record_shapes=False)
    assert all(list(e.input_shapes) == [] for e in q.events())


def test_input_shapes_of_ops_both_record_match_torch():
    shapes = {}
    for lib in LIBS:
        p = profiled(lib, record_shapes=True)
        shapes[lib] = {op: [[list(s) for s in e.input_shapes] for e in p.events() if e.name == op]
                       for op in ["aten::mm", "aten::relu"]}
    assert shapes["ember"] == shapes["torch"]


# ---- the table agrees with the events and the trace ----

def test_table_sums_agree_with_events_and_trace(tmp_path):
    p = profiled("ember", n=3, record_shapes=True, profile_memory=True)
    events = p.events()
    ka = p.key_averages()
    assert sum(r.self_cpu_time_total_ns for r in ka) == ka.self_cpu_time_total_ns
    assert abs(sum(e.self_cpu_time_total for e in events) - ka.self_cpu_time_total) < 1e-3
    by_name = {}
    for e in events:
        by_name.setdefault(e.name, []).append(e)
    # "[memory]" gathers allocations and frees outside every range (it has no time)
    mem_rows = [r for r in ka if r.key == "[memory]"]
    assert all(r.cpu_time_total_ns == 0 and r.self_cpu_time_total_ns == 0 for r in mem_rows)
    op_rows = [r for r in ka if r.key != "[memory]"]
    assert {r.key for r in op_rows} == set(by_name)
    for r in op_rows:
        evs = by_name[r.key]
        assert r.count == len(evs)
        assert sum(e.duration_ns for e in evs) == r.cpu_time_total_ns, r.key
        assert abs(sum(e.self_cpu_time_total for e in evs) - r.self_cpu_time_total) < 1e-3
        assert sum(e.cpu_memory_usage for e in evs) == r.cpu_memory_usage
        assert sum(e.self_cpu_memory_usage for e in evs) == r.self_cpu_memory_usage

    # The printed table: each row within its rounding of the numbers; counts exact.
    header, rows, total = parse_table(ka.table(row_limit=-1))
    assert abs(total - ka.self_cpu_time_total) <= 0.0005 * max(1, total / 1000) + 1e-9
    stats = {r.key: r for r in ka}
    for row in rows:
        s = stats[row[0]]
        assert int(row[header.index("# of Calls")]) == s.count
        got = parse_time(row[header.index("Self CPU")])
        assert abs(got - s.self_cpu_time_total) <= 0.0005 * max(1, got / 1000) + 1e-9
    pct = sum(float(c[:-1]) for c in column(header, rows, "Self CPU %"))
    assert abs(pct - 100.0) < 0.01 * len(rows) + 1e-9

    # Per name, the trace has one complete event per call.
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    xs = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    for r in op_rows:
        assert sum(1 for e in xs if e["name"] == r.key) == r.count, r.key
    # the [memory] row counts the trace's memory events that fall in no range
    mem = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    for r in mem_rows:
        outside = [m for m in mem if not any(
            x["tid"] == m["tid"] and x["ts"] <= m["ts"] <= x["ts"] + x["dur"] for x in xs)]
        assert len(outside) == r.count
        assert sum(m["args"]["Bytes"] for m in outside) == r.cpu_memory_usage


def test_event_tree():
    t, prof = LIBS["ember"]
    with prof.profile() as p:
        with prof.record_function("outer"):
            program(t)
    events = p.events()
    outer = [e for e in events if e.name == "outer"][0]
    assert outer.cpu_parent is None and outer.user_range
    mms = [e for e in events if e.name == "aten::mm"]
    assert all(e.cpu_parent == outer for e in mms)
    assert set(mms) <= set(outer.cpu_children)
    for e in events:
        kids = e.cpu_children
        assert e.self_cpu_time_total == pytest.approx(
            e.cpu_time_total - sum(k.cpu_time_total for k in kids), abs=1e-6)
        assert e.time_range.start <= e.time_range.end
        for k in kids:
            assert k.cpu_parent == e and k.depth == e.depth + 1 and k.thread == e.thread


# ---- chrome trace ----

def _trace(tmp_path, **kwargs):
    t, prof = LIBS["ember"]
    with prof.profile(**kwargs) as p:
        with prof.record_function("outer"):
            with prof.record_function("inner"):
                t.mm(t.ones(4, 5), t.ones(5, 3))
            keep = t.ones(64, 64) + 1  # noqa: F841
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    return p, json.loads(path.read_text())


def test_chrome_trace_layout_and_nesting(tmp_path):
    p, trace = _trace(tmp_path, record_shapes=True)
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    xs = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    for e in xs:
        for k in ("name", "ts", "dur", "pid", "tid"):
            assert k in e, (k, e)
        assert e["dur"] >= 0
    by = {e["name"]: e for e in xs}
    eps = 1e-6

    def inside(child, parent):
        return (child["ts"] >= parent["ts"] - eps and
                child["ts"] + child["dur"] <= parent["ts"] + parent["dur"] + eps and
                child["tid"] == parent["tid"])

    assert inside(by["inner"], by["outer"])
    assert inside(by["aten::mm"], by["inner"])
    assert inside(by["aten::add"], by["outer"])
    assert not inside(by["aten::add"], by["inner"])
    assert by["aten::mm"]["args"]["Input Dims"] == [[4, 5], [5, 3]]
    # The string form is the same document.
    assert json.loads(p._profile.chrome_trace()) == trace


def test_chrome_trace_of_torch_has_the_same_ranges(tmp_path):
    names = {}
    for lib, (t, prof) in LIBS.items():
        with prof.profile() as p:
            with prof.record_function("outer"):
                with prof.record_function("inner"):
                    t.mm(t.ones(4, 5), t.ones(5, 3))
        path = tmp_path / f"{lib}.json"
        p.export_chrome_trace(str(path))
        doc = json.loads(path.read_text())
        evs = doc["traceEvents"] if isinstance(doc, dict) else doc
        names[lib] = {e["name"] for e in evs if e.get("ph") == "X"}
    assert {"outer", "inner", "aten::mm"} <= names["torch"]
    assert {"outer", "inner", "aten::mm"} <= names["ember"]


def test_chrome_trace_without_shapes_has_no_input_dims(tmp_path):
    _, trace = _trace(tmp_path)
    mm = [e for e in trace["traceEvents"] if e.get("name") == "aten::mm"][0]
    assert "Input Dims" not in mm.get("args", {})


# ---- memory ----

@BOTH
def test_profile_memory_columns(lib):
    t, prof = LIBS[lib]
    x = t.ones(64, 64)
    with prof.profile(profile_memory=True) as p:
        y = t.mm(x, x)  # noqa: F841 -- kept alive: 16 KiB allocated inside aten::mm
    mm = [r for r in p.key_averages() if r.key == "aten::mm"][0]
    assert mm.cpu_memory_usage >= 64 * 64 * 4
    assert mm.self_cpu_memory_usage >= 64 * 64 * 4
    header, rows, _ = parse_table(p.key_averages().table())
    row = [r for r in rows if r[0] == "aten::mm"][0]
    assert parse_memory(row[header.index("CPU Mem")]) == pytest.approx(mm.cpu_memory_usage,
                                                                       rel=0.01)
    with prof.profile(profile_memory=False) as q:
        y = t.mm(x, x)  # noqa: F841
    assert all(r.cpu_memory_usage == 0 for r in q.key_averages())
    assert "CPU Mem" not in q.key_averages().table()


def test_memory_row_for_frees_outside_ops_matches_torch():
    """A tensor freed outside every op: torch shows a "[memory]" row."""
    keys = {}
    for lib, (t, prof) in LIBS.items():
        x = t.ones(64, 64)
        with prof.profile(profile_memory=True) as p:
            z = t.mm(x, x)
            del z
        keys[lib] = {r.key for r in p.key_averages()}
    assert ("[memory]" in keys["ember"]) == ("[memory]" in keys["torch"]), keys


def test_memory_trace_events(tmp_path):
    p, trace = _trace(tmp_path, profile_memory=True)
    mem = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    assert mem, "no [memory] events"
    for e in mem:
        assert e["ph"] == "i" and "ts" in e and "pid" in e and "tid" in e
        assert "Bytes" in e["args"] and "Total Allocated" in e["args"]
    assert any(e["args"]["Bytes"] >= 64 * 64 * 4 for e in mem)
    events = p.memory_events()
    assert events and any(m.bytes >= 64 * 64 * 4 for m in events)
    assert all(m.bytes != 0 for m in events)
    _, plain = _trace(tmp_path, profile_memory=False)
    assert not [e for e in plain["traceEvents"] if e.get("name") == "[memory]"]


# ---- schedule and trace handlers ----

def _action_names(actions):
    return [a.name for a in actions]


@pytest.mark.parametrize("kw", [
    dict(wait=1, warmup=1, active=2, repeat=1),
    dict(wait=1, warmup=1, active=2),
    dict(wait=0, warmup=2, active=1, repeat=2, skip_first=3),
    dict(wait=2, warmup=1, active=3, repeat=2, skip_first=1),
])
def test_schedule_actions_match_torch(kw):
    ts, es = tprof.schedule(**kw), eprof.schedule(**kw)
    assert _action_names(map(es, range(30))) == _action_names(map(ts, range(30)))


def _scheduled_run(lib, steps, sched_kw):
    """(step_num, sorted 'stepN' ranges in the profile) at each on_trace_ready call."""
    t, prof = LIBS[lib]
    calls = []

    def ready(p):
        assert p is session
        ranges = sorted({e.name for e in p.events() if e.name.startswith("step")})
        calls.append((p.step_num, ranges))

    x, w = t.ones(4, 5), t.ones(5, 3)
    with prof.profile(schedule=prof.schedule(**sched_kw), on_trace_ready=ready) as session:
        for i in range(steps):
            with prof.record_function(f"step{i}"):
                t.mm(x, w)
            session.step()
    return calls


@pytest.mark.parametrize("steps", [2, 3, 4, 5, 8, 9])
@pytest.mark.parametrize("sched_kw", [dict(wait=1, warmup=1, active=2, repeat=1),
                                      dict(wait=1, warmup=1, active=2)])
def test_on_trace_ready_calls_match_torch(steps, sched_kw):
    got = _scheduled_run("ember", steps, sched_kw)
    want = _scheduled_run("torch", steps, sched_kw)
    assert got == want


@BOTH
def test_on_trace_ready_without_schedule(lib):
    t, prof = LIBS[lib]
    calls = []
    with prof.profile(on_trace_ready=lambda p: calls.append(p.step_num)):
        program(t)
    assert calls == [0]


@BOTH
@pytest.mark.parametrize("use_gzip", [False, True])
def test_tensorboard_trace_handler(lib, use_gzip, tmp_path):
    t, prof = LIBS[lib]
    handler = prof.tensorboard_trace_handler(str(tmp_path), worker_name="w0", use_gzip=use_gzip)
    with prof.profile(schedule=prof.schedule(wait=1, warmup=1, active=1, repeat=2),
                      on_trace_ready=handler) as p:
        for _ in range(7):
            program(t)
            time.sleep(0.002)  # file names carry the time in ms
            p.step()
    suffix = ".pt.trace.json.gz" if use_gzip else ".pt.trace.json"
    files = sorted(tmp_path.iterdir())
    assert len(files) == 2, files
    for f in files:
        assert re.fullmatch(r"w0\.\d+" + re.escape(suffix), f.name), f.name
        raw = gzip.decompress(f.read_bytes()) if use_gzip else f.read_bytes()
        doc = json.loads(raw)
        evs = doc["traceEvents"] if isinstance(doc, dict) else doc
        assert any(e.get("name") == "aten::mm" for e in evs)


def test_tensorboard_trace_handler_default_worker_name(tmp_path):
    with eprof.profile(on_trace_ready=eprof.tensorboard_trace_handler(str(tmp_path))):
        program(ember)
    files = list(tmp_path.glob("*.pt.trace.json"))
    assert len(files) == 1
    assert re.fullmatch(r".+_\d+\.\d+\.pt\.trace\.json", files[0].name), files[0].name
    json.loads(files[0].read_text())


def test_trace_handler_called_by_hand(tmp_path):
    with eprof.profile() as p:
        program(ember)
    eprof.tensorboard_trace_handler(str(tmp_path), "hand")(p)
    assert len(list(tmp_path.glob("hand.*.pt.trace.json"))) == 1


# ---- record_function ----

@BOTH
def test_record_function_decorator(lib):
    t, prof = LIBS[lib]

    @prof.record_function("my_block")
    def block(x):
        return t.mm(x, x.t())

    x = t.ones(3, 3)
    with prof.profile() as p:
        block(x)
        block(x)
    events = p.events()
    assert sum(e.name == "my_block" for e in events) == 2
    mms = [e for e in events if e.name == "aten::mm"]
    assert len(mms) == 2 and all(e.cpu_parent.name == "my_block" for e in mms)


@BOTH
def test_record_function_outside_a_session(lib):
    t, prof = LIBS[lib]
    with prof.record_function("nobody_listens"):
        t.ones(2) + 1
    with prof.profile() as p:
        t.ones(2) + 1
    assert "nobody_listens" not in {e.name for e in p.events()}


# ---- bad input and session rules ----

@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=0), dict(wait=-1, warmup=1, active=1),
                                dict(wait=1, warmup=-1, active=1),
                                dict(wait=1, warmup=1, active=1, repeat=-1),
                                dict(wait=1, warmup=1, active=1, skip_first=-1)])
def test_bad_schedule_raises_like_torch(kw):
    with pytest.raises(Exception) as want:
        tprof.schedule(**kw)
    with pytest.raises(want.type):
        eprof.schedule(**kw)


def test_schedule_without_warmup_warns_like_torch():
    with pytest.warns(UserWarning, match="warmup"):
        tprof.schedule(wait=1, warmup=0, active=1)
    with pytest.warns(UserWarning, match="warmup"):
        eprof.schedule(wait=1, warmup=0, active=1)


def test_bad_sort_key_raises_like_torch():
    tables = {lib: profiled(lib).key_averages() for lib in LIBS}
    with pytest.raises(Exception) as want:
        tables["torch"].table(sort_by="no_such_key")
    with pytest.raises(want.type):
        tables["ember"].table(sort_by="no_such_key")


@BOTH
def test_nested_sessions_raise(lib):
    t, prof = LIBS[lib]
    with prof.profile():
        with pytest.raises(RuntimeError):
            with prof.profile():
                pass
    with prof.profile() as p:  # the failed one left nothing behind
        program(t)
    assert "aten::mm" in {e.name for e in p.events()}


@BOTH
def test_session_ends_when_the_block_raises(lib):
    t, prof = LIBS[lib]
    with pytest.raises(ZeroDivisionError):
        with prof.profile():
            1 / 0
    with prof.profile() as p:
        program(t)
    assert "aten::mm" in {e.name for e in p.events()}


def test_is_profiler_enabled():
    assert not eprof.is_profiler_enabled()
    with eprof.profile():
        assert eprof.is_profiler_enabled()
    assert not eprof.is_profiler_enabled()


def test_bad_schedule_result_and_activity():
    """torch ignores a schedule's unknown result; ember says what is wrong."""
    with pytest.raises(TypeError, match="ProfilerAction"):
        with eprof.profile(schedule=lambda step: "record") as p:
            p.step()
    with pytest.raises(TypeError, match="ProfilerActivity"):
        eprof.profile(activities=["cpu"]).start()
    assert not eprof.is_profiler_enabled()


# ---- stacks and threads ----

def _stack_helper(t):
    return t.mm(t.ones(2, 2), t.ones(2, 2))


@BOTH
def test_with_stack(lib):
    t, prof = LIBS[lib]
    with prof.profile(with_stack=True) as p:
        _stack_helper(t)
    mm = [e for e in p.events() if e.name == "aten::mm"][0]
    frames = [s for s in mm.stack if not s.startswith("<built-in")]
    funcs = [s.rsplit("): ", 1)[1] for s in frames]
    assert funcs[:2] == ["_stack_helper", "test_with_stack"], mm.stack
    assert re.fullmatch(r".*test_profiler\.py\(\d+\): _stack_helper", frames[0]), frames[0]
    with prof.profile(with_stack=False) as q:
        _stack_helper(t)
    assert all(list(e.stack) == [] for e in q.events())


def test_with_stack_line_numbers():
    with eprof.profile(with_stack=True) as p:
        _stack_helper(ember)
    mm = [e for e in p.events() if e.name == "aten::mm"][0]
    line = int(re.search(r"\((\d+)\)", mm.stack[0]).group(1))
    src, first = inspect.getsourcelines(_stack_helper)
    assert line == first + 1  # the `return` line of _stack_helper


def test_custom_stack_provider():
    eprof.set_stack_provider(lambda: ["outer(1): a", "inner(2): b"])
    try:
        with eprof.profile(with_stack=True) as p:
            _stack_helper(ember)
    finally:
        eprof.set_stack_provider(None)
    mm = [e for e in p.events() if e.name == "aten::mm"][0]
    assert mm.stack == ["inner(2): b", "outer(1): a"]  # innermost first, as torch


def test_ops_on_other_threads_are_recorded():
    """ember records every thread (torch 1.13's profiler, without Kineto, only the thread that
    started it)."""
    x = ember.ones(4, 5)
    w = ember.ones(5, 3)

    def work():
        with eprof.record_function("worker_range"):
            for _ in range(3):
                ember.mm(x, w)

    with eprof.profile() as p:
        th = threading.Thread(target=work)
        th.start()
        th.join()
        ember.relu(x)
    events = p.events()
    main = {e.thread for e in events if e.name == "aten::relu"}
    worker = {e.thread for e in events if e.name == "aten::mm"}
    assert len(main) == 1 and len(worker) == 1 and main != worker
    assert sum(e.name == "aten::mm" for e in events) == 3
    rng = [e for e in events if e.name == "worker_range"][0]
    assert all(e.cpu_parent == rng for e in events if e.name == "aten::mm")
    assert [r.count for r in p.key_averages() if r.key == "aten::mm"] == [3]


def test_stacks_of_threads_running_long_ops():
    """Big ops release the GIL; a with_stack session takes each thread's stack all the same."""
    big = ember.ones(256, 256)

    def work():
        for _ in range(4):
            ember.mm(big, big)

    with eprof.profile(with_stack=True) as p:
        threads = [threading.Thread(target=work) for _ in range(2)]
        for th in threads:
            th.start()
        for _ in range(4):
            (big + 1).sum()
        for th in threads:
            th.join()
    mms = [e for e in p.events() if e.name == "aten::mm"]
    assert len(mms) == 8 and len({e.thread for e in mms}) == 2
    assert all(e.stack and e.stack[0].endswith("): work") for e in mms)
    adds = [e for e in p.events() if e.name == "aten::add"]
    assert all(e.stack[0].endswith("): test_stacks_of_threads_running_long_ops") for e in adds)


@BOTH
def test_backward_nodes_are_ranges_named_as_torch(lib):
    t, prof = LIBS[lib]
    x, w = t.ones(4, 5, requires_grad=True), t.ones(5, 3, requires_grad=True)
    with prof.profile(activities=[prof.ProfilerActivity.CPU]) as p:
        t.mm(x, w).relu().sum().backward()
    events = list(p.events())
    names = [e.name for e in events]
    for node in ("SumBackward0", "ReluBackward0", "MmBackward0", "torch::autograd::AccumulateGrad"):
        outer = "autograd::engine::evaluate_function: " + node
        assert names.count(outer) == (2 if "Accumulate" in node else 1), (node, names)
        assert node in names, (node, names)
        if lib == "ember":  # torch nests by timestamps, which may tie: its order is not stable
            i = names.index(outer)
            assert names[i + 1] == node and events[i + 1].parent == i
    mm = [r for r in p.key_averages() if r.key == "autograd::engine::evaluate_function: MmBackward0"]
    assert mm[0].cpu_time_total >= mm[0].self_cpu_time_total >= 0


@BOTH
def test_accumulate_grad_keeps_a_fresh_gradient_without_copying(lib):
    t, prof = LIBS[lib]
    x = t.ones(2, 3, 6, 6)
    w = t.ones(4, 3, 3, 3, requires_grad=True)
    with prof.profile(activities=[prof.ProfilerActivity.CPU]) as p:
        t.nn.functional.conv2d(x, w).sum().backward()
    events = list(p.events())
    acc = [i for i, e in enumerate(events) if e.name == "torch::autograd::AccumulateGrad"]
    assert len(acc) == 1
    if lib == "ember":
        inside = [e.name for e in events if e.parent == acc[0]]
        assert "aten::clone" not in inside, inside
    g = t.full((2, 3), 2.0)
    v = t.ones(2, 3, requires_grad=True)
    (v * 1).backward(g)  # a gradient the caller still holds is copied, never aliased
    g.add_(1)
    assert float(v.grad.sum()) == 12.0


def test_no_shapes_without_record_shapes_after_vmap():
    # vmap's layer boxes every op's arguments from its first use on; the profiler still keeps
    # shapes only when asked to
    ember.func.vmap(lambda x: x.sum())(ember.ones(3, 4))
    p = profiled("ember", record_shapes=False)
    assert p.events() and all(list(e.input_shapes) == [] for e in p.events())
    q = profiled("ember", record_shapes=True)
    assert any(list(e.input_shapes) for e in q.events())
