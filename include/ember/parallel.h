#pragma once
/// Intra-op threading controls.

namespace ember {

/// Sets the number of threads used by intra-op parallelism (>= 1; ValueError otherwise).
void set_num_threads(int n);
/// The number of intra-op threads.
int get_num_threads();

}  // namespace ember
