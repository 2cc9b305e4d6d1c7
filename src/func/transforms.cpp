// grad, vjp, jvp, vmap, jacrev, jacfwd, hessian (include/ember/func.h).
//
// Note [Reverse mode under vmap]
// Autograd (reverse and forward) always runs on physical tensors; wrappers never require grad.
// A grad or jvp level lifts its inputs through every active vmap level: the input is stripped
// to its physical tensor with one leading dim per vmap level (an input not batched at a level
// is expanded to it), a fresh alias of that physical tensor becomes the level's differentiable
// input, and the alias is wrapped again. The function's ops then run their batching rules on
// physical tensors that autograd records as usual. Because every batching rule keeps batch
// elements independent, one backward pass with a ones cotangent over the stripped output gives
// each element's own gradient: vmap(grad(f), in_dims=(None, 0, 0)) returns per-sample
// gradients of the unbatched parameters, and the engine never adds a batched gradient into an
// unbatched buffer (the lifted input is batched).
// - Nesting (grad(grad(f))): an inner level's alias is a view of the outer level's input, so it
//   is connected to the outer graph; the inner backward then runs with create_graph. It also
//   does when the output's graph reaches a tensor that requires grad from outside the
//   transform (a captured tensor), so ordinary autograd can still differentiate the result, as
//   in functorch. Otherwise the backward builds no graph.
// - A vjp function called under a later vmap (jacrev) gets batched cotangents: they keep the
//   later level's wrapper and are stripped of the levels that were active at vjp time.

#include "ember/func.h"

#include <algorithm>
#include <unordered_set>

#include "autograd/meta.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/shape_ops.h"
#include "func/batched.h"

namespace ember::func {

using autograd::Node;
using Levels = std::vector<const TransformLevel*>;

bool is_batchedtensor(const Tensor& t) {
  if (!is_batched(t)) return false;
  const BatchInfo& i = batch_info(t);
  return live_level(i.level, i.generation) != nullptr;
}

namespace {

Randomness to_internal(VmapRandomness r) {
  switch (r) {
    case VmapRandomness::Different:
      return Randomness::Different;
    case VmapRandomness::Same:
      return Randomness::Same;
    default:
      return Randomness::Error;
  }
}

int64_t wrap_dim(int64_t d, int64_t rank, const char* what) {
  EMBER_CHECK_VALUE(d >= -rank && d < rank, "[vmap] ", what, " ", d,
                    " is out of bounds for a tensor with ", rank, " dims (expected a dim in [",
                    -rank, ", ", rank - 1, "])");
  return d < 0 ? d + rank : d;
}

// A fresh differentiable alias of physical tensor `x` for a grad level (Note [Reverse mode
// under vmap]): a view that keeps x's history and tangents when x requires grad, else a new
// leaf (which still carries x's forward-AD tangents).
Tensor leaf_alias(const Tensor& x, const char* op) {
  EMBER_CHECK(x.is_floating_point() || x.is_complex(), "[", op,
              "] only tensors of floating point or complex dtype can be differentiated; got ",
              x.dtype());
  if (x.requires_grad()) {
    AutoGradMode on(true);
    return x.view_as(x);
  }
  Tensor p;
  {
    NoGradGuard off;
    p = x.view_as(x);
  }
  p.requires_grad_(true);
  return p;
}

// Whether the graph of `root` reaches a tensor that requires grad other than `inputs`.
bool reaches_outside(const Tensor& root, const TensorList& inputs) {
  std::unordered_set<const Node*> stop;
  for (const Tensor& p : inputs) {
    autograd::Edge e = autograd::gradient_edge(p);
    if (e.function) stop.insert(e.function.get());
  }
  std::vector<std::shared_ptr<Node>> todo;
  std::unordered_set<const Node*> seen;
  if (auto fn = autograd::grad_fn_of(root)) todo.push_back(fn);
  while (!todo.empty()) {
    std::shared_ptr<Node> n = std::move(todo.back());
    todo.pop_back();
    if (!seen.insert(n.get()).second || stop.count(n.get())) continue;
    if (dynamic_cast<autograd::AccumulateGrad*>(n.get())) return true;
    for (const autograd::Edge& e : n->next_edges())
      if (e.function) todo.push_back(e.function);
  }
  return false;
}

// The grad-level state shared by grad and vjp.
struct Lifted {
  Levels levels;    // vmap levels active when the transform was entered
  TensorList phys;  // the differentiable aliases (physical)
  TensorList args;  // the arguments f sees
  bool connected = false;
};

Lifted lift(const TensorList& args, const std::vector<int64_t>& argnums, const char* op) {
  Lifted r;
  r.levels = active_vmap_levels();
  r.args = args;
  for (int64_t a : argnums) {
    EMBER_CHECK_VALUE(a >= -int64_t(args.size()) && a < int64_t(args.size()), "[", op,
                      "] Got argnums=", a, " but only ", args.size(), " positional inputs");
    int64_t k = a < 0 ? a + int64_t(args.size()) : a;
    EMBER_CHECK_VALUE(args[size_t(k)].defined(), "[", op, "] argument ", k, " is undefined");
    Tensor xs = strip_levels(args[size_t(k)], r.levels);
    r.connected |= xs.requires_grad();
    Tensor p = leaf_alias(xs, op);
    r.phys.push_back(p);
    r.args[size_t(k)] = unstrip_levels(p, r.levels);
  }
  return r;
}

// `outer_grad`: whether grad mode was on where the transform was called (a backward under
// no_grad builds no graph).
TensorList run_grad(const Lifted& lf, const TensorList& outs, const TensorList& cots,
                    bool keep_graph, bool outer_grad) {
  TensorList roots, grads_out;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].defined()) continue;
    Tensor o = strip_levels(outs[k], lf.levels);
    if (!o.requires_grad()) continue;
    roots.push_back(o);
    grads_out.push_back(k < cots.size() && cots[k].defined() ? strip_levels(cots[k], lf.levels)
                                                             : ones_like(o));
  }
  TensorList g(lf.phys.size());
  if (!roots.empty()) {
    bool create = outer_grad && lf.connected;
    if (outer_grad && !create)
      for (const Tensor& r : roots) create = create || reaches_outside(r, lf.phys);
    InternalBackward internal;
    g = autograd::grad(roots, lf.phys, grads_out, keep_graph || create, create,
                       /*allow_unused=*/true);
  }
  TensorList r;
  for (size_t k = 0; k < g.size(); ++k) {
    Tensor gk = g[k].defined() ? g[k] : zeros_like(lf.phys[k]);
    r.push_back(unstrip_levels(gk, lf.levels));
  }
  return r;
}

void check_scalar(const Tensor& out, const char* op) {
  EMBER_CHECK(out.defined(), "[", op, "] the function returned no output");
  EMBER_CHECK(out.numel() == 1, "[", op,
              "] Expected f(*args) to return a scalar Tensor, got tensor with ", out.dim(),
              " dims. Maybe you wanted to use the vjp or jacrev APIs instead?");
  EMBER_CHECK(out.is_floating_point() || out.is_complex(), "[", op,
              "] the function's output must be floating point or complex, got ", out.dtype());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// vmap
// ---------------------------------------------------------------------------------------------

TensorList vmap_call(const Fn& f, const TensorList& args, const VmapOptions& opts) {
  auto in_dim = [&](size_t k) -> std::optional<int64_t> {
    if (opts.in_dims.empty()) return 0;
    EMBER_CHECK_VALUE(opts.in_dims.size() == args.size(), "[vmap] in_dims has ",
                      opts.in_dims.size(), " entries but the function got ", args.size(),
                      " arguments");
    return opts.in_dims[k];
  };
  int64_t batch = -1;
  for (size_t k = 0; k < args.size(); ++k) {
    std::optional<int64_t> d = in_dim(k);
    if (!d) continue;
    EMBER_CHECK_VALUE(args[k].defined(), "[vmap] argument ", k,
                      " is undefined but in_dims says "
                      "it is batched");
    EMBER_CHECK_VALUE(args[k].dim() > 0, "[vmap] Got in_dim=", *d,
                      " for an input but the input "
                      "is a 0-dim tensor, which has no dim to map over");
    int64_t n = args[k].size(wrap_dim(*d, args[k].dim(), "in_dim"));
    EMBER_CHECK_VALUE(batch < 0 || batch == n,
                      "[vmap] Expected all tensors to have the same "
                      "size in the mapped dimension, got sizes ",
                      batch, " and ", n, " for the mapped dimension");
    batch = n;
  }
  EMBER_CHECK_VALUE(batch >= 0,
                    "[vmap] at least one input must be batched (every in_dim is "
                    "None)");
  if (opts.chunk_size) {
    EMBER_CHECK_VALUE(*opts.chunk_size > 0, "[vmap] chunk_size must be positive, got ",
                      *opts.chunk_size);
    if (*opts.chunk_size < batch) {
      VmapOptions one = opts;
      one.chunk_size.reset();
      std::vector<TensorList> parts;
      for (int64_t s = 0; s < batch; s += *opts.chunk_size) {
        int64_t e = std::min(batch, s + *opts.chunk_size);
        TensorList chunk = args;
        for (size_t k = 0; k < args.size(); ++k)
          if (auto d = in_dim(k)) chunk[k] = args[k].narrow(*d, s, e - s);
        parts.push_back(vmap_call(f, chunk, one));
      }
      TensorList out;
      std::vector<std::optional<int64_t>> out_dims =
          opts.out_dims_fn ? opts.out_dims_fn(parts[0].size()) : opts.out_dims;
      for (size_t j = 0; j < parts[0].size(); ++j) {
        std::optional<int64_t> od = out_dims.empty() ? std::optional<int64_t>(0) : out_dims[j];
        if (!od) {
          out.push_back(parts[0][j]);
          continue;
        }
        TensorList col;
        for (auto& p : parts) col.push_back(p[j]);
        out.push_back(cat(col, *od));
      }
      return out;
    }
  }
  LevelGuard guard(TransformKind::Vmap, batch, to_internal(opts.randomness));
  const TransformLevel& lvl = guard.get();
  TensorList wrapped(args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    std::optional<int64_t> d = in_dim(k);
    wrapped[k] = d ? make_batched(args[k], wrap_dim(*d, args[k].dim(), "in_dim"), lvl) : args[k];
  }
  TensorList outs = f(wrapped);
  std::vector<std::optional<int64_t>> out_dims =
      opts.out_dims_fn ? opts.out_dims_fn(outs.size()) : opts.out_dims;
  EMBER_CHECK_VALUE(out_dims.empty() || out_dims.size() == outs.size(), "[vmap] out_dims has ",
                    out_dims.size(), " entries but the function returned ", outs.size(),
                    " outputs");
  TensorList r;
  for (size_t j = 0; j < outs.size(); ++j) {
    std::optional<int64_t> od = out_dims.empty() ? std::optional<int64_t>(0) : out_dims[j];
    const Tensor& o = outs[j];
    if (!o.defined()) {
      r.push_back(o);
      continue;
    }
    check_not_escaped(o, "vmap");
    auto [v, bd] = unwrap_level(o, lvl.level);
    if (bd) {
      EMBER_CHECK_VALUE(od.has_value(), "[vmap] out_dims=None for output ", j,
                        ", but the output is batched (it depends on a batched input)");
      r.push_back(v.movedim(*bd, wrap_dim(*od, v.dim(), "out_dim")));
    } else if (!od) {
      r.push_back(o);
    } else {
      // An output that does not depend on the batch is broadcast along it (functorch).
      int64_t d = wrap_dim(*od, o.dim() + 1, "out_dim");
      std::vector<int64_t> sizes(o.sizes().begin(), o.sizes().end());
      sizes.insert(sizes.begin() + d, batch);
      r.push_back(o.unsqueeze(d).expand(sizes));
    }
  }
  return r;
}

Fn vmap(Fn f, VmapOptions opts) {
  return [f = std::move(f), opts = std::move(opts)](const TensorList& a) {
    return vmap_call(f, a, opts);
  };
}

UnaryFn vmap(UnaryFn f, int64_t in_dim, int64_t out_dim) {
  VmapOptions o;
  o.in_dims = {in_dim};
  o.out_dims = {out_dim};
  return [f = std::move(f), o](const Tensor& x) {
    return vmap_call([&](const TensorList& a) { return TensorList{f(a[0])}; }, {x}, o)[0];
  };
}

// ---------------------------------------------------------------------------------------------
// grad, vjp
// ---------------------------------------------------------------------------------------------

GradAndValue grad_and_value_call(const Fn& f, const TensorList& args,
                                 const std::vector<int64_t>& argnums) {
  const bool outer_grad = GradMode::is_enabled();
  LevelGuard guard(TransformKind::Grad);
  AutoGradMode on(true);
  Lifted lf = lift(args, argnums, "grad");
  TensorList outs = f(lf.args);
  EMBER_CHECK(!outs.empty(), "[grad] the function returned no outputs");
  check_scalar(outs[0], "grad");
  GradAndValue r;
  r.grads = run_grad(lf, {outs[0]}, {}, false, outer_grad);
  // The value and aux outputs leave the level without its graph unless they are still
  // connected to something outside.
  for (const Tensor& o : outs) {
    if (!o.defined() || lf.connected) {
      r.outputs.push_back(o);
      continue;
    }
    Tensor s = strip_levels(o, lf.levels);
    r.outputs.push_back(unstrip_levels(reaches_outside(s, lf.phys) ? s : s.detach(), lf.levels));
  }
  return r;
}

Fn grad(Fn f, std::vector<int64_t> argnums, bool has_aux) {
  return [f = std::move(f), argnums = std::move(argnums), has_aux](const TensorList& a) {
    GradAndValue r = grad_and_value_call(f, a, argnums);
    TensorList out = r.grads;
    if (has_aux) out.insert(out.end(), r.outputs.begin() + 1, r.outputs.end());
    return out;
  };
}

UnaryFn grad(UnaryFn f) {
  return [f = std::move(f)](const Tensor& x) {
    return grad_and_value_call([&](const TensorList& a) { return TensorList{f(a[0])}; }, {x})
        .grads[0];
  };
}

Fn grad_and_value(Fn f, std::vector<int64_t> argnums) {
  return [f = std::move(f), argnums = std::move(argnums)](const TensorList& a) {
    GradAndValue r = grad_and_value_call(f, a, argnums);
    TensorList out = r.grads;
    out.insert(out.end(), r.outputs.begin(), r.outputs.end());
    return out;
  };
}

VjpResult vjp(const Fn& f, const TensorList& primals) {
  auto lf = std::make_shared<Lifted>();
  TensorList outs;
  {
    LevelGuard guard(TransformKind::Grad);
    AutoGradMode on(true);
    std::vector<int64_t> all(primals.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = int64_t(k);
    *lf = lift(primals, all, "vjp");
    outs = f(lf->args);
  }
  VjpResult r;
  r.outputs = outs;
  r.vjp_fn = [lf, outs](const TensorList& cots) {
    EMBER_CHECK_VALUE(cots.size() == outs.size(), "[vjp] Expected ", outs.size(),
                      " cotangents (one per output), got ", cots.size());
    for (size_t k = 0; k < outs.size(); ++k) {
      if (!outs[k].defined() || !cots[k].defined()) continue;
      EMBER_CHECK(cots[k].sizes() == outs[k].sizes(), "[vjp] Mismatch in shape: cotangent ", k,
                  " has shape ", cots[k].sizes(), " but the output has shape ", outs[k].sizes());
    }
    return run_grad(*lf, outs, cots, /*keep_graph=*/true, GradMode::is_enabled());
  };
  return r;
}

// ---------------------------------------------------------------------------------------------
// jvp
// ---------------------------------------------------------------------------------------------

std::pair<TensorList, TensorList> jvp(const Fn& f, const TensorList& primals,
                                      const TensorList& tangents) {
  EMBER_CHECK_VALUE(primals.size() == tangents.size(),
                    "[jvp] Expected primals and tangents to "
                    "have the same length, got ",
                    primals.size(), " and ", tangents.size());
  Levels levels = active_vmap_levels();
  LevelGuard guard(TransformKind::Jvp);
  autograd::forward_ad::dual_level dl;
  const uint64_t level = autograd::forward_ad::current_level();
  TensorList duals(primals.size());
  for (size_t k = 0; k < primals.size(); ++k) {
    if (!tangents[k].defined()) {
      duals[k] = primals[k];
      continue;
    }
    EMBER_CHECK(primals[k].sizes() == tangents[k].sizes(), "[jvp] Expected the tangent ", k,
                " to have the shape of its primal, ", primals[k].sizes(), ", got ",
                tangents[k].sizes());
    Tensor p = strip_levels(primals[k], levels), t = strip_levels(tangents[k], levels);
    if (t.dtype() != p.dtype()) t = t.to(p.dtype());
    duals[k] = unstrip_levels(autograd::forward_ad::make_dual(p, t, level), levels);
  }
  TensorList outs = f(duals);
  TensorList po, to;
  for (const Tensor& o : outs) {
    if (!o.defined()) {
      po.push_back(o);
      to.push_back(o);
      continue;
    }
    Tensor s = strip_levels(o, levels);
    auto [p, t] = autograd::forward_ad::unpack_dual(s, level);
    if (!t.defined()) t = zeros_like(p);
    po.push_back(unstrip_levels(p, levels));
    to.push_back(unstrip_levels(t, levels));
  }
  return {po, to};
}

// ---------------------------------------------------------------------------------------------
// Jacobians
// ---------------------------------------------------------------------------------------------

namespace {
// Rows of the identity shaped as `like` with a leading dim: the basis vmap runs over.
Tensor basis_like(const Tensor& like) {
  int64_t n = like.numel();
  std::vector<int64_t> s{n};
  s.insert(s.end(), like.sizes().begin(), like.sizes().end());
  return eye(n, TensorOptions().dtype(like.dtype())).view(s);
}
std::vector<int64_t> cat_shapes(IntArrayRef a, IntArrayRef b) {
  std::vector<int64_t> s(a.begin(), a.end());
  s.insert(s.end(), b.begin(), b.end());
  return s;
}
}  // namespace

TensorList jacrev_call(const Fn& f, const TensorList& args, const std::vector<int64_t>& argnums) {
  // vjp with respect to the argnums only: the other arguments are closed over.
  TensorList sel;
  for (int64_t a : argnums) {
    EMBER_CHECK_VALUE(a >= 0 && a < int64_t(args.size()), "[jacrev] Got argnums=", a, " but only ",
                      args.size(), " positional inputs");
    sel.push_back(args[size_t(a)]);
  }
  auto g = [&](const TensorList& s) {
    TensorList full = args;
    for (size_t k = 0; k < argnums.size(); ++k) full[size_t(argnums[k])] = s[k];
    return f(full);
  };
  VjpResult v = vjp(g, sel);
  TensorList jac;
  for (size_t o = 0; o < v.outputs.size(); ++o) {
    const Tensor& out = v.outputs[o];
    TensorList per;
    if (out.numel() == 0) {
      for (const Tensor& x : sel)
        per.push_back(zeros(cat_shapes(out.sizes(), x.sizes()), TensorOptions().dtype(x.dtype())));
    } else {
      Fn row = [&](const TensorList& b) {
        TensorList cots(v.outputs.size());
        for (size_t k = 0; k < cots.size(); ++k) cots[k] = k == o ? b[0] : zeros_like(v.outputs[k]);
        return v.vjp_fn(cots);
      };
      per = vmap_call(row, {basis_like(out)});
      for (size_t a = 0; a < per.size(); ++a)
        per[a] = per[a].reshape(cat_shapes(out.sizes(), sel[a].sizes()));
    }
    jac.insert(jac.end(), per.begin(), per.end());
  }
  return jac;
}

TensorList jacfwd_call(const Fn& f, const TensorList& args, const std::vector<int64_t>& argnums) {
  std::vector<TensorList> per_arg;  // [argnum][output]
  TensorList outs_shape;
  for (int64_t a : argnums) {
    EMBER_CHECK_VALUE(a >= 0 && a < int64_t(args.size()), "[jacfwd] Got argnums=", a, " but only ",
                      args.size(), " positional inputs");
    const Tensor& x = args[size_t(a)];
    Fn col = [&](const TensorList& t) {
      TensorList tangents(args.size());
      tangents[size_t(a)] = t[0];
      return jvp(f, args, tangents).second;
    };
    TensorList cols;
    if (x.numel() == 0) {
      TensorList o = f(args);
      for (const Tensor& y : o)
        cols.push_back(zeros(cat_shapes(y.sizes(), x.sizes()), TensorOptions().dtype(y.dtype())));
    } else {
      cols = vmap_call(col, {basis_like(x)});  // each (n, *out.shape)
      for (Tensor& c : cols) {
        std::vector<int64_t> os(c.sizes().begin() + 1, c.sizes().end());
        c = c.movedim(0, -1).reshape(cat_shapes(os, x.sizes()));
      }
    }
    per_arg.push_back(cols);
  }
  TensorList jac;
  if (per_arg.empty()) return jac;
  for (size_t o = 0; o < per_arg[0].size(); ++o)
    for (auto& p : per_arg) jac.push_back(p[o]);
  return jac;
}

Fn jacrev(Fn f, std::vector<int64_t> argnums) {
  return [f = std::move(f), argnums = std::move(argnums)](const TensorList& a) {
    return jacrev_call(f, a, argnums);
  };
}
Fn jacfwd(Fn f, std::vector<int64_t> argnums) {
  return [f = std::move(f), argnums = std::move(argnums)](const TensorList& a) {
    return jacfwd_call(f, a, argnums);
  };
}
Fn hessian(Fn f, std::vector<int64_t> argnums) {
  Fn first = [f, argnums](const TensorList& a) {
    TensorList j = jacrev_call(f, a, argnums);
    // Output 0's rows only (hessian of the first output).
    return TensorList(j.begin(), j.begin() + int64_t(argnums.size()));
  };
  return jacfwd(first, argnums);
}

namespace {
UnaryFn unary(Fn (*t)(Fn, std::vector<int64_t>), UnaryFn f) {
  Fn g = t([f = std::move(f)](const TensorList& a) { return TensorList{f(a[0])}; }, {0});
  return [g](const Tensor& x) { return g({x})[0]; };
}
}  // namespace
UnaryFn jacrev(UnaryFn f) { return unary(&jacrev, std::move(f)); }
UnaryFn jacfwd(UnaryFn f) { return unary(&jacfwd, std::move(f)); }
UnaryFn hessian(UnaryFn f) { return unary(&hessian, std::move(f)); }

}  // namespace ember::func
