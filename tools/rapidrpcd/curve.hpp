// rapidrpcd's CurveZMQ key files, for the worker-host link
// (server_options::worker_hosts.curve). The format is czmq's certificate files
// (ZPL), so keys made by other ZeroMQ tools read as they are:
//
//   curve
//       public-key = "40 characters of Z85"
//       secret-key = "40 characters of Z85"     (the secret file only)
//
// rapidrpcd --curve-keygen NAME writes NAME.key (both keys, mode 0600) and
// NAME.pub (the public key, to copy to the other side).
#pragma once

#include <string>

namespace rapidrpcd {

struct curve_key_file {
  std::string public_key;
  std::string secret_key;  ///< empty in a public file
};

/// Reads a key file; throws std::runtime_error saying what is wrong. With
/// `secret`, the file must hold the secret key.
curve_key_file read_curve_key_file(const std::string& path, bool secret);

/// Writes a new key pair to NAME.key and NAME.pub, neither existing yet;
/// prints what it wrote. Returns the exit status (0, or 1 saying why).
int write_curve_key_files(const std::string& name);

}  // namespace rapidrpcd
