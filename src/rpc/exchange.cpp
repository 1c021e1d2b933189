#include "rpc/exchange.hpp"

#include "registry/pool.hpp"
#include "rpc/jsonrpc_dispatch.hpp"

#include <exception>
#include <utility>
#include <variant>

namespace rapidrpc::detail::rpc {

std::int32_t write_xml_outcome(std::string& out, const outcome& o) {
  if (const auto* f = std::get_if<fault>(&o)) {
    xmlrpc::write_fault(out, f->code(), f->message());
    return f->code();
  }
  const std::size_t mark = out.size();
  try {
    xmlrpc::write_response(out, std::get<value>(o));
    return 0;
  } catch (const std::exception&) {
    out.resize(mark);
    xmlrpc::write_fault(out, fault_code::internal_error,
                        "internal error: the result cannot be encoded");
    return fault_code::internal_error;
  }
}

std::unique_ptr<xmlrpc::parser> parser_pool::take() {
  if (free_.empty()) return std::make_unique<xmlrpc::parser>(xmlrpc::document_type::call, limits_);
  auto p = std::move(free_.back());
  free_.pop_back();
  p->reset();
  return p;
}

void parser_pool::give(std::unique_ptr<xmlrpc::parser> p, std::size_t document_bytes) noexcept {
  if (free_.size() >= keep || document_bytes > keep_document_bytes) return;
  try {
    free_.push_back(std::move(p));
  } catch (...) {  // (no room to keep it: it goes)
  }
}

void exchange::release() noexcept {
  std::string().swap(body_);
  std::string().swap(method_name_);
  std::string().swap(json_id_);
  method_ = {};
  reply_ = {};
}

void exchange::start(protocol p, std::string_view document, const call_context& ctx,
                     std::shared_ptr<reply_sink> sink) {
  begin(p);
  if (p == protocol::jsonrpc)
    start_json(document, ctx, sink);
  else
    start_xml(document, ctx, sink);
}

void exchange::begin(protocol p, bool count) {
  counting_ = count && store_ != nullptr;
  if (counting_) {
    started_ = std::chrono::steady_clock::now();
    shard_.call_started();
  }
  protocol_ = p;
  batch_ = false;
  method_ = {};
  json_id_.clear();
  clear_body();
}

std::string_view exchange::method() const noexcept { return method_; }

void exchange::keep_storage(std::string& s) {
  if (s.capacity() <= body_.capacity()) return;
  body_.swap(s);
  clear_body();
}

std::string* exchange::reply_storage() noexcept {
  const bool roomy = body_.size() >= head_room && reply_.body.data() == body_.data() + head_room &&
                     reply_.body.size() == body_.size() - head_room;
  return roomy ? &body_ : nullptr;
}

void exchange::refuse(protocol p, const fault& f, reply_sink& sink) {
  begin(p, false);  // not a call: its transport counts the refusal
  if (p == protocol::jsonrpc) return answer_error("null", f.code(), f.message(), sink);
  xmlrpc::write_fault(body_, f.code(), f.message());
  reply_ = {written(), xml_content_type, f.code()};
  deliver(sink);
}

void exchange::start_xml(std::string_view document, const call_context& ctx,
                         std::shared_ptr<reply_sink>& sink) {
  // The parser goes back to the pool before the call runs: the call may
  // complete later, or start another exchange's parse on this thread.
  if (parsers_ == nullptr) {
    own_parsers_ = std::make_unique<parser_pool>(limits_);
    parsers_ = own_parsers_.get();
  }
  auto xml = parsers_->take();
  if (!xml->parse(document)) {
    const std::int32_t code = xml->error().code;
    xmlrpc::write_fault(body_, code, xml->error().message);
    parsers_->give(std::move(xml), document.size());  // (may free it, and its error)
    reply_ = {written(), xml_content_type, code};
    return deliver(*sink);
  }
  xmlrpc::method_call& call = xml->call();
  method_name_ = call.method;
  method_ = method_name_;
  array params = std::move(call.params);
  // A runner that passes documents on may take the request's own bytes,
  // if a worker can read them as they are, and answer with its worker's
  // (take_document()).
  request = xml->read_directly() ? document : std::string_view();
  parsers_->give(std::move(xml), document.size());
  methods_.invoke(
      ctx, method_name_, std::move(params),
      [this, sink = std::move(sink)](const outcome& o) {
        if (!taken_) finish_xml(o);
        taken_ = false;
        deliver(*sink);
      },
      this);
  request = {};
}

void exchange::take_document(std::string document, std::int32_t fault) {
  clear_body();
  body_ += document;
  reply_ = {written(), xml_content_type, fault};
  taken_ = true;
}

void exchange::finish_xml(const outcome& o) {
  clear_body();
  const std::int32_t code = write_xml_outcome(body_, o);
  reply_ = {written(), xml_content_type, code};
}

void exchange::start_json(std::string_view document, const call_context& ctx,
                          std::shared_ptr<reply_sink>& sink) {
  auto parsed = jsonrpc::parse_request(document, limits_);
  if (auto* bad = std::get_if<jsonrpc::error_reply>(&parsed))
    return answer_error(bad->id, bad->code, bad->detail, *sink);
  auto& msg = std::get<jsonrpc::message>(parsed);
  if (msg.batch) {
    batch_ = true;
    method_name_ = "[batch:" + std::to_string(msg.entries.size()) + "]";
    method_ = method_name_;
    return run_batch(methods_, ctx, std::move(msg),
                     [this, sink = std::move(sink)](std::string body) {
                       body_ = std::move(body);
                       reply_ = {body_, json_content_type, 0};
                       deliver(*sink);
                     });
  }
  auto& entry = msg.entries.front();
  if (auto* bad = std::get_if<jsonrpc::error_reply>(&entry))
    return answer_error(bad->id, bad->code, bad->detail, *sink);
  auto& r = std::get<jsonrpc::request>(entry);
  auto named = bind_named(methods_, r);
  json_id_ = std::move(r.id);
  method_name_ = std::move(r.method);
  method_ = method_name_;
  if (named) {
    finish_json(*named);
    return deliver(*sink);
  }
  methods_.invoke(ctx, method_name_, std::move(r.params),
                  [this, sink = std::move(sink)](const outcome& o) {
                    finish_json(o);
                    deliver(*sink);
                  });
}

void exchange::finish_json(const outcome& o) {
  clear_body();
  std::int32_t code = 0;
  if (const auto* f = std::get_if<fault>(&o)) code = f->code();
  if (!json_id_.empty()) code = write_json_outcome(body_, json_id_, o);  // else a notification
  reply_ = {written(), json_content_type, code};
}

void exchange::answer_error(std::string_view id, std::int32_t code, std::string_view detail,
                            reply_sink& sink) {
  jsonrpc::write_error(body_, id, code, detail);
  reply_ = {written(), json_content_type, code};
  deliver(sink);
}

// Every reply goes out through here: it is counted (by the method name
// read, the protocol and how it ended), then handed to the sink.
void exchange::deliver(reply_sink& sink) {
  if (counting_) {
    const auto elapsed = std::chrono::steady_clock::now() - started_;
    const std::int32_t code = reply_.fault;
    const auto ended = code == 0                     ? metrics::outcome::ok
                       : code == fault_code::timeout ? metrics::outcome::timeout
                                                     : metrics::outcome::fault;
    if (code == fault_code::not_authorized) shard_.rejected(metrics::rejection::method_denied);
    if (code == fault_code::invalid_request) shard_.rejected(metrics::rejection::invalid_request);
    const std::size_t method = batch_ ? store_->batch_index() : store_->method_index(method_);
    shard_.call_finished(
        protocol_ == protocol::jsonrpc ? metrics::protocol::jsonrpc : metrics::protocol::xmlrpc,
        method, ended, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed));
  }
  sink.on_reply(reply_);
}

std::string_view exchange::timeout_reply(std::string& body) const {
  constexpr std::string_view message = detail::call_timeout_text;
  if (protocol_ == protocol::xmlrpc) {
    xmlrpc::write_fault(body, fault_code::timeout, message);
    return xml_content_type;
  }
  // A batch's entries time out together: the answer cannot name them all.
  std::string_view id =
      batch_ || json_id_.empty() ? std::string_view("null") : std::string_view(json_id_);
  jsonrpc::write_error(body, id, fault_code::timeout, message);
  return json_content_type;
}

}  // namespace rapidrpc::detail::rpc
