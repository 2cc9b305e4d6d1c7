// The backward engine (Note [Autograd graph]): one pass over the nodes that lead to the
// requested gradients, in dependency order, on the calling thread.

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/meta.h"
#include "func/batched.h"
#include "func/levels.h"
#include "core/tensor_util.h"
#include "ember/autograd_engine.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/ops.h"
#include "ember/reduce.h"

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

struct Capture {
  size_t index;
};

struct ReadyOrder {
  bool operator()(const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) const {
    return a->sequence_nr() < b->sequence_nr();
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
                 slot.use_count() == 1 &&
                 slot.storage().use_count() == 1 && !slot.requires_grad() &&
                 slot.sizes() == g.sizes() && slot.dtype() == g.dtype() && !slot.is_conj();
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
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(inputs[i].defined(), "[", op, "] input ", i, " is undefined");
    Edge e = gradient_edge(inputs[i]);
    EMBER_CHECK(e.is_valid(), "[", op,
                "] One of the differentiated Tensors does not require "
                "grad");
    captures[e.function.get()].emplace_back(e.input_nr, i);
    input_edges.push_back(std::move(e));
  }

  // Discover the graph; with `inputs`, keep only nodes on a path to one of them.
  // One entry per node (one allocation): owner, pending dependency count, gradient buffer.
  struct NodeState {
    std::shared_ptr<Node> fn;
    int deps = 0;
    variable_list buffer;
  };
  std::unordered_map<Node*, NodeState> nodes;
  std::vector<Node*> order;  // DFS post-order
  {
    std::vector<std::pair<Node*, size_t>> stack;
    for (auto& e : root_edges) {
      if (nodes.try_emplace(e.function.get(), NodeState{e.function}).second)
        stack.emplace_back(e.function.get(), 0);
      while (!stack.empty()) {
        auto& [n, k] = stack.back();
        if (k < n->num_outputs()) {
          const Edge& ne = n->next_edge(k++);
          if (ne.is_valid() && nodes.try_emplace(ne.function.get(), NodeState{ne.function}).second)
            stack.emplace_back(ne.function.get(), 0);
        } else {
          order.push_back(n);
          stack.pop_back();
        }
      }
    }
  }
  std::unordered_set<Node*> needed;
  bool prune = !inputs.empty();
  if (prune) {
    for (Node* n : order) {  // children come first in post-order
      bool need = captures.count(n) > 0;
      for (const Edge& e : n->next_edges())
        need = need || (e.is_valid() && needed.count(e.function.get()));
      if (need) needed.insert(n);
    }
  }
  auto is_needed = [&](Node* n) { return !prune || needed.count(n) > 0; };
  for (Node* n : order) {
    if (!is_needed(n)) continue;
    for (const Edge& e : n->next_edges())
      if (e.is_valid() && is_needed(e.function.get())) ++nodes[e.function.get()].deps;
  }

  variable_list captured(inputs.size());
  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, ReadyOrder> ready;
  auto buffer_of = [&](Node* n) -> variable_list& {
    variable_list& b = nodes[n].buffer;
    if (b.empty()) b.resize(n->num_inputs());
    return b;
  };
  AutoGradMode mode(create_graph);
  for (size_t i = 0; i < root_edges.size(); ++i) {
    Node* n = root_edges[i].function.get();
    if (!is_needed(n)) continue;
    accumulate(buffer_of(n)[root_edges[i].input_nr], root_grads[i]);
  }
  for (size_t i = 0; i < root_edges.size(); ++i) {
    Node* n = root_edges[i].function.get();
    NodeState& st = nodes[n];
    if (is_needed(n) && st.deps == 0) {
      st.deps = -1;  // queued once
      ready.push(st.fn);
    }
  }

  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top();
    ready.pop();
    Node* n = node.get();
    variable_list grads;
    grads = std::move(nodes[n].buffer);
    grads.resize(n->num_inputs());
    auto* acc = dynamic_cast<AccumulateGrad*>(n);
    // Tensor hooks (a leaf's live in its meta), retain_grad hooks and node pre-hooks.
    if (acc) {
      AutogradMeta* m = meta(acc->variable().get());
      if (m && grads[0].defined()) {
        auto hooks = m->leaf_hooks;
        for (auto& h : hooks) {
          Tensor r = h.second(grads[0]);
          if (r.defined()) grads[0] = r;
        }
      }
    }
    if (n->has_hooks()) grads = n->run_prehooks(std::move(grads));
    if (auto it = captures.find(n); it != captures.end()) {
      for (auto& [input_nr, idx] : it->second) {
        Tensor g = grads[input_nr];
        captured[idx] = g;
      }
      if (!accumulate_grad) {
        // autograd.grad captures without running the node when it only leads to captures.
        bool leads_on = false;
        for (const Edge& e : n->next_edges())
          leads_on = leads_on || (e.is_valid() && is_needed(e.function.get()));
        if (acc || !leads_on) continue;
      }
    }
    if (acc && !accumulate_grad) continue;
    variable_list outs;
    variable_list grads_for_hooks;
    if (n->has_hooks()) grads_for_hooks = grads;
    try {
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
      if (!e.is_valid() || !is_needed(e.function.get())) continue;
      Node* next = e.function.get();
      if (outs[i].defined()) accumulate(buffer_of(next)[e.input_nr], std::move(outs[i]));
      NodeState& ns = nodes[next];
      if (--ns.deps == 0) ready.push(ns.fn);
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
