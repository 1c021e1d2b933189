#include "curve.hpp"

#include <zmq.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace rapidrpcd {

namespace {

bool is_z85_key(const std::string& key) {
  std::array<std::uint8_t, 32> binary{};
  return key.size() == 40 && zmq_z85_decode(binary.data(), key.c_str()) != nullptr;
}

// Writes `text` to a new file `path` with `mode`; false (errno set) if it
// exists or cannot be written.
bool write_new(const std::string& path, const std::string& text, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int saved = errno;
      ::close(fd);
      errno = saved;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0;
}

}  // namespace

curve_key_file read_curve_key_file(const std::string& path, bool secret) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the key file " + path);
  curve_key_file keys;
  std::string line;
  while (std::getline(in, line)) {
    std::string_view l(line);
    l.remove_prefix(std::min(l.find_first_not_of(" \t"), l.size()));
    std::string* into = l.starts_with("public-key")   ? &keys.public_key
                        : l.starts_with("secret-key") ? &keys.secret_key
                                                      : nullptr;
    if (into == nullptr) continue;
    auto open = l.find('"');
    auto close = open == std::string_view::npos ? open : l.find('"', open + 1);
    if (close == std::string_view::npos) {
      std::string why = path;
      why += ": a key without its quotes: ";
      why += line;
      throw std::runtime_error(why);
    }
    *into = std::string(l.substr(open + 1, close - open - 1));
  }
  if (!is_z85_key(keys.public_key))
    throw std::runtime_error(path + ": no public-key of 40 Z85 characters");
  if (secret) {
    if (!is_z85_key(keys.secret_key))
      throw std::runtime_error(path +
                               ": no secret-key of 40 Z85 characters (the .key file, "
                               "not the .pub)");
    std::array<char, 41> derived{};
    zmq_curve_public(derived.data(), keys.secret_key.c_str());
    if (keys.public_key != derived.data())
      throw std::runtime_error(path + ": its public-key is not the secret-key's");
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
      std::fprintf(stderr,
                   "rapidrpcd: warning: %s, a secret key, can be read by others (chmod "
                   "600 it)\n",
                   path.c_str());
  }
  return keys;
}

int write_curve_key_files(const std::string& name) {
  std::array<char, 41> public_key{};
  std::array<char, 41> secret_key{};
  if (zmq_curve_keypair(public_key.data(), secret_key.data()) != 0) {
    std::fprintf(stderr, "rapidrpcd: cannot make a CurveZMQ key pair: %s\n",
                 zmq_strerror(zmq_errno()));
    return 1;
  }
  const std::string head = "#   rapidrpcd --curve-keygen: a CurveZMQ key pair (ZPL, as czmq's)\n";
  const std::string pub = std::string("curve\n    public-key = \"") + public_key.data() + "\"\n";
  const std::string key = pub + "    secret-key = \"" + secret_key.data() + "\"\n";
  const std::string key_path = name + ".key";
  const std::string pub_path = name + ".pub";
  if (!write_new(key_path, head + "#   SECRET: keep this file on its host only\n" + key, 0600)) {
    std::fprintf(stderr, "rapidrpcd: cannot write %s: %s\n", key_path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  if (!write_new(pub_path, head + "#   the public key: give it to the other side\n" + pub, 0644)) {
    std::fprintf(stderr, "rapidrpcd: cannot write %s: %s\n", pub_path.c_str(),
                 std::strerror(errno));
    ::unlink(key_path.c_str());
    return 1;
  }
  std::printf("%s (secret, mode 0600) and %s (public)\n", key_path.c_str(), pub_path.c_str());
  return 0;
}

}  // namespace rapidrpcd
