// Polynomial regression in the style of pytorch/examples cpp/regression: fit
// y = W_target . [x, x^2, x^3, x^4] + b_target with a Linear layer, SGD and smooth_l1_loss.
// Deterministic: the target is fixed, x is evenly spaced, the layer starts from zero; so the
// same losses print against libtorch and ember. Also saves and reloads the model and the
// optimizer (torch::save / torch::load) and checks the reloaded copy predicts the same.
// compat: rtol=2e-3 atol=1e-5
#include <torch/torch.h>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#define POLY_DEGREE 4

// Builds features i.e. a matrix with columns [x, x^2, x^3, x^4].
torch::Tensor make_features(torch::Tensor x) {
  x = x.unsqueeze(1);
  std::vector<torch::Tensor> xs;
  for (int64_t i = 0; i < POLY_DEGREE; ++i) xs.push_back(x.pow(i + 1));
  return torch::cat(xs, 1);
}

// Approximated function.
torch::Tensor f(torch::Tensor x, torch::Tensor W_target, torch::Tensor b_target) {
  return x.mm(W_target) + b_target.item();
}

// Creates a string description of a polynomial.
std::string poly_desc(torch::Tensor W, torch::Tensor b) {
  auto size = W.size(0);
  std::ostringstream stream;
  stream << std::fixed << std::setprecision(3) << "y = ";
  for (int64_t i = 0; i < size; ++i) stream << W[i].item<float>() << " x^" << i + 1 << " ";
  stream << "+ " << b[0].item<float>();
  return stream.str();
}

// Builds batch `index` of (x, f(x)): 32 evenly spaced points, shifted a little per batch.
std::pair<torch::Tensor, torch::Tensor> get_batch(torch::Tensor W_target, torch::Tensor b_target,
                                                  int64_t index, int64_t batch_size = 32) {
  auto x = torch::linspace(-1, 1, batch_size) + 0.01 * static_cast<double>(index % 5);
  auto features = make_features(x);
  auto y = f(features, W_target, b_target);
  return std::make_pair(features, y);
}

struct PolyNetImpl : torch::nn::Module {
  PolyNetImpl() : fc(register_module("fc", torch::nn::Linear(POLY_DEGREE, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(PolyNet);

int main() {
  auto W_target = torch::tensor({0.5, -1.5, 2.0, 0.75}, torch::kFloat32).view({POLY_DEGREE, 1});
  auto b_target = torch::tensor({0.25}, torch::dtype(torch::kFloat32));

  PolyNet model;
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.zero_();
  }
  std::cout << model << std::endl;
  for (const auto& p : model->named_parameters())
    std::cout << p.key() << ": " << p.value().sizes() << std::endl;

  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));

  float loss = 0;
  int64_t batch_idx = 0;
  std::cout << std::fixed << std::setprecision(6);
  while (++batch_idx) {
    torch::Tensor batch_x, batch_y;
    std::tie(batch_x, batch_y) = get_batch(W_target, b_target, batch_idx);

    optimizer.zero_grad();
    auto output = torch::smooth_l1_loss(model(batch_x), batch_y);
    loss = output.item<float>();
    output.backward();
    optimizer.step();

    if (batch_idx % 25 == 0) std::cout << "batch " << batch_idx << " loss " << loss << std::endl;
    if (batch_idx >= 200) break;
  }
  std::cout << "Loss: " << loss << " after " << batch_idx << " batches" << std::endl;
  std::cout << "==> Learned function:\t" << poly_desc(model->fc->weight.view({-1}), model->fc->bias)
            << std::endl;
  std::cout << "==> Actual function:\t" << poly_desc(W_target.view({-1}), b_target) << std::endl;

  // Same fit with Adam and a functional MSE loss on a Sequential model.
  torch::nn::Sequential seq(torch::nn::Linear(POLY_DEGREE, 8), torch::nn::Tanh(),
                            torch::nn::Linear(8, 1));
  {
    torch::NoGradGuard no_grad;
    for (auto& p : seq->named_parameters()) {
      auto n = p.value().numel();
      auto init = torch::arange(n, torch::kFloat32).mul(0.37).sin().mul(0.3);
      p.value().copy_(init.view_as(p.value()));
    }
  }
  torch::optim::Adam adam(seq->parameters(), torch::optim::AdamOptions(0.01));
  for (int64_t step = 1; step <= 100; ++step) {
    auto batch = get_batch(W_target, b_target, step);
    adam.zero_grad();
    auto l = torch::nn::functional::mse_loss(seq->forward(batch.first), batch.second);
    l.backward();
    adam.step();
    if (step % 20 == 0)
      std::cout << "adam step " << step << " loss " << l.item<double>() << std::endl;
  }

  // Checkpointing: save the model and optimizer, load them into fresh objects.
  torch::save(model, "model.pt");
  torch::save(optimizer, "optimizer.pt");
  PolyNet restored;
  torch::load(restored, "model.pt");
  torch::optim::SGD restored_opt(restored->parameters(),
                                 torch::optim::SGDOptions(0.1).momentum(0.9));
  torch::load(restored_opt, "optimizer.pt");
  auto probe = make_features(torch::linspace(-1, 1, 5));
  {
    torch::NoGradGuard no_grad;
    std::cout << "restored equal: " << torch::allclose(model(probe), restored(probe)) << std::endl;
  }
  // One more step from each: the momentum buffers were restored too.
  auto batch = get_batch(W_target, b_target, 0);
  optimizer.zero_grad();
  torch::smooth_l1_loss(model(batch.first), batch.second).backward();
  optimizer.step();
  restored_opt.zero_grad();
  torch::smooth_l1_loss(restored(batch.first), batch.second).backward();
  restored_opt.step();
  {
    torch::NoGradGuard no_grad;
    std::cout << "after one more step equal: " << torch::allclose(model(probe), restored(probe))
              << std::endl;
  }
  return 0;
}
