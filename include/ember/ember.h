#pragma once
/// The whole public C++ API of ember.

#include "ember/allocator.h"
#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/generator.h"
#include "ember/indexing.h"
#include "ember/ops.h"
#include "ember/parallel.h"
#include "ember/random.h"
#include "ember/scalar.h"
#include "ember/tensor.h"
#include "ember/tensor_options.h"
#include "ember/version.h"
