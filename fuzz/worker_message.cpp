// Fuzz target: remote::read, the worker-host messages as a front and a host
// read them (src/worker/remote.hpp).
//
// Input: a message's frames, the command first, separated by NUL bytes (a
// frame of the protocol holds none but a reply's or call's document, which
// the exchange target covers).
//
// Invariants: each kind read has exactly its frames and fields (a READY of
// this version with a capacity from 1 to max_capacity written in decimal, a
// CALL or REPLY with an 8-byte id, the others alone); the views point into
// the frames; a message of one more frame, or with its command changed, is
// not read as the same kind.
#include "fuzz_support.hpp"

#include "worker/remote.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

namespace remote = rapidrpc::detail::remote;
using kind = remote::message::kind;

void check(const std::vector<std::string_view>& frames, const remote::message& m) {
  switch (m.what) {
    case kind::ready_message: {
      FUZZ_CHECK(frames.size() == 3 && frames[0] == remote::ready && frames[1] == remote::version);
      FUZZ_CHECK(m.capacity >= 1 && m.capacity <= remote::max_capacity);
      std::uint32_t again = 0;
      const auto v = frames[2];
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), again);
      FUZZ_CHECK(ec == std::errc() && end == v.data() + v.size() && again == m.capacity);
      break;
    }
    case kind::call_message:
    case kind::reply_message:
      FUZZ_CHECK(frames.size() == 3 && (frames[0] == remote::call || frames[0] == remote::reply));
      FUZZ_CHECK((m.what == kind::call_message) == (frames[0] == remote::call));
      FUZZ_CHECK(m.id.size() == 8 && m.id.data() == frames[1].data());
      FUZZ_CHECK(m.document.data() == frames[2].data() && m.document.size() == frames[2].size());
      break;
    case kind::heartbeat_message:
      FUZZ_CHECK(frames.size() == 1 && frames[0] == remote::heartbeat);
      break;
    case kind::leaving_message:
      FUZZ_CHECK(frames.size() == 1 && frames[0] == remote::leaving);
      break;
    case kind::who_message:
      FUZZ_CHECK(frames.size() == 1 && frames[0] == remote::who);
      break;
    case kind::unknown:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> frames;
  for (std::size_t start = 0;;) {
    const auto nul = in.find('\0', start);
    frames.push_back(in.substr(start, nul == std::string_view::npos ? nul : nul - start));
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  const auto m = remote::read(frames);
  check(frames, m);

  // One frame more is another message: never the same kind.
  auto longer = frames;
  longer.emplace_back("x");
  const auto l = remote::read(longer);
  check(longer, l);
  FUZZ_CHECK(m.what == kind::unknown || l.what != m.what);

  // Nothing but the command decides the kind.
  auto renamed = frames;
  const std::string other = std::string(frames[0]) + "?";
  renamed[0] = other;
  FUZZ_CHECK(remote::read(renamed).what == kind::unknown);

  FUZZ_CHECK(remote::read({}).what == kind::unknown);
  return 0;
}
