#pragma once
// The autograd workloads, written once and compiled against ember (bench_elementwise.cpp) and
// libtorch (torch_bench.cpp), like elementwise_workloads.h. A backend B adds to the elementwise
// backend: `using NoGrad` (the no-grad guard type).
//
//   autograd_xwb_1elem:  y = (x * w + b).sum(); y.backward() on 1-element float32 tensors
//                        (the per-op cost of recording and of the backward engine)
//   mlp_step/<batch>:    one SGD train step of a 64-64-64-10 MLP (relu, MSE loss): forward,
//                        backward, p -= lr * p.grad, p.grad.zero_()

#include <vector>

#include "elementwise_workloads.h"

namespace ember_bench {

template <class B>
void register_autograd() {
  using T = typename B::Tensor;
  for (int nt : {1, 2}) {
    reg<B>("autograd_xwb_1elem/1/fresh/nt:" + std::to_string(nt), nt, 0, [] {
      return [x = B::randn({1}).requires_grad_(), w = B::randn({1}).requires_grad_(),
              b = B::randn({1}).requires_grad_()] {
        T y = (x * w + b).sum();
        y.backward();
      };
    });
  }
  for (int batch : {1, 32}) {
    for (int nt : {1, 2}) {
      std::string name = "mlp_step/" + std::to_string(batch) + "/fresh/nt:" + std::to_string(nt);
      reg<B>(name, nt, 0, [batch] {
        struct Step {
          std::vector<T> params;
          T x, target;
          void operator()() {
            T h = (x.matmul(params[0].t()) + params[1]).relu();
            h = (h.matmul(params[2].t()) + params[3]).relu();
            T out = h.matmul(params[4].t()) + params[5];
            T loss = (out - target).pow(2).mean();
            loss.backward();
            typename B::NoGrad guard;
            for (T& p : params) {
              p.sub_(p.grad(), 0.01);
              p.mutable_grad().zero_();
            }
          }
        };
        Step s;
        const int64_t dims[4] = {64, 64, 64, 10};
        for (int l = 0; l < 3; ++l) {
          s.params.push_back((B::randn({dims[l + 1], dims[l]}) * 0.1).requires_grad_());
          s.params.push_back((B::randn({dims[l + 1]}) * 0.1).requires_grad_());
        }
        s.x = B::randn({batch, 64});
        s.target = B::randn({batch, 10});
        return s;
      });
    }
  }
}

}  // namespace ember_bench
