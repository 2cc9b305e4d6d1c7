#pragma once
/// Image transforms on one image (C×H×W) or a batch (N×C×H×W) tensor. Random transforms draw
/// their parameters per image of a batch from an ember::Generator (the default one when none).

#include <functional>
#include <optional>
#include <vector>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember::data::transforms {

/// A transform: tensor in, tensor out.
using Transform = std::function<Tensor(Tensor)>;

/// (x - mean[c]) / std[c] per channel (dim -3); one value broadcasts to every channel.
/// ValueError on an empty list or a zero std; floating inputs only (TypeError).
Transform Normalize(std::vector<double> mean, std::vector<double> std);
/// Zero-pads by `padding` on each side, then crops a random size[0]×size[1] window (per image).
/// RuntimeError when the (padded) image is smaller than the crop.
Transform RandomCrop(std::vector<int64_t> size, int64_t padding = 0,
                     std::optional<Generator> gen = std::nullopt);
/// Mirrors each image left-right with probability p.
Transform RandomHorizontalFlip(double p = 0.5, std::optional<Generator> gen = std::nullopt);
/// Rotates each image about its centre by an angle uniform in [-degrees, degrees] (counter-
/// clockwise positive, nearest neighbour, zero fill), as torchvision's RandomRotation.
Transform RandomRotation(double degrees, std::optional<Generator> gen = std::nullopt);
/// Converts dtype with rescaling as torchvision: integers map [0, max] to floats [0, 1], floats
/// to integers by x * (max + 1 - 0.001), float to float by a cast.
Transform ConvertImageDtype(ScalarType dtype);
/// Rotates every image by `degrees` (counter-clockwise, about the centre, nearest neighbour,
/// zero fill): torchvision's functional rotate with its defaults. float32/float64/uint8.
Tensor rotate(const Tensor& image, double degrees);
/// Applies the transforms in order.
Transform Compose(std::vector<Transform> transforms);

}  // namespace ember::data::transforms
