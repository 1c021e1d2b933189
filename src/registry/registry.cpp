#include <rapidrpc/registry.hpp>

#include "registry/method_docs.hpp"
#include "registry/pool.hpp"

#include <rapidrpc/xmlrpc.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

namespace rapidrpc {

// ---- responder ---------------------------------------------------------------

struct responder::state {
  boost::asio::any_io_executor loop;
  completion done;
  std::atomic<bool> replied{false};

  void deliver(outcome o) {
    if (replied.exchange(true)) return;
    boost::asio::post(loop,
                      [done = std::move(done), o = std::move(o)]() mutable { done(std::move(o)); });
  }

  ~state() {
    if (!replied.load()) deliver(fault(fault_code::internal_error, "method did not reply"));
  }
};

responder::responder(boost::asio::any_io_executor loop, completion done)
    : state_(std::make_shared<state>()) {
  state_->loop = std::move(loop);
  state_->done = std::move(done);
}

void responder::reply(value result) const { state_->deliver(std::move(result)); }
void responder::fail(fault error) const { state_->deliver(std::move(error)); }
const boost::asio::any_io_executor& responder::loop() const noexcept { return state_->loop; }

// ---- parameter checks -------------------------------------------------------

namespace detail {

std::string param_count_message(std::size_t least, std::size_t most, std::size_t got) {
  std::string expected = least == most ? std::to_string(least)
                         : most == method::any_count
                             ? "at least " + std::to_string(least)
                             : std::to_string(least) + " to " + std::to_string(most);
  const bool one = least == 1 && (most == 1 || most == method::any_count);
  return "expected " + expected + (one ? " parameter, got " : " parameters, got ") +
         std::to_string(got);
}

void throw_param_count(std::size_t expected, std::size_t got) {
  throw fault(fault_code::invalid_params, param_count_message(expected, expected, got));
}

void throw_param_count(std::size_t least, std::size_t most, std::size_t got) {
  throw fault(fault_code::invalid_params, param_count_message(least, most, got));
}

}  // namespace detail

// ---- registry ---------------------------------------------------------------

outcome call_method(const method& m, array& params) noexcept {
  try {
    return m.run(params);
  } catch (const fault& f) {
    return f;
  } catch (...) {
    // No internal detail on the wire: the exception's text may name paths,
    // addresses or data the client must not see.
    return fault(fault_code::internal_error, "internal error");
  }
}

registry::registry() { add_system_methods(); }

void registry::add_raw(std::string name, std::function<value(const array&)> f, std::string help,
                       execution where) {
  method m;
  m.run = std::move(f);
  m.where = where == execution::async ? execution::inline_call : where;
  m.help = std::move(help);
  add_method(std::move(name), std::move(m));
}

void registry::add_method(std::string name, method m) {
  methods_.insert_or_assign(std::move(name), std::move(m));
}

bool registry::add_example(std::string_view name, std::string example, array params, value result) {
  auto it = methods_.find(name);
  if (it == methods_.end()) return false;
  it->second.examples.push_back({std::move(example), std::move(params), std::move(result)});
  return true;
}

bool registry::set_timeout(std::string_view name, std::chrono::milliseconds t) {
  auto it = methods_.find(name);
  if (it == methods_.end()) return false;
  it->second.timeout = t;
  return true;
}

bool registry::set_param_names(std::string_view name, std::vector<std::string> names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) throw std::invalid_argument("a parameter name is empty");
    for (std::size_t j = 0; j < i; ++j)
      if (names[j] == names[i])
        throw std::invalid_argument("parameter name '" + names[i] + "' repeats");
  }
  auto it = methods_.find(name);
  if (it == methods_.end()) return false;
  it->second.param_names = std::move(names);
  return true;
}

bool registry::remove(std::string_view name) {
  auto it = methods_.find(name);
  if (it == methods_.end()) return false;
  methods_.erase(it);
  return true;
}

void registry::add_reloadable(method_table methods) {
  if (!reloadable_) {
    reloadable_ = std::make_unique<detail::shared_slot<method_table>>();
    reloadable_->set(std::make_shared<const method_table>());
  }
  methods.merge(method_table(*reloadable_->get()));  // the earlier ones lose to the new
  reloadable_->set(std::make_shared<const method_table>(std::move(methods)));
}

void registry::reload(method_table methods) {
  if (!reloadable_) throw std::logic_error("registry::reload(): nothing is reloadable");
  reloadable_->set(std::make_shared<const method_table>(std::move(methods)));
}

const method* registry::find(std::string_view name) const { return lookup(name).m; }

found_method registry::lookup(std::string_view name) const {
  found_method out;
  if (reloadable_) {
    auto table = reloadable_->get();
    auto it = table->find(name);
    if (it != table->end()) {
      out.m = &it->second;
      out.keep = std::move(table);
      return out;
    }
  }
  auto it = methods_.find(name);
  if (it != methods_.end()) out.m = &it->second;
  return out;
}

std::vector<std::string> registry::names() const {
  std::vector<std::string> out;
  out.reserve(methods_.size());
  for (const auto& [name, m] : methods_) out.push_back(name);
  if (!reloadable_) return out;
  const auto table = reloadable_->get();
  const auto fixed = out.size();
  for (const auto& [name, m] : *table)
    if (!methods_.contains(name)) out.push_back(name);
  std::inplace_merge(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(fixed), out.end());
  return out;
}

namespace detail {

namespace {

// A pool method on a worker thread, counted as running (not queued) while
// it runs, after waiting since `queued`.
outcome call_counted(const method& m, array& params, metrics::pool_stats* stats,
                     std::chrono::steady_clock::time_point queued) {
  if (stats == nullptr) return call_method(m, params);
  stats->waited(std::chrono::steady_clock::now() - queued);
  stats->queued.fetch_sub(1, std::memory_order_relaxed);
  stats->busy.fetch_add(1, std::memory_order_relaxed);
  outcome o = call_method(m, params);
  stats->busy.fetch_sub(1, std::memory_order_relaxed);
  return o;
}

}  // namespace

void thread_runner::run(pool_call c) {
  std::chrono::steady_clock::time_point queued{};
  if (stats_ != nullptr) {
    stats_->queued.fetch_add(1, std::memory_order_relaxed);
    queued = std::chrono::steady_clock::now();
  }
  if (c.timeout.count() == 0) {
    boost::asio::post(threads_, [m = c.m, keep = std::move(c.keep), params = std::move(c.params),
                                 loop = std::move(c.loop), done = std::move(c.done), stats = stats_,
                                 queued]() mutable {
      outcome o = call_counted(*m, params, stats, queued);
      boost::asio::post(
          loop, [done = std::move(done), o = std::move(o)]() mutable { done(std::move(o)); });
    });
    return;
  }
  // With a deadline: the result and the timer race through one responder;
  // the first to deliver wins.
  responder reply(c.loop, std::move(c.done));
  auto timer = std::make_shared<boost::asio::steady_timer>(c.loop, c.timeout);
  timer->async_wait([reply](const boost::system::error_code& ec) {
    if (!ec) reply.fail(call_timeout());
  });
  boost::asio::post(threads_, [m = c.m, keep = std::move(c.keep), params = std::move(c.params),
                               reply, timer, stats = stats_, queued]() mutable {
    outcome o = call_counted(*m, params, stats, queued);
    if (auto* v = std::get_if<value>(&o))
      reply.reply(std::move(*v));
    else
      reply.fail(std::get<fault>(std::move(o)));
    // The timer belongs to the loop: cancel it there.
    boost::asio::post(reply.loop(), [timer] { timer->cancel(); });
  });
}

void append_call_document(std::string& out, const pool_call& c) {
  if (c.through != nullptr && !c.through->request.empty())
    out += c.through->request;
  else
    xmlrpc::write_call(out, c.name, c.params);
}

void finish_with_document(pool_call& c, std::string_view document, std::string_view unreadable) {
  std::int32_t code = 0;
  outcome read;
  bool readable = true;
  // A fault is read whole (for its code); a result only when the caller
  // wants values. In a document that reads, "<fault>" is markup only
  // where the answer is a fault: text has "<" escaped.
  if (c.through == nullptr || document.find("<fault>") != std::string_view::npos) {
    auto parsed = xmlrpc::parse_response(document);
    if (auto* o = std::get_if<outcome>(&parsed)) {
      read = std::move(*o);
    } else {
      read = fault(fault_code::internal_error, std::string(unreadable));
      readable = false;
    }
    if (const auto* f = std::get_if<fault>(&read)) code = f->code();
  }
  if (c.through == nullptr || !readable) {
    boost::asio::post(c.loop, [done = std::move(c.done), read = std::move(read)]() mutable {
      done(std::move(read));
    });
    return;
  }
  boost::asio::post(c.loop, [done = std::move(c.done), through = c.through,
                             document = std::string(document), code]() mutable {
    through->take_document(std::move(document), code);
    if (code == 0)
      done(value());
    else
      done(fault(code, {}));
  });
}

}  // namespace detail

void registry::invoke(const call_context& ctx, std::string_view name, array params,
                      std::function<void(outcome)> done) const {
  invoke(ctx, name, std::move(params), std::move(done), nullptr);
}

void registry::invoke(const call_context& ctx, std::string_view name, array params,
                      std::function<void(outcome)> done, detail::passage* through) const {
  if (authorizer_) {
    // Before the lookup, so a refused caller cannot probe which methods exist.
    std::optional<fault> refused;
    try {
      if (!authorizer_(name, ctx.peer))
        refused.emplace(fault_code::not_authorized, "not authorized");
    } catch (const fault& f) {
      refused.emplace(f);
    } catch (...) {
      refused.emplace(fault_code::internal_error, "internal error");
    }
    if (refused) {
      done(std::move(*refused));
      return;
    }
  }
  found_method m = lookup(name);
  if (!m) {
    done(fault(fault_code::method_not_found, "method not found"));
    return;
  }
  if (m->param_count) {
    auto [least, most] = *m->param_count;
    if (params.size() < least || params.size() > most) {
      done(fault(fault_code::invalid_params,
                 detail::param_count_message(least, most, params.size())));
      return;
    }
  }
  switch (m->where) {
    case execution::inline_call:
      done(call_method(*m.m, params));
      return;
    case execution::pool: {
      detail::pool_call c{m.m,
                          name,
                          std::move(params),
                          m->timeout.count() != 0 ? m->timeout : default_timeout_,
                          ctx.loop,
                          std::move(done),
                          through,
                          std::move(m.keep)};
      if (ctx.pool != nullptr && ctx.pool->runner != nullptr)
        ctx.pool->runner->run(std::move(c));
      else
        detail::thread_runner(ctx.loop).run(std::move(c));
      return;
    }
    case execution::async: {
      responder reply(ctx.loop, std::move(done));
      call_context own = ctx;
      own.timeout = m->timeout.count() != 0 ? m->timeout : default_timeout_;
      try {
        m->start(params, reply, own);
      } catch (const fault& f) {
        reply.fail(f);  // ignored if the method replied before throwing
      } catch (...) {
        reply.fail(fault(fault_code::internal_error, "internal error"));
      }
      return;
    }
  }
}

// ---- system.* ----------------------------------------------------------------

namespace {

value fault_struct(const fault& f) {
  return structure{{"faultCode", f.code()}, {"faultString", f.message()}};
}

/// Runs the entries of one system.multicall in order, each where its method
/// runs, and answers with one slot per entry: [result] or a fault struct.
/// Every step runs on the loop thread, so the state needs no lock.
class multicall_run : public std::enable_shared_from_this<multicall_run> {
 public:
  multicall_run(const registry& reg, call_context ctx, array entries,
                std::function<void(outcome)> done)
      : reg_(reg), ctx_(std::move(ctx)), entries_(std::move(entries)), done_(std::move(done)) {
    results_.reserve(entries_.size());
  }

  void step() {
    while (next_ < entries_.size()) {
      value& entry = entries_[next_++];
      auto* call = entry.get_if<structure>();
      const value* name = nullptr;
      const value* params = nullptr;
      if (call != nullptr) {
        auto n = call->find("methodName");
        auto p = call->find("params");
        if (n != call->end() && n->second.is<std::string>()) name = &n->second;
        if (p != call->end() && p->second.is<array>()) params = &p->second;
      }
      if (name == nullptr || params == nullptr) {
        results_.push_back(fault_struct(fault(
            fault_code::invalid_request,
            "a multicall entry must be a struct with methodName (string) and params (array)")));
        continue;
      }
      if (name->as<std::string>() == "system.multicall") {
        results_.push_back(
            fault_struct(fault(fault_code::invalid_request, "system.multicall may not be nested")));
        continue;
      }
      pending_ = true;
      running_ = true;
      reg_.invoke(ctx_, name->as<std::string>(),
                  std::move(entry.as<structure>()["params"].as<array>()),
                  [self = shared_from_this()](outcome o) {
                    self->store(std::move(o));
                    self->pending_ = false;
                    if (!self->running_) self->step();
                  });
      running_ = false;
      if (pending_) return;  // resumes from the completion
    }
    done_(value(std::move(results_)));
  }

 private:
  void store(outcome o) {
    if (auto* v = std::get_if<value>(&o))
      results_.push_back(array{std::move(*v)});
    else
      results_.push_back(fault_struct(std::get<fault>(o)));
  }

  const registry& reg_;
  call_context ctx_;
  array entries_;
  array results_;
  std::function<void(outcome)> done_;
  std::size_t next_ = 0;
  bool pending_ = false;
  bool running_ = false;
};

value capabilities() {
  auto cap = [](const char* url, std::int32_t version) {
    return value(structure{{"specUrl", url}, {"specVersion", version}});
  };
  return structure{
      {"faults_interop",
       cap("http://xmlrpc-epi.sourceforge.net/specs/rfc.fault_codes.php", 20010516)},
      {"introspection", cap("http://xmlrpc-c.sourceforge.net/xmlrpc-c/introspection.html", 1)},
      {"nil", cap("http://ontosys.com/xml-rpc/extensions.php", 20010516)},
      {"system.multicall", cap("http://www.xmlrpc.com/discuss/msgReader$1208", 1)},
  };
}

}  // namespace

void registry::add_system_methods() {
  add(
      "system.listMethods",
      [this]() {
        array out;
        for (auto& n : names()) out.emplace_back(std::move(n));
        return out;
      },
      "Returns the names of every method this server offers.");

  add(
      "system.methodHelp",
      [this](const std::string& name) {
        found_method m = lookup(name);
        if (!m) throw fault(fault_code::method_not_found, "method not found");
        return detail::help_with_types(*m.m);
      },
      "Returns the help text of the named method.");

  add(
      "rpc.discover", [this] { return detail::openrpc_document(*this); },
      "Returns the OpenRPC document of this service: every method with its parameters' and "
      "result's JSON Schemas.");

  add(
      "system.methodSignature",
      [this](const std::string& name) -> value {
        found_method m = lookup(name);
        if (!m) throw fault(fault_code::method_not_found, "method not found");
        // The introspection convention: "undef" when a method declares none.
        if (m->signature.empty()) return "undef";
        array sig;
        for (const auto& t : m->signature) sig.emplace_back(t);
        return array{value(std::move(sig))};
      },
      "Returns the signatures of the named method: an array of [result, params...] "
      "arrays of type names, or \"undef\".");

  add(
      "system.getCapabilities", [] { return capabilities(); },
      "Returns the protocol extensions this server supports.");

  method multicall;
  multicall.where = execution::async;
  multicall.help =
      "Runs several calls in one request: takes an array of {methodName, params} structs and "
      "returns one slot per call, [result] or a fault struct.";
  multicall.signature = {"array", "array"};
  multicall.start = [this](const array& params, responder reply, const call_context& ctx) {
    if (params.size() != 1) detail::throw_param_count(1, params.size());
    const auto* entries = params[0].get_if<array>();
    if (entries == nullptr) value_path::parameter(0).mismatch("array", params[0]);
    if (entries->size() > multicall_limit_)
      throw fault(fault_code::invalid_params,
                  "system.multicall takes at most " + std::to_string(multicall_limit_) + " calls");
    std::make_shared<multicall_run>(*this, ctx, *entries, [reply = std::move(reply)](outcome o) {
      if (auto* v = std::get_if<value>(&o))
        reply.reply(std::move(*v));
      else
        reply.fail(std::get<fault>(std::move(o)));
    })->step();
  };
  add_method("system.multicall", std::move(multicall));

  add_example("system.methodHelp", "help of system.getCapabilities", {"system.getCapabilities"},
              find("system.getCapabilities")->help);
  add_example("system.methodSignature", "signature of system.listMethods", {"system.listMethods"},
              array{array{"array"}});
  add_example("system.multicall", "one call",
              {array{structure{{"methodName", "system.methodSignature"},
                               {"params", array{"system.listMethods"}}}}},
              array{array{array{array{"array"}}}});
}

}  // namespace rapidrpc
