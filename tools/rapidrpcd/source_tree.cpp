// The one source of rapidrpcd given the source tree's path (CMakeLists.txt):
// the others compile the same in every clone, so that a compiler cache
// shared by clones in other folders serves them (scripts/setup.sh).
#include "python.hpp"

namespace rapidrpcd {

const char* const source_python_dir = RAPIDRPC_PYTHON_DIR;

}  // namespace rapidrpcd
