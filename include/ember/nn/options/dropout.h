#pragma once
/// Options of the dropout layers and functions (libtorch's DropoutOptions and FuncOptions).

#include "ember/nn/options.h"

namespace ember::nn {

/// `DropoutOptions(0.2).inplace(true)`; p must lie in [0, 1].
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  EMBER_ARG(double, p);
  EMBER_ARG(bool, inplace) = false;
};
using Dropout1dOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

namespace functional {
/// `F::dropout(x, F::DropoutFuncOptions().p(0.5).training(true))`; training defaults to true.
struct DropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(bool, inplace) = false;
};
using Dropout1dFuncOptions = DropoutFuncOptions;
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;

/// Alpha dropout; training defaults to false (as libtorch).
struct AlphaDropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;
}  // namespace functional

}  // namespace ember::nn
