// Fuzz target: a methodResponse document, as a client parses it, faults
// included; and the bytes as text for the writers.
//
// Input: the document.
//
// It is parsed whole (parse_response), in small chunks (a reused
// xmlrpc::parser), and whole under small limits. Then the input is used as
// the text of a string result and of a fault message, as a server writes
// them.
//
// Whole documents are read by the parser's direct scanner (expat only
// when it gives up), chunks by expat alone: comparing the two checks that
// the scanner accepts only what expat accepts, as the same value.
//
// Invariants: whole and chunked give the same verdict, and the same result or
// fault (not always the same error: see below); what small limits accept, the default
// limits accept as the same response; an accepted response is written back
// (write_response, or write_fault for a fault) to a document that parses to
// the same response, and writing that again gives the same bytes. A string
// that write_response accepts comes back unchanged; write_fault takes any
// bytes and always gives a document that parses to a fault with that code
// (and that message, if the bytes were writable text).
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
using rapidrpc::fault;
using rapidrpc::outcome;
using rapidrpc::value;

bool same_response(const outcome& a, const outcome& b) {
  if (a.index() != b.index()) return false;
  if (const auto* v = std::get_if<value>(&a)) return rapidrpc::fuzz::same(*v, std::get<value>(b));
  const fault& f = std::get<fault>(a);
  const fault& g = std::get<fault>(b);
  return f.code() == g.code() && f.message() == g.message();
}

std::string write(const outcome& response) {
  std::string out;
  if (const auto* f = std::get_if<fault>(&response)) {
    xmlrpc::write_fault(out, f->code(), f->message());
    return out;
  }
  try {
    xmlrpc::write_response(out, std::get<value>(response));
  } catch (const std::invalid_argument&) {
    FUZZ_CHECK(!"a parsed response cannot be written back");
  }
  return out;
}

const outcome* accepted(const auto& parsed) { return std::get_if<outcome>(&parsed); }

void check_documents(std::string_view doc) {
  static xmlrpc::parser chunked(xmlrpc::document_type::response);
  static xmlrpc::parser small(
      xmlrpc::document_type::response,
      rapidrpc::limits{.max_depth = 3, .max_elements = 40, .max_name_bytes = 8});

  const auto whole = xmlrpc::parse_response(doc);
  const outcome* response = accepted(whole);

  // The verdict and the value, not the error: when a document holds two
  // errors in one run of text (say text where none belongs, then an
  // ill-formed token), expat reports the token before the text if it sees
  // the whole run at once, and the text first if the run is cut. Likewise a
  // byte expat refuses, then a NUL as second byte: -32701 (not UTF-8) whole,
  // -32700 (not well-formed) if cut after the first byte. Either way the
  // document is rejected.
  const bool chunked_ok = rapidrpc::fuzz::parse_in_chunks(chunked, doc);
  FUZZ_CHECK(chunked_ok == (response != nullptr));
  if (response != nullptr) FUZZ_CHECK(same_response(*response, chunked.response()));

  if (rapidrpc::fuzz::parse_whole(small, doc)) {
    FUZZ_CHECK(response != nullptr);
    FUZZ_CHECK(same_response(*response, small.response()));
  }

  if (response == nullptr) return;
  const std::string written = write(*response);
  const auto again = xmlrpc::parse_response(written);
  const outcome* response2 = accepted(again);
  FUZZ_CHECK(response2 != nullptr);
  FUZZ_CHECK(same_response(*response, *response2));
  FUZZ_CHECK(write(*response2) == written);
}

void check_text(std::string_view text) {
  std::string written;
  bool writable = true;
  try {
    xmlrpc::write_response(written, value{text});
  } catch (const std::invalid_argument&) {
    writable = false;
    FUZZ_CHECK(written.empty());  // left as it was
  }
  if (writable) {
    const auto parsed = xmlrpc::parse_response(written);
    const outcome* response = accepted(parsed);
    FUZZ_CHECK(response != nullptr);
    FUZZ_CHECK(same_response(*response, outcome{value{text}}));
  }

  const std::int32_t code = static_cast<std::int32_t>(text.size()) - 32768;
  std::string fault_doc;
  xmlrpc::write_fault(fault_doc, code, text);
  const auto parsed = xmlrpc::parse_response(fault_doc);
  const outcome* response = accepted(parsed);
  FUZZ_CHECK(response != nullptr);
  const fault* f = std::get_if<fault>(response);
  FUZZ_CHECK(f != nullptr);
  FUZZ_CHECK(f->code() == code);
  FUZZ_CHECK((f->message() == text) == writable);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view doc(reinterpret_cast<const char*>(data), size);
  check_documents(doc);
  check_text(doc);
  return 0;
}
