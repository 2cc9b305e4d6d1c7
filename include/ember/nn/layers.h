#pragma once
/// The layer families beyond linear/activation/containers (conv, pooling, normalization,
/// dropout, embedding, losses, resampling, padding, distances, recurrent), their Options and
/// functional forms.

#include "ember/nn/functional/conv.h"
#include "ember/nn/functional/distance.h"
#include "ember/nn/functional/dropout.h"
#include "ember/nn/functional/embedding.h"
#include "ember/nn/functional/linear.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/functional/normalization.h"
#include "ember/nn/functional/padding.h"
#include "ember/nn/functional/pooling.h"
#include "ember/nn/functional/sampling.h"
#include "ember/nn/functional/vision.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/distance.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/fold.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/modules/padding.h"
#include "ember/nn/modules/pixelshuffle.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn/modules/rnn.h"
#include "ember/nn/modules/upsampling.h"
#include "ember/nn/diagnostics.h"
