// A character-level Transformer language model trained on the fortune files (make demo-lm).
#include <cstdio>

int main() {
  std::puts("char_lm: not built yet");
  return 0;
}
