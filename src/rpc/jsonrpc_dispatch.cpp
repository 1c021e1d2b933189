#include "rpc/jsonrpc_dispatch.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

namespace rapidrpc::detail::rpc {

using jsonrpc::error_reply;
using jsonrpc::message;
using jsonrpc::request;

std::optional<fault> bind_named(const registry& methods, request& r) {
  if (!r.named) return std::nullopt;
  const found_method m = methods.lookup(r.method);
  if (!m) return std::nullopt;
  structure named = std::move(*r.named);
  r.named.reset();
  if (m->param_names.empty()) {
    if (named.empty()) return std::nullopt;  // {} is no parameters
    return fault(fault_code::invalid_params,
                 "this method takes positional parameters only (params must be an array)");
  }
  // The parameters past the least a call must give (method::param_count)
  // may be left out, as long as all those after them are too: the call
  // then has fewer, as a positional call that leaves them out does.
  const std::size_t least = m->param_count ? m->param_count->first : m->param_names.size();
  array params;
  params.reserve(m->param_names.size());
  std::size_t left_out = m->param_names.size();  // the first one left out
  for (std::size_t i = 0; i < m->param_names.size(); ++i) {
    const auto& name = m->param_names[i];
    auto it = named.find(name);
    if (it == named.end()) {
      if (i < least) return fault(fault_code::invalid_params, "missing parameter '" + name + "'");
      if (left_out > i) left_out = i;
      continue;
    }
    if (left_out < i)
      return fault(fault_code::invalid_params,
                   "missing parameter '" + m->param_names[left_out] + "'");
    params.push_back(std::move(it->second));
  }
  if (named.size() != params.size()) {
    // Every parameter was found, so some other member was sent: name the
    // first one, in the order sent.
    for (const auto& [sent, v] : named) {
      if (std::find(m->param_names.begin(), m->param_names.end(), sent) != m->param_names.end())
        continue;
      std::string first = sent;
      if (first.size() > 64) first = first.substr(0, 64) + "...";
      return fault(fault_code::invalid_params, "unknown parameter '" + first + "'");
    }
  }
  r.params = std::move(params);
  return std::nullopt;
}

std::int32_t write_json_outcome(std::string& out, std::string_view id, const outcome& o) {
  if (const auto* f = std::get_if<fault>(&o)) {
    jsonrpc::write_error(out, id, f->code(), f->message());
    return f->code();
  }
  try {
    jsonrpc::write_result(out, id, std::get<value>(o));  // leaves `out` as it was if it throws
    return 0;
  } catch (const std::exception&) {
    jsonrpc::write_error(out, id, fault_code::internal_error,
                         "the result cannot be encoded as JSON");
    return fault_code::internal_error;
  }
}

namespace {

// One batch in flight. Every completion runs on the loop thread, so the
// state needs no lock; the last one writes the answer.
class batch_run : public std::enable_shared_from_this<batch_run> {
 public:
  batch_run(message batch, std::function<void(std::string)> done)
      : entries_(std::move(batch.entries)), done_(std::move(done)) {
    slots_.resize(entries_.size());
  }

  void start(const registry& methods, const call_context& ctx) {
    // Counted from one so that entries completing inline cannot finish the
    // batch before every entry has been started.
    pending_ = 1;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      auto* r = std::get_if<request>(&entries_[i]);
      if (r == nullptr) continue;
      if (auto f = bind_named(methods, *r)) {
        slots_[i] = std::move(*f);
        continue;
      }
      ++pending_;
      methods.invoke(
          ctx, r->method, std::move(r->params),
          [self = shared_from_this(), i](outcome o) { self->complete(i, std::move(o)); });
    }
    settle();
  }

 private:
  void complete(std::size_t i, outcome o) {
    slots_[i] = std::move(o);
    settle();
  }

  void settle() {
    if (--pending_ != 0) return;
    std::string out;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (auto* bad = std::get_if<error_reply>(&entries_[i])) {
        out += out.empty() ? '[' : ',';
        jsonrpc::write_error(out, bad->id, bad->code, bad->detail);
        continue;
      }
      const auto& r = std::get<request>(entries_[i]);
      if (r.is_notification()) continue;
      out += out.empty() ? '[' : ',';
      write_json_outcome(out, r.id, slots_[i]);
    }
    if (!out.empty()) out += ']';
    auto done = std::move(done_);
    done(std::move(out));
  }

  std::vector<std::variant<request, error_reply>> entries_;
  std::vector<outcome> slots_;
  std::size_t pending_ = 0;
  std::function<void(std::string)> done_;
};

}  // namespace

void run_batch(const registry& methods, const call_context& ctx, message batch,
               std::function<void(std::string)> done) {
  std::make_shared<batch_run>(std::move(batch), std::move(done))->start(methods, ctx);
}

}  // namespace rapidrpc::detail::rpc
