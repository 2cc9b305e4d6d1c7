#pragma once
/// ember::optim: the optimizers and LR schedulers (libtorch's torch/optim.h).

#include "ember/optim/adadelta.h"
#include "ember/optim/adagrad.h"
#include "ember/optim/adam.h"
#include "ember/optim/adamax.h"
#include "ember/optim/adamw.h"
#include "ember/optim/functional.h"
#include "ember/optim/lbfgs.h"
#include "ember/optim/nadam.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/radam.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/schedulers.h"
#include "ember/optim/sgd.h"
