// Fuzz target: a methodCall document, as the server parses a request body.
//
// Input: the document.
//
// It is parsed whole (parse_call, as a one-shot user would), in small chunks
// (a reused xmlrpc::parser, reset between documents, as a connection keeps
// one), and whole under small limits.
//
// Whole documents are read by the parser's direct scanner (expat only
// when it gives up), chunks by expat alone: comparing the two checks that
// the scanner accepts only what expat accepts, as the same value.
//
// Invariants: whole and chunked give the same verdict, and the same call
// (not always the same error: see below); what small limits accept, the default
// limits accept as the same call; an accepted call can be written back with
// write_call, and that document parses to the same call (doubles bit for
// bit), and writing it again gives the same bytes.
#include "fuzz_support.hpp"

#include <rapidrpc/xmlrpc.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

namespace {

namespace xmlrpc = rapidrpc::xmlrpc;
using rapidrpc::fuzz::same;

bool same_call(const xmlrpc::method_call& a, const xmlrpc::method_call& b) {
  return a.method == b.method && same(a.params, b.params);
}

std::string write(const xmlrpc::method_call& call) {
  std::string out;
  try {
    xmlrpc::write_call(out, call.method, call.params);
  } catch (const std::invalid_argument&) {
    FUZZ_CHECK(!"a parsed call cannot be written back");
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view doc(reinterpret_cast<const char*>(data), size);
  static xmlrpc::parser chunked(xmlrpc::document_type::call);
  static xmlrpc::parser small(
      xmlrpc::document_type::call,
      rapidrpc::limits{.max_depth = 3, .max_elements = 40, .max_name_bytes = 8});

  auto whole = xmlrpc::parse_call(doc);
  const auto* call = std::get_if<xmlrpc::method_call>(&whole);

  // The verdict and the value, not the error: when a document holds two
  // errors in one run of text (say text where none belongs, then an
  // ill-formed token), expat reports the token before the text if it sees
  // the whole run at once, and the text first if the run is cut. Either way
  // the document is rejected.
  const bool chunked_ok = rapidrpc::fuzz::parse_in_chunks(chunked, doc);
  FUZZ_CHECK(chunked_ok == (call != nullptr));
  if (call != nullptr) FUZZ_CHECK(same_call(*call, chunked.call()));

  if (rapidrpc::fuzz::parse_whole(small, doc)) {
    FUZZ_CHECK(call != nullptr);
    FUZZ_CHECK(same_call(*call, small.call()));
  }

  if (call == nullptr) return 0;
  const std::string written = write(*call);
  auto again = xmlrpc::parse_call(written);
  const auto* call2 = std::get_if<xmlrpc::method_call>(&again);
  FUZZ_CHECK(call2 != nullptr);
  FUZZ_CHECK(same_call(*call, *call2));
  FUZZ_CHECK(write(*call2) == written);
  return 0;
}
