#include "kernels/cpu/loops.h"

namespace ember::cpu::EMBER_CPU_CAP {

void register_activation_kernels(KernelTable& t) {}

}  // namespace ember::cpu::EMBER_CPU_CAP
