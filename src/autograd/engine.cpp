// The backward engine (Note [Autograd graph]): one pass over the nodes that lead to the
// requested gradients, in dependency order, on the calling thread.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "autograd/meta.h"
#include "core/tensor_util.h"
#include "ember/autograd_engine.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/profiler.h"
#include "ember/reduce.h"
#include "func/batched.h"
#include "func/levels.h"

namespace ember::autograd {

namespace {

// The callbacks of the backward pass running on this thread (null outside one); nested passes
// (a backward inside a hook) get their own list.
struct PassState {
  std::vector<std::function<void()>> callbacks;
  bool accumulates = false;
};
thread_local PassState* t_pass = nullptr;

struct PassScope {
  PassState state;
  PassState* prev;
  explicit PassScope(bool accumulates) : prev(t_pass) {
    state.accumulates = accumulates;
    t_pass = &state;
  }
  ~PassScope() { t_pass = prev; }
  // Runs the queued callbacks in order; a callback may queue more.
  void finish() {
    for (size_t i = 0; i < state.callbacks.size(); ++i) {
      auto cb = std::move(state.callbacks[i]);
      cb();
    }
    state.callbacks.clear();
  }
};

// Adds `g` into `slot`. In place only when nothing else can see the buffer: the engine made
// it (sole owner of tensor and storage) and it is not part of a graph being built.
void accumulate(Tensor& slot, Tensor g) {
  if (!g.defined()) return;
  if (!slot.defined()) {
    slot = std::move(g);
    return;
  }
  // A batched gradient is never added into an unbatched buffer in place (nor into a wrapper,
  // whose physical tensor may be shared).
  bool inplace = !GradMode::is_enabled() && !func::is_batched(slot) && !func::is_batched(g) &&
                 slot.use_count() == 1 && slot.storage().use_count() == 1 &&
                 !slot.requires_grad() && slot.sizes() == g.sizes() && slot.dtype() == g.dtype() &&
                 !slot.is_conj();
  if (inplace)
    slot.add_(g);
  else
    slot = slot + g;
}

void check_nan(const Node& n, const variable_list& outs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& t = outs[i];
    if (!t.defined() || !(t.is_floating_point() || t.is_complex())) continue;
    bool bad;
    {
      AutoGradMode g(false);
      bad = isnan(t).any().item<bool>();
    }
    if (!bad) continue;
    std::string msg = "[backward] Function '" + n.name() + "' returned nan values in its " +
                      std::to_string(i) + "th output.";
    if (!n.anomaly_trace().empty())
      msg += "\nTraceback of forward call that caused the error:\n" + n.anomaly_trace();
    throw Error(msg);
  }
}

std::string anomaly_suffix(const Node& n) {
  if (n.anomaly_trace().empty()) return {};
  return "\nTraceback of forward call that caused the error:\n" + n.anomaly_trace();
}

// Note [Engine bookkeeping]
// A pass keeps, per node it reaches, the owner, the count of gradients still to arrive, whether
// the node leads to a requested gradient, its captures and its gradient buffer. They live in flat
// tables (a vector of states and an open-addressing index keyed by the node's address) that each
// thread reuses from pass to pass: a hash map node per graph node, its rehashes and the growth of
// the order, stack and ready vectors were a large share of the allocations of a small training
// step. Nested passes (a backward inside a hook) take tables of their own. Clearing the tables
// releases the nodes and buffers at once, so nothing outlives the pass but the capacity.
struct NodeState {
  std::shared_ptr<Node> fn;
  int deps = 0;
  bool needed = true;
  uint32_t cap_begin = 0, cap_end = 0;  // its captures: PassTables::caps[cap_begin, cap_end)
  variable_list buffer;
};

struct Capture {
  uint32_t state;
  uint32_t input_nr;
  size_t index;  // into `inputs`
};

class PassTables {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<NodeState> states;
  std::vector<std::pair<uint32_t, size_t>> stack;  // DFS: state, next edge
  std::vector<uint32_t> order;                     // DFS post-order
  std::vector<uint32_t> ready;                     // heap: latest sequence_nr on top
  std::vector<Capture> caps;

  uint32_t find(const Node* n) const {
    if (index_.empty()) return kNone;
    for (size_t i = hash(n) & mask_;; i = (i + 1) & mask_) {
      uint32_t s = index_[i];
      if (s == 0) return kNone;
      if (states[s - 1].fn.get() == n) return s - 1;
    }
  }
  /// The state of `fn`, added when new (second: whether it was added).
  std::pair<uint32_t, bool> insert(const std::shared_ptr<Node>& fn) {
    if ((states.size() + 1) * 2 > index_.size()) grow();
    size_t i = hash(fn.get()) & mask_;
    for (;; i = (i + 1) & mask_) {
      uint32_t s = index_[i];
      if (s == 0) break;
      if (states[s - 1].fn.get() == fn.get()) return {s - 1, false};
    }
    states.emplace_back().fn = fn;
    index_[i] = uint32_t(states.size());
    return {uint32_t(states.size() - 1), true};
  }
  /// Releases every node and gradient; keeps the capacity of a small pass for the next one.
  void clear() {
    constexpr size_t kKeep = 4096;
    if (states.capacity() > kKeep) {
      *this = PassTables();
      return;
    }
    states.clear();
    stack.clear();
    order.clear();
    ready.clear();
    caps.clear();
    std::fill(index_.begin(), index_.end(), 0u);
  }

 private:
  static size_t hash(const Node* n) {
    return size_t((reinterpret_cast<uintptr_t>(n) >> 4) * 0x9E3779B97F4A7C15ull >> 20);
  }
  void grow() {
    size_t cap = std::max<size_t>(64, index_.size() * 2);
    index_.assign(cap, 0u);
    mask_ = cap - 1;
    for (size_t k = 0; k < states.size(); ++k) {
      size_t i = hash(states[k].fn.get()) & mask_;
      while (index_[i] != 0) i = (i + 1) & mask_;
      index_[i] = uint32_t(k + 1);
    }
  }
  std::vector<uint32_t> index_;  // state index + 1; 0 is empty
  size_t mask_ = 0;
};

// This thread's tables, one per nesting depth of passes.
class TablesLease {
 public:
  TablesLease() {
    if (pool().size() <= depth()) pool().push_back(std::make_unique<PassTables>());
    t_ = pool()[depth()++].get();
  }
  ~TablesLease() {
    t_->clear();
    --depth();
  }
  TablesLease(const TablesLease&) = delete;
  TablesLease& operator=(const TablesLease&) = delete;
  PassTables& operator*() const { return *t_; }

 private:
  static std::vector<std::unique_ptr<PassTables>>& pool() {
    static thread_local std::vector<std::unique_ptr<PassTables>> p;
    return p;
  }
  static size_t& depth() {
    static thread_local size_t d = 0;
    return d;
  }
  PassTables* t_;
};

}  // namespace

variable_list run_backward(const variable_list& roots, const variable_list& grad_roots,
                           bool keep_graph, bool create_graph, const variable_list& inputs,
                           bool allow_unused, bool accumulate_grad) {
  const char* op = accumulate_grad ? "backward" : "autograd.grad";
  EMBER_CHECK(!accumulate_grad || !func::any_transform_active(),
              "[backward] backward() called inside a function transform (grad, vjp, jvp, "
              "vmap). This is not supported: use ember.func.grad / ember.func.vjp, or "
              "autograd.grad, inside the transform instead.");
  PassScope pass(accumulate_grad);
  EMBER_CHECK(grad_roots.empty() || grad_roots.size() == roots.size(), "[", op, "] got ",
              grad_roots.size(), " gradients for ", roots.size(), " tensors");
  std::vector<Edge> root_edges;
  variable_list root_grads;
  root_edges.reserve(roots.size());
  root_grads.reserve(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    EMBER_CHECK(r.defined(), "[", op, "] tensor ", i, " is undefined");
    Edge e = gradient_edge(r);
    EMBER_CHECK(e.is_valid(), "[", op, "] element ", i,
                " of tensors does not require grad and "
                "does not have a grad_fn");
    Tensor g = i < grad_roots.size() ? grad_roots[i] : Tensor();
    if (!g.defined()) {
      EMBER_CHECK(r.numel() == 1, "[", op,
                  "] grad can be implicitly created only for scalar "
                  "outputs (tensor ",
                  i, " has shape ", shape_str(r.sizes()), ")");
      g = ones_like(r);
    } else {
      EMBER_CHECK(g.sizes() == r.sizes(), "[", op, "] Mismatch in shape: grad_output[", i,
                  "] has a shape of ", shape_str(g.sizes()), " and output[", i, "] has a shape of ",
                  shape_str(r.sizes()), ".");
      EMBER_CHECK(g.is_complex() == r.is_complex(), "[", op,
                  "] For complex Tensors, both grad_output "
                  "and output are required to have the same dtype. Mismatch in dtype: "
                  "grad_output[",
                  i, "] has a dtype of ", g.dtype(), " and output[", i, "] has a dtype of ",
                  r.dtype(), ".");
    }
    root_edges.push_back(std::move(e));
    root_grads.push_back(std::move(g));
  }

  // Capture points: the gradient edges of `inputs`.
  std::vector<Edge> input_edges;
  input_edges.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(inputs[i].defined(), "[", op, "] input ", i, " is undefined");
    Edge e = gradient_edge(inputs[i]);
    EMBER_CHECK(e.is_valid(), "[", op,
                "] One of the differentiated Tensors does not require "
                "grad");
    input_edges.push_back(std::move(e));
  }

  // Discover the graph (Note [Engine bookkeeping]); with `inputs`, keep only nodes on a path to
  // one of them.
  TablesLease lease;
  PassTables& T = *lease;
  std::vector<NodeState>& st = T.states;
  for (auto& e : root_edges) {
    if (T.insert(e.function).second) T.stack.emplace_back(uint32_t(st.size() - 1), 0);
    while (!T.stack.empty()) {
      auto [s, k] = T.stack.back();
      Node* n = st[s].fn.get();
      if (k < n->num_outputs()) {
        ++T.stack.back().second;
        const Edge& ne = n->next_edge(k);
        if (ne.is_valid() && T.insert(ne.function).second)
          T.stack.emplace_back(uint32_t(st.size() - 1), 0);
      } else {
        T.order.push_back(s);
        T.stack.pop_back();
      }
    }
  }
  // Captures, grouped by node in the order of `inputs` (a node's come out in that order).
  if (!input_edges.empty()) {
    for (size_t i = 0; i < input_edges.size(); ++i) {
      uint32_t s = T.find(input_edges[i].function.get());
      if (s != PassTables::kNone) T.caps.push_back({s, input_edges[i].input_nr, i});
    }
    std::stable_sort(T.caps.begin(), T.caps.end(),
                     [](const Capture& a, const Capture& b) { return a.state < b.state; });
    for (uint32_t c = 0; c < T.caps.size(); ++c) {
      NodeState& ns = st[T.caps[c].state];
      if (ns.cap_end == 0) ns.cap_begin = c;
      ns.cap_end = c + 1;
    }
  }
  const bool prune = !inputs.empty();
  if (prune) {
    for (NodeState& ns : st) ns.needed = false;
    for (uint32_t s : T.order) {  // children come first in post-order
      bool need = st[s].cap_end > 0;
      for (const Edge& e : st[s].fn->next_edges())
        need = need || (e.is_valid() && st[T.find(e.function.get())].needed);
      st[s].needed = need;
    }
  }
  // The state of the node an edge leads to when that node is part of the pass, else kNone.
  auto target = [&](const Edge& e) -> uint32_t {
    if (!e.is_valid()) return PassTables::kNone;
    uint32_t s = T.find(e.function.get());
    return st[s].needed ? s : PassTables::kNone;
  };
  for (uint32_t s : T.order) {
    if (!st[s].needed) continue;
    for (const Edge& e : st[s].fn->next_edges())
      if (uint32_t t = target(e); t != PassTables::kNone) ++st[t].deps;
  }

  variable_list captured(inputs.size());
  auto later = [&](uint32_t a, uint32_t b) {
    return st[a].fn->sequence_nr() < st[b].fn->sequence_nr();
  };
  auto push_ready = [&](uint32_t s) {
    T.ready.push_back(s);
    std::push_heap(T.ready.begin(), T.ready.end(), later);
  };
  auto buffer_of = [&](uint32_t s) -> variable_list& {
    variable_list& b = st[s].buffer;
    if (b.empty()) b.resize(st[s].fn->num_inputs());
    return b;
  };
  AutoGradMode mode(create_graph);
  for (size_t i = 0; i < root_edges.size(); ++i) {
    uint32_t s = T.find(root_edges[i].function.get());
    if (!st[s].needed) continue;
    accumulate(buffer_of(s)[root_edges[i].input_nr], root_grads[i]);
  }
  for (size_t i = 0; i < root_edges.size(); ++i) {
    uint32_t s = T.find(root_edges[i].function.get());
    if (st[s].needed && st[s].deps == 0) {
      st[s].deps = -1;  // queued once
      push_ready(s);
    }
  }

  while (!T.ready.empty()) {
    std::pop_heap(T.ready.begin(), T.ready.end(), later);
    const uint32_t s = T.ready.back();
    T.ready.pop_back();
    Node* n = st[s].fn.get();
    variable_list grads;
    grads = std::move(st[s].buffer);
    grads.resize(n->num_inputs());
    auto* acc = dynamic_cast<AccumulateGrad*>(n);
    // Tensor hooks (a leaf's live in its meta), retain_grad hooks and node pre-hooks.
    if (acc) {
      AutogradMeta* m = meta(acc->variable().get());
      if (m && grads[0].defined() && !m->leaf_hooks.empty()) {
        auto hooks = m->leaf_hooks;
        for (auto& h : hooks) {
          Tensor r = h.second(grads[0]);
          if (r.defined()) grads[0] = r;
        }
      }
    }
    if (n->has_hooks()) grads = n->run_prehooks(std::move(grads));
    if (st[s].cap_end > 0) {
      for (uint32_t c = st[s].cap_begin; c < st[s].cap_end; ++c)
        captured[T.caps[c].index] = grads[T.caps[c].input_nr];
      if (!accumulate_grad) {
        // autograd.grad captures without running the node when it only leads to captures.
        bool leads_on = false;
        for (const Edge& e : n->next_edges()) leads_on = leads_on || target(e) != PassTables::kNone;
        if (acc || !leads_on) continue;
      }
    }
    if (acc && !accumulate_grad) continue;
    variable_list outs;
    variable_list grads_for_hooks;
    if (n->has_hooks()) grads_for_hooks = grads;
    try {
      // Backward formulas call kernels directly, not ops: ranges per node put their time in
      // the profile, named and nested as PyTorch's (the engine's, then the node's own).
      std::optional<profiler::RecordFunction> outer, inner;
      if (profiler::is_profiler_enabled()) {
        std::string name = n->name();
        if (name == "AccumulateGrad") name = "torch::autograd::AccumulateGrad";
        outer.emplace("autograd::engine::evaluate_function: " + name);
        inner.emplace(std::move(name));
      }
      outs = n->apply(std::move(grads));
    } catch (Error& e) {
      std::string suffix = anomaly_suffix(*n);
      if (suffix.empty()) throw;
      throw Error(std::string(e.what()) + suffix);
    }
    if (AnomalyMode::is_enabled() && AnomalyMode::should_check_nan()) check_nan(*n, outs);
    if (!keep_graph) n->release_variables();
    if (n->has_hooks()) outs = n->run_posthooks(std::move(outs), grads_for_hooks);
    const edge_list& edges = n->next_edges();
    EMBER_INTERNAL_ASSERT(acc || outs.size() == edges.size(), n->name(), " returned ", outs.size(),
                          " gradients for ", edges.size(), " edges");
    for (size_t i = 0; i < edges.size() && i < outs.size(); ++i) {
      const Edge& e = edges[i];
      const uint32_t t = target(e);
      if (t == PassTables::kNone) continue;
      if (outs[i].defined()) accumulate(buffer_of(t)[e.input_nr], std::move(outs[i]));
      if (--st[t].deps == 0) push_ready(t);
    }
  }

  if (!accumulate_grad) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      EMBER_CHECK(captured[i].defined() || allow_unused,
                  "[autograd.grad] One of the "
                  "differentiated Tensors appears to not have been used in the graph. Set "
                  "allow_unused=True if this is the desired behavior.");
    }
  }
  pass.finish();
  return captured;
}

void queue_callback(std::function<void()> cb) {
  EMBER_CHECK(t_pass != nullptr,
              "[queue_callback] Final callbacks can only be installed during backward pass.");
  t_pass->callbacks.push_back(std::move(cb));
}

bool in_backward_pass() { return t_pass != nullptr && t_pass->accumulates; }

variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs, std::optional<bool> retain_graph,
                   bool create_graph, bool allow_unused, bool materialize_grads) {
  EMBER_CHECK(!inputs.empty(), "[autograd.grad] grad requires non-empty inputs.");
  // Note [Reverse mode under vmap]: an autograd.grad inside a grad transform keeps the graph
  // of its result, so the transform can differentiate through it (functorch's levels).
  if (!create_graph && GradMode::is_enabled() && func::user_backward_under_grad()) {
    create_graph = true;
    retain_graph = true;
  }
  variable_list r = run_backward(outputs, grad_outputs, retain_graph.value_or(create_graph),
                                 create_graph, inputs, allow_unused || materialize_grads, false);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!r[i].defined() && materialize_grads)
      r[i] = zeros_like(inputs[i]);
    else if (r[i].defined() && !create_graph && r[i].requires_grad())
      r[i] = r[i].detach();
  }
  return r;
}

void backward(const variable_list& tensors, const variable_list& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph, const variable_list& inputs) {
  run_backward(tensors, grad_tensors, retain_graph.value_or(create_graph), create_graph, inputs,
               true, true);
}

}  // namespace ember::autograd
