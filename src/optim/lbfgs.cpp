// L-BFGS with the two-loop recursion and an optional strong-Wolfe line search (cubic
// interpolation, bracketing then zoom), following torch 1.13's algorithm and stopping rules.
// Vectors are flat tensors of the parameters' dtype; scalars are doubles.
#include "ember/optim/lbfgs.h"

#include <algorithm>
#include <cmath>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/ops.h"

namespace ember::optim {
namespace {

double dot(const Tensor& a, const Tensor& b) { return a.dot(b).item<double>(); }
double abs_max(const Tensor& a) { return a.numel() ? a.abs().max().item<double>() : 0.0; }

// Minimizer of the cubic through (x1, f1, g1), (x2, f2, g2), clamped to the bounds.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  double lo, hi;
  if (bounds) {
    lo = bounds->first;
    hi = bounds->second;
  } else {
    lo = x1 <= x2 ? x1 : x2;
    hi = x1 <= x2 ? x2 : x1;
  }
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, lo), hi);
  }
  return (lo + hi) / 2.;
}

struct LineSearchResult {
  double f;
  Tensor g;
  double t;
  int64_t evals;
};

// Strong-Wolfe line search along d from t; obj(t) evaluates loss and flat gradient at x + t d.
template <class Obj>
LineSearchResult strong_wolfe(const Obj& obj, double t, const Tensor& d, double f, const Tensor& g0,
                              double gtd, double c1 = 1e-4, double c2 = 0.9,
                              double tolerance_change = 1e-9, int64_t max_ls = 25) {
  const double d_norm = abs_max(d);
  Tensor g = g0.clone();
  Tensor g_new;
  double f_new = obj(t, g_new);
  int64_t evals = 1;
  double gtd_new = dot(g_new, d);
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<double> br, br_f, br_gtd;
  std::vector<Tensor> br_g;
  while (ls_iter < max_ls) {
    if (f_new > (f + c1 * t * gtd) || (ls_iter > 1 && f_new >= f_prev)) {
      br = {t_prev, t}, br_f = {f_prev, f_new}, br_g = {g_prev, g_new.clone()};
      br_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      br = {t}, br_f = {f_new}, br_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      br = {t_prev, t}, br_f = {f_prev, f_new}, br_g = {g_prev, g_new.clone()};
      br_gtd = {gtd_prev, gtd_new};
      break;
    }
    const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10;
    const double tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                          std::make_pair(min_step, max_step));
    t_prev = tmp;
    f_prev = f_new;
    g_prev = g_new.clone();
    gtd_prev = gtd_new;
    f_new = obj(t, g_new);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) {
    br = {0, t}, br_f = {f, f_new}, br_g = {g, g_new};
    br_gtd.resize(2);  // torch leaves these unset here; the zoom loop below does not run
  }
  // Zoom: shrink the bracket until the strong Wolfe conditions hold.
  bool insuf_progress = false;
  size_t low = 0, high = 1;
  if (br_f.size() == 2 && !(br_f[0] <= br_f[1])) low = 1, high = 0;
  while (!done && ls_iter < max_ls) {
    if (std::abs(br[1] - br[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1]);
    const double bmax = std::max(br[0], br[1]), bmin = std::min(br[0], br[1]);
    const double eps = 0.1 * (bmax - bmin);
    if (std::min(bmax - t, t - bmin) < eps) {
      if (insuf_progress || t >= bmax || t <= bmin) {
        t = std::abs(t - bmax) < std::abs(t - bmin) ? bmax - eps : bmin + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    f_new = obj(t, g_new);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
    if (f_new > (f + c1 * t * gtd) || f_new >= br_f[low]) {
      br[high] = t, br_f[high] = f_new, br_g[high] = g_new.clone(), br_gtd[high] = gtd_new;
      if (br_f[0] <= br_f[1])
        low = 0, high = 1;
      else
        low = 1, high = 0;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (br[high] - br[low]) >= 0) {
        br[high] = br[low], br_f[high] = br_f[low], br_g[high] = br_g[low];
        br_gtd[high] = br_gtd[low];
      }
      br[low] = t, br_f[low] = f_new, br_g[low] = g_new.clone(), br_gtd[low] = gtd_new;
    }
  }
  if (br.size() == 1) low = 0;
  return {br_f[low], br_g[low], br[low], evals};
}

}  // namespace

LBFGSOptions::LBFGSOptions(double lr) : lr_(lr) {}
bool operator==(const LBFGSOptions& a, const LBFGSOptions& b) {
  return a.lr() == b.lr() && a.max_iter() == b.max_iter() && a.max_eval() == b.max_eval() &&
         a.tolerance_grad() == b.tolerance_grad() && a.tolerance_change() == b.tolerance_change() &&
         a.history_size() == b.history_size() && a.line_search_fn() == b.line_search_fn();
}

LBFGS::LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<LBFGSOptions>(defaults)) {
  EMBER_CHECK_VALUE(param_groups_.size() == 1,
                    "LBFGS doesn't support per-parameter options (parameter groups)");
  auto& o = static_cast<LBFGSOptions&>(param_groups_[0].options());
  if (!o.max_eval()) o.max_eval(o.max_iter() * 5 / 4);
  EMBER_CHECK_VALUE(!o.line_search_fn() || *o.line_search_fn() == "strong_wolfe",
                    "only 'strong_wolfe' is supported");
}
LBFGS::LBFGS(std::vector<Tensor> params, LBFGSOptions defaults)
    : LBFGS(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

std::unique_ptr<OptimizerParamState> LBFGS::make_param_state() const {
  return std::make_unique<LBFGSParamState>();
}

int64_t LBFGS::numel() const {
  int64_t n = 0;
  for (const Tensor& p : param_groups_[0].params()) n += p.numel();
  return n;
}

Tensor LBFGS::gather_flat_grad() const {
  std::vector<Tensor> views;
  for (const Tensor& p : param_groups_[0].params()) {
    const Tensor& g = p.grad();
    views.push_back(g.defined() ? g.reshape({-1}) : zeros({p.numel()}, p.options()));
  }
  return cat(views, 0);
}

void LBFGS::add_grad(double step_size, const Tensor& update) {
  int64_t offset = 0;
  for (Tensor& p : param_groups_[0].params()) {
    const int64_t n = p.numel();
    p.add_(update.narrow(0, offset, n).view(p.sizes()), Scalar(step_size));
    offset += n;
  }
}

double LBFGS::directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x,
                                   double t, const Tensor& d, Tensor& flat_grad) {
  add_grad(t, d);
  double loss;
  {
    AutoGradMode enable(true);
    loss = closure().item<double>();
  }
  flat_grad = gather_flat_grad();
  auto& ps = param_groups_[0].params();
  for (size_t i = 0; i < ps.size(); ++i) ps[i].copy_(x[i]);
  return loss;
}

Tensor LBFGS::step(LossClosure closure) {
  EMBER_CHECK(closure != nullptr, "[LBFGS] step() requires a closure that returns the loss");
  NoGradGuard no_grad;
  auto& o = static_cast<LBFGSOptions&>(param_groups_[0].options());
  const double lr = o.lr(), tol_grad = o.tolerance_grad(), tol_change = o.tolerance_change();
  const int64_t max_iter = o.max_iter(), history = o.history_size();
  const int64_t max_eval = o.max_eval() ? *o.max_eval() : max_iter * 5 / 4;
  EMBER_CHECK(!param_groups_[0].params().empty(), "[LBFGS] no parameters to optimize");

  auto& slot = state_[param_groups_[0].params()[0].unsafeGetTensorImpl()];
  if (!slot) slot = std::make_unique<LBFGSParamState>();
  auto& st = static_cast<LBFGSParamState&>(*slot);

  auto evaluate = [&] {
    AutoGradMode enable(true);
    return closure();
  };
  Tensor orig_loss = evaluate();
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  st.func_evals(st.func_evals() + 1);
  Tensor flat_grad = gather_flat_grad();
  if (abs_max(flat_grad) <= tol_grad) return orig_loss;

  Tensor d = st.d(), prev_flat_grad = st.prev_flat_grad();
  double t = st.t(), H_diag = st.H_diag(), prev_loss = st.prev_loss();
  std::vector<Tensor>& old_dirs = st.old_dirs();
  std::vector<Tensor>& old_stps = st.old_stps();
  std::vector<Tensor>& ro = st.ro();

  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    st.n_iter(st.n_iter() + 1);
    if (st.n_iter() == 1) {
      d = flat_grad.neg();
      old_dirs.clear(), old_stps.clear(), ro.clear();
      H_diag = 1;
    } else {
      // Update the curvature pairs, then the two-loop recursion for d = -H g.
      Tensor y = flat_grad.sub(prev_flat_grad);
      Tensor s = d.mul(Scalar(t));
      const double ys = dot(y, s);
      if (ys > 1e-10) {
        if (int64_t(old_dirs.size()) == history) {
          old_dirs.erase(old_dirs.begin());
          old_stps.erase(old_stps.begin());
          ro.erase(ro.begin());
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(scalar_tensor(Scalar(1. / ys), TensorOptions(kDouble)));
        H_diag = ys / dot(y, y);
      }
      const size_t num_old = old_dirs.size();
      std::vector<double> al(num_old);
      Tensor q = flat_grad.neg();
      for (size_t k = num_old; k-- > 0;) {
        al[k] = dot(old_stps[k], q) * ro[k].item<double>();
        q.add_(old_dirs[k], Scalar(-al[k]));
      }
      Tensor r = q.mul(Scalar(H_diag));
      for (size_t k = 0; k < num_old; ++k) {
        const double be_i = dot(old_dirs[k], r) * ro[k].item<double>();
        r.add_(old_stps[k], Scalar(al[k] - be_i));
      }
      d = r;
    }
    if (!prev_flat_grad.defined())
      prev_flat_grad = flat_grad.clone();
    else
      prev_flat_grad.copy_(flat_grad);
    prev_loss = loss;
    // The first step is scaled by the gradient's size.
    if (st.n_iter() == 1)
      t = std::min(1., 1. / flat_grad.abs().sum().item<double>()) * lr;
    else
      t = lr;
    const double gtd = dot(flat_grad, d);
    if (gtd > -tol_change) break;

    int64_t ls_evals = 0;
    bool opt_cond = false;
    if (o.line_search_fn()) {
      std::vector<Tensor> x_init;
      for (const Tensor& p : param_groups_[0].params()) x_init.push_back(p.clone());
      auto obj = [&](double step, Tensor& g_out) {
        return directional_evaluate(closure, x_init, step, d, g_out);
      };
      LineSearchResult res = strong_wolfe(obj, t, d, loss, flat_grad, gtd);
      loss = res.f, flat_grad = res.g, t = res.t, ls_evals = res.evals;
      add_grad(t, d);
      opt_cond = abs_max(flat_grad) <= tol_grad;
    } else {
      add_grad(t, d);
      if (n_iter != max_iter) {
        loss = evaluate().item<double>();
        flat_grad = gather_flat_grad();
        opt_cond = abs_max(flat_grad) <= tol_grad;
        ls_evals = 1;
      }
    }
    current_evals += ls_evals;
    st.func_evals(st.func_evals() + ls_evals);
    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (abs_max(d.mul(Scalar(t))) <= tol_change) break;
    if (std::abs(loss - prev_loss) < tol_change) break;
  }
  st.d(d), st.t(t), st.H_diag(H_diag), st.prev_flat_grad(prev_flat_grad);
  st.prev_loss(prev_loss);
  return orig_loss;
}

}  // namespace ember::optim
