# The port rule of a libtorch program to ember without the compatibility headers:
# torch::, at:: and c10:: -> ember:: (and `using namespace torch`), TORCH_ -> EMBER_, AT_ASSERT -> EMBER_ASSERT, and the libtorch
# includes -> <ember/ember.h>.
# Usage: cmake -DIN=prog.cpp -DOUT=ported.cpp -P port.cmake
file(READ ${IN} text)
string(REPLACE "torch::" "ember::" text "${text}")
string(REGEX REPLACE "([^A-Za-z0-9_:])(at|c10)::" "\\1ember::" text "${text}")
string(REGEX REPLACE "namespace (torch|at|c10)([^A-Za-z0-9_])" "namespace ember\\2" text "${text}")
string(REPLACE "TORCH_" "EMBER_" text "${text}")
string(REPLACE "AT_ASSERT" "EMBER_ASSERT" text "${text}")
string(REGEX REPLACE "#include <(torch|ATen)/[A-Za-z_/]+\\.h>" "#include <ember/ember.h>" text
       "${text}")
file(WRITE ${OUT} "${text}")
