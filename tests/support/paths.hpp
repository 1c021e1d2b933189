// Where the tests find what they start and read: set at configure time in
// paths.cpp alone (CMakeLists.txt), so that every other test source
// compiles the same in every clone and a compiler cache shared by clones in
// other folders serves it (scripts/setup.sh).
#pragma once

namespace rapidrpc::test {

/// The rapidrpcd this build made (empty in a build without it).
extern const char* const rapidrpcd_path;
/// tests/data in the source tree.
extern const char* const test_data_dir;
/// The Python interpreter the tests run with.
extern const char* const python3_path;
/// tests/integration/client/python_peer.py in the source tree.
extern const char* const python_peer_path;

}  // namespace rapidrpc::test
