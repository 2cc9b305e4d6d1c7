#pragma once
/// ember::data: datasets, samplers, the DataLoader, IDX/MNIST readers and transforms, in two
/// shapes: ember's non-template Dataset / Sampler / DataLoader, and libtorch's torch::data
/// templates (datasets::, samplers::, transforms::, make_data_loader) alongside them.

#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/datasets.h"
#include "ember/data/example.h"
#include "ember/data/mnist.h"
#include "ember/data/sampler.h"
#include "ember/data/samplers.h"
#include "ember/data/transforms.h"
