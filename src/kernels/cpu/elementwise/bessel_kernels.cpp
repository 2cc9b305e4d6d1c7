// The bessel family's elementwise kernels (src/ops/elementwise/special_grad.h lists its ops).

#include "kernels/cpu/elementwise/loops.h"

namespace ember::cpu::EMBER_CPU_CAP {

void register_bessel_kernels(KernelTable& t) { (void)t; }

}  // namespace ember::cpu::EMBER_CPU_CAP
