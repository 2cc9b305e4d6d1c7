#pragma once
/// ember::nn: modules, layers, functional forms and init (libtorch's torch/nn.h).

#include "ember/nn/cloneable.h"
#include "ember/nn/enum.h"
#include "ember/nn/functional/activation.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn/init.h"
#include "ember/nn/layers.h"
#include "ember/nn/module.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/transformer.h"
#include "ember/nn/options.h"
#include "ember/nn/pimpl.h"
#include "ember/nn/serialize.h"
#include "ember/nn/utils.h"
