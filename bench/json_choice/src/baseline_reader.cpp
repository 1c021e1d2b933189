#include "readers.hpp"

#include "json.hpp"

namespace json_choice {

rapidrpc::value parse_baseline(std::string_view text) {
  try {
    return baseline::parse_json(text);
  } catch (const baseline::json_error& e) {
    throw read_error(e.what());
  }
}

}  // namespace json_choice
