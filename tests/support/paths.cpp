#include "paths.hpp"

namespace rapidrpc::test {

const char* const rapidrpcd_path = RAPIDRPCD_PATH;
const char* const test_data_dir = RAPIDRPC_TEST_DATA_DIR;
const char* const python3_path = PYTHON3_PATH;
const char* const python_peer_path = PYTHON_PEER_PATH;

}  // namespace rapidrpc::test
