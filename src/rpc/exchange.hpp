// Private: one RPC exchange, with no I/O. Given a protocol and a request
// document's bytes, it decodes the request, runs it through the registry
// (inline, on the pool or in worker processes, or async) and yields the
// reply: the body, its content type, the fault code answered and the method
// name for the log, or no body at all for JSON-RPC notifications.
//
// Every transport goes through it: the HTTP connection (which keeps I/O,
// TLS, framing, gzip and the HTTP head), the ZeroMQ endpoint, a worker
// host's link, a worker process (serve_worker) and the timeout watchdog
// (timeout_reply). None
// of them touches a codec or the registry itself (docs/design.md, "One
// request's path").
//
// Threading and lifetime: an exchange is used by one thread, the loop
// thread of the call_context it is started with, and runs one request at a
// time. Its owner keeps it alive until the reply has come (start() takes a
// reference to the owner for calls that complete later).
#pragma once

#include "metrics/metrics.hpp"
#include "registry/pool.hpp"

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/registry.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc::detail::rpc {

/// The protocol of a request document.
enum class protocol : std::uint8_t { xmlrpc, jsonrpc };

inline constexpr std::string_view xml_content_type = "text/xml";
inline constexpr std::string_view json_content_type = "application/json";

/// What a request is answered with; the views last until the exchange's next
/// request.
struct reply {
  std::string_view body;          ///< empty: nothing to send (notifications only)
  std::string_view content_type;  ///< xml_content_type or json_content_type
  std::int32_t fault = 0;         ///< the fault code answered; 0 for a result
};

/// Hears the replies of an exchange.
class reply_sink {
 public:
  /// Called once per exchange::start(), on the loop thread; before start()
  /// returns when nothing ran elsewhere.
  virtual void on_reply(const reply& r) = 0;

 protected:
  ~reply_sink() = default;
};

/// XML-RPC call parsers (each with its expat parser) for the exchanges of
/// one thread. A request's document is parsed whole, synchronously, within
/// exchange::start(): a parser is taken for that parse and given back
/// before the call runs, so one or two serve all the exchanges of a loop
/// however many connections it holds (an exchange holding its own would
/// keep ~10 KiB per idle connection). Used by one thread.
class parser_pool {
 public:
  /// Parsers reading documents within `lim`.
  explicit parser_pool(const limits& lim) noexcept : limits_(lim) {}

  /// A parser, reset for a new document.
  std::unique_ptr<xmlrpc::parser> take();
  /// Gives back a parser taken from this pool, which read a document of
  /// `document_bytes`: kept unless `keep` are, or unless the document was
  /// over `keep_document_bytes` (a parser keeps the buffer its largest
  /// document needed, and a pool lives as long as its loop).
  void give(std::unique_ptr<xmlrpc::parser> p, std::size_t document_bytes) noexcept;
  /// How many parsers the pool keeps now.
  [[nodiscard]] std::size_t kept() const noexcept { return free_.size(); }

 private:
  static constexpr std::size_t keep = 4;
  static constexpr std::size_t keep_document_bytes = 64 * 1024;
  limits limits_;
  std::vector<std::unique_ptr<xmlrpc::parser>> free_;
};

class exchange final : private passage {
 public:
  /// Reads the documents within `lim` (its document limits: limits.hpp).
  exchange(const registry& methods, const limits& lim) noexcept : methods_(methods), limits_(lim) {}

  /// Parses XML-RPC documents with parsers of `pool` (its loop's; it
  /// outlives the exchange, and reads documents within the same limits)
  /// rather than with one of its own.
  void share_parsers(parser_pool& pool) noexcept { parsers_ = &pool; }

  /// Frees the memory kept from past requests (reply body, method name),
  /// between requests: for a connection gone idle.
  void release() noexcept;

  /// Counts the calls of this exchange into `shard` (its owner's thread's),
  /// by the method names of `store`; both outlive the exchange. Without
  /// this, nothing is counted.
  void count_into(const metrics::store& store, metrics::shard shard) noexcept {
    store_ = &store;
    shard_ = shard;
  }

  /// Runs the request in `document` (which need not outlive the call) and
  /// hands its reply to `sink` exactly once, on ctx.loop. `sink` is kept
  /// alive until then.
  void start(protocol p, std::string_view document, const call_context& ctx,
             std::shared_ptr<reply_sink> sink);

  /// Answers a request with `f` without reading it (a peer refused before
  /// its request is looked at): hands the reply to `sink` before returning.
  void refuse(protocol p, const fault& f, reply_sink& sink);

  /// The request's method name for the log ("[batch:N]" for a JSON-RPC
  /// batch; empty if none was read), valid until the next start().
  std::string_view method() const noexcept;

  /// Bytes left free in front of a reply's body in the exchange's storage.
  static constexpr std::size_t head_room = 512;
  /// The storage of the reply being handed to the sink, which the sink may
  /// take within on_reply() (swapping in a string of its own): the body
  /// ends it, with at least head_room bytes in front, so that a transport
  /// writes its head there rather than copy a large body behind a head.
  /// Null if this reply's body has no such room.
  std::string* reply_storage() noexcept;
  /// Takes back storage a transport took with reply_storage() once it is
  /// sent (its contents no longer needed) if it is larger than what the
  /// exchange holds now, so that the next large reply is written without
  /// growing a buffer again; `s` gets the exchange's in exchange. Between
  /// replies only (not within start()).
  void keep_storage(std::string& s);

  /// Writes into `body` the reply the request in progress gets if its call
  /// runs past its timeout (fault_code::timeout), for the watchdog to
  /// prepare; returns its content type.
  std::string_view timeout_reply(std::string& body) const;

 private:
  void begin(protocol p, bool count = true);
  void start_xml(std::string_view document, const call_context& ctx,
                 std::shared_ptr<reply_sink>& sink);
  void start_json(std::string_view document, const call_context& ctx,
                  std::shared_ptr<reply_sink>& sink);
  void finish_xml(const outcome& o);
  /// passage: the answer of an XML-RPC request's pool call, as its worker
  /// wrote it, becomes the reply as it is.
  void take_document(std::string document, std::int32_t fault) override;
  void finish_json(const outcome& o);
  void answer_error(std::string_view id, std::int32_t code, std::string_view detail,
                    reply_sink& sink);
  /// Empties the reply storage but for its head room (whose bytes are never
  /// read: shrinking to it writes nothing, once the storage has it).
  void clear_body() {
    if (body_.size() >= head_room)
      body_.resize(head_room);
    else
      body_.assign(head_room, ' ');
  }
  /// What was written into the reply storage after its head room.
  std::string_view written() const noexcept { return std::string_view(body_).substr(head_room); }
  void deliver(reply_sink& sink);

  const registry& methods_;
  limits limits_;
  parser_pool* parsers_ = nullptr;            // own_parsers_ without share_parsers()
  std::unique_ptr<parser_pool> own_parsers_;  // made on the first XML-RPC request

  protocol protocol_ = protocol::xmlrpc;
  bool batch_ = false;
  std::string_view method_;  // method_name_ once read
  std::string method_name_;  // the call's, or "[batch:N]"
  std::string json_id_;      // JSON text; empty: a notification
  std::string body_;
  reply reply_;
  bool taken_ = false;  // the reply is a worker's document (take_document())

  const metrics::store* store_ = nullptr;  // counting is off without it
  metrics::shard shard_;
  bool counting_ = false;  // the request in progress is counted as a call
  std::chrono::steady_clock::time_point started_{};
};

/// Appends the methodResponse for `o` to `out` and returns the fault code
/// answered: a result that cannot be encoded becomes an internal error.
std::int32_t write_xml_outcome(std::string& out, const outcome& o);

}  // namespace rapidrpc::detail::rpc
