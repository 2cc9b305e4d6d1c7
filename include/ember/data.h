#pragma once
/// ember::data: datasets, samplers, the DataLoader, IDX/MNIST readers and image transforms
/// (libtorch's torch::data, kept simple: one non-template Dataset interface).

#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/mnist.h"
#include "ember/data/sampler.h"
#include "ember/data/transforms.h"
