#include <rapidrpc/registry.hpp>

#include "registry/pool.hpp"

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/describe/class.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rapidrpc {
namespace {

// Runs calls the way a server loop does: invoke() on this thread, pool
// methods on a real thread pool, completions back on the io_context.
class RegistryTest : public ::testing::Test {
 protected:
  outcome call(std::string_view name, array params) {
    std::optional<outcome> result;
    std::thread::id completed_on;
    reg.invoke(ctx(), name, std::move(params), [&](outcome o) {
      completed_on = std::this_thread::get_id();
      result = std::move(o);
    });
    io.restart();
    auto guard = boost::asio::make_work_guard(io);  // a pool result may still be on its way
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!result && std::chrono::steady_clock::now() < deadline)
      io.run_one_for(std::chrono::milliseconds(100));
    if (!result) {
      ADD_FAILURE() << name << " never completed";
      return fault(0, "never completed");
    }
    EXPECT_EQ(completed_on, std::this_thread::get_id()) << "completion must run on the loop thread";
    return std::move(*result);
  }
  value ok(std::string_view name, array params = {}) {
    auto o = call(name, std::move(params));
    if (auto* f = std::get_if<fault>(&o)) ADD_FAILURE() << name << " faulted: " << f->what();
    return std::get_if<value>(&o) ? std::get<value>(o) : value{};
  }
  fault failed(std::string_view name, array params = {}) {
    auto o = call(name, std::move(params));
    if (auto* f = std::get_if<fault>(&o)) return *f;
    ADD_FAILURE() << name << " did not fault";
    return fault(0, "");
  }
  call_context ctx() { return {io.get_executor(), nullptr, &on_pool}; }

  boost::asio::io_context io;
  // Before the pool, so it outlives the pool's threads: a pool call past its
  // timeout may still be running its method when its test ends.
  registry reg;
  boost::asio::thread_pool pool{2};
  detail::thread_runner threads{pool.get_executor()};
  detail::pool_target on_pool{&threads};
};

TEST_F(RegistryTest, TypedMethodGetsConvertedArguments) {
  reg.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
  EXPECT_EQ(ok("add", {2, 3}), value(5));
}

TEST_F(RegistryTest, WrongArgumentCountIsInvalidParams) {
  reg.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
  EXPECT_EQ(failed("add", {1}).code(), fault_code::invalid_params);
  EXPECT_EQ(failed("add", {1, 2, 3}).code(), fault_code::invalid_params);
}

// A method's declared parameter count is checked before it is sent
// anywhere: a pool method with the wrong count never reaches the pool.
TEST_F(RegistryTest, DeclaredParamCountIsCheckedBeforeTheMethodRuns) {
  std::atomic<int> runs{0};
  auto raw = [&](std::size_t least, std::size_t most) {
    method m;
    m.where = execution::pool;
    m.run = [&](const array& params) -> value {
      ++runs;
      return static_cast<std::int32_t>(params.size());
    };
    m.param_count.emplace(least, most);
    return m;
  };
  reg.add_method("two", raw(2, 2));
  reg.add_method("one_to_three", raw(1, 3));
  reg.add_method("at_least_one", raw(1, method::any_count));
  EXPECT_EQ(failed("two", {1}).message(), "expected 2 parameters, got 1");
  EXPECT_EQ(failed("two", {1, 2, 3}).message(), "expected 2 parameters, got 3");
  EXPECT_EQ(failed("one_to_three", {}).message(), "expected 1 to 3 parameters, got 0");
  EXPECT_EQ(failed("one_to_three", {1, 2, 3, 4}).code(), fault_code::invalid_params);
  EXPECT_EQ(failed("at_least_one", {}).message(), "expected at least 1 parameter, got 0");
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(ok("two", {1, 2}), value(2));
  EXPECT_EQ(ok("one_to_three", {1, 2, 3}), value(3));
  EXPECT_EQ(ok("at_least_one", {1, 2, 3, 4, 5}), value(5));
  EXPECT_EQ(runs.load(), 3);
}

TEST_F(RegistryTest, WrongArgumentTypeIsInvalidParamsNamingTheParameter) {
  reg.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
  fault f = failed("add", {1, "2"});
  EXPECT_EQ(f.code(), fault_code::invalid_params);
  EXPECT_EQ(f.message(), "parameter 2: expected int, got string");
}

TEST_F(RegistryTest, HandlerDoesNotRunWhenArgumentsAreWrong) {
  int runs = 0;
  reg.add("f", [&](std::string) { ++runs; });
  failed("f", {1});
  EXPECT_EQ(runs, 0);
}

TEST_F(RegistryTest, NumericWidening) {
  reg.add("d", [](double x) { return x * 2; });
  reg.add("l", [](std::int64_t x) { return x + 1; });
  EXPECT_EQ(ok("d", {2}), value(4.0));
  EXPECT_EQ(ok("d", {std::int64_t{3}}), value(6.0));
  EXPECT_EQ(ok("l", {1}), value(std::int64_t{2}));
  EXPECT_EQ(failed("l", {1.5}).code(), fault_code::invalid_params);
}

TEST_F(RegistryTest, VoidResultIsNil) {
  reg.add("v", [] {});
  EXPECT_EQ(ok("v"), value(nil));
}

TEST_F(RegistryTest, HandlerFaultKeepsItsCodeAndMessage) {
  reg.add("f", []() -> int { throw fault(42, "the answer"); });
  fault f = failed("f");
  EXPECT_EQ(f.code(), 42);
  EXPECT_EQ(f.message(), "the answer");
}

TEST_F(RegistryTest, OtherExceptionsBecomeGenericInternalError) {
  reg.add("f", []() -> int { throw std::runtime_error("/secret/path: db password wrong"); });
  fault f = failed("f");
  EXPECT_EQ(f.code(), fault_code::internal_error);
  EXPECT_EQ(f.message().find("secret"), std::string::npos);
}

TEST_F(RegistryTest, UnknownMethodIsMethodNotFound) {
  EXPECT_EQ(failed("nope").code(), fault_code::method_not_found);
}

TEST_F(RegistryTest, PoolMethodRunsOffTheLoopThreadAndCompletesOnIt) {
  std::thread::id ran_on;
  reg.add(
      "heavy",
      [&] {
        ran_on = std::this_thread::get_id();
        return 1;
      },
      "", execution::pool);
  EXPECT_EQ(ok("heavy"), value(1));
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST_F(RegistryTest, PoolMethodFaultsAreDelivered) {
  reg.add(
      "heavy", []() -> int { throw fault(7, "no"); }, "", execution::pool);
  EXPECT_EQ(failed("heavy").code(), 7);
}

TEST_F(RegistryTest, AsyncMethodRepliesLater) {
  reg.add_async<std::int32_t>("later", [](responder reply, std::int32_t x) {
    auto t =
        std::make_shared<boost::asio::steady_timer>(reply.loop(), std::chrono::milliseconds(10));
    t->async_wait([t, reply, x](auto) { reply.reply(x * 10); });
  });
  EXPECT_EQ(ok("later", {4}), value(40));
}

TEST_F(RegistryTest, AsyncMethodArgumentErrorsAreInvalidParams) {
  reg.add_async<bool>("later", [](responder reply, double) { reply.reply(true); });
  EXPECT_EQ(failed("later", {"x"}).code(), fault_code::invalid_params);
  EXPECT_EQ(failed("later", {}).code(), fault_code::invalid_params);
}

TEST_F(RegistryTest, AsyncMethodThatDropsItsResponderFailsTheCall) {
  reg.add_async<bool>("lost", [](responder) {});
  EXPECT_EQ(failed("lost").code(), fault_code::internal_error);
}

TEST_F(RegistryTest, FirstReplyWins) {
  reg.add_async<std::int32_t>("twice", [](responder reply) {
    reply.reply(1);
    reply.reply(2);
    reply.fail(fault(3, "x"));
  });
  EXPECT_EQ(ok("twice"), value(1));
}

TEST_F(RegistryTest, ListMethodsIncludesSystemAndUserMethods) {
  reg.add("a.b", [] { return 1; });
  value names = ok("system.listMethods");
  const auto& list = names.as<array>();
  for (const char* n : {"a.b", "system.listMethods", "system.methodHelp", "system.methodSignature",
                        "system.multicall", "system.getCapabilities"})
    EXPECT_NE(std::find(list.begin(), list.end(), value(n)), list.end()) << n;
}

TEST_F(RegistryTest, MethodHelpAndSignature) {
  reg.add(
      "add", [](std::int32_t a, std::int32_t b) { return a + b; }, "Adds two ints.");
  reg.add("mixed", [](std::string, double, bytes, value) { return array{}; });
  reg.add_raw("raw", [](const array& p) { return value(static_cast<std::int32_t>(p.size())); });
  EXPECT_EQ(ok("system.methodHelp", {"add"}), value("Adds two ints."));
  EXPECT_EQ(ok("system.methodSignature", {"add"}), value(array{array{"int", "int", "int"}}));
  EXPECT_EQ(ok("system.methodSignature", {"mixed"}),
            value(array{array{"array", "string", "double", "base64", "any"}}));
  EXPECT_EQ(ok("system.methodSignature", {"raw"}), value("undef"));
  EXPECT_EQ(failed("system.methodHelp", {"nope"}).code(), fault_code::method_not_found);
}

}  // namespace
}  // namespace rapidrpc

namespace typed_test {
struct point {
  std::int32_t x = 0;
  std::int32_t y = 0;
};
BOOST_DESCRIBE_STRUCT(point, (), (x, y))
}  // namespace typed_test

namespace rapidrpc {
namespace {

using typed_test::point;

TEST_F(RegistryTest, TypedMethodsTakeAndGiveContainersAndDescribedStructs) {
  reg.add("centre", [](const std::vector<point>& ps) {
    point c;
    for (const auto& p : ps) c.x += p.x, c.y += p.y;
    const auto n = static_cast<std::int32_t>(ps.size());
    return std::map<std::string, point>{{"centre", {c.x / n, c.y / n}}};
  });
  const value ps = array{structure{{"x", 0}, {"y", 0}}, structure{{"x", 4}, {"y", 2}}};
  EXPECT_EQ(ok("centre", {ps}), value(structure{{"centre", structure{{"x", 2}, {"y", 1}}}}));
  EXPECT_EQ(ok("system.methodSignature", {"centre"}), value(array{array{"struct", "array"}}));
  fault f = failed("centre", {array{structure{{"x", 0}, {"y", 0}}, structure{{"x", 4}}}});
  EXPECT_EQ(f.code(), fault_code::invalid_params);
  EXPECT_EQ(f.message(), "parameter 1, element 1: member \"y\" is missing");
}

TEST_F(RegistryTest, HelpShowsTheMembersWhereTheSignatureDoesNot) {
  reg.add(
      "centre", [](const std::vector<point>&, std::optional<bool>) { return point{}; }, "Centre.");
  reg.set_param_names("centre", {"points", "round"});
  EXPECT_EQ(ok("system.methodHelp", {"centre"}),
            value("Centre.\n\nParameters: points: [{x: int, y: int}], round: boolean or nil\n"
                  "Result: {x: int, y: int}"));
  reg.add(
      "add", [](std::int32_t a, std::int32_t b) { return a + b; }, "Adds.");
  EXPECT_EQ(ok("system.methodHelp", {"add"}), value("Adds."));
}

TEST_F(RegistryTest, RpcDiscoverDescribesEveryOtherMethod) {
  reg.add(
      "centre", [](const std::vector<point>&) { return point{}; }, "Centre.\nMore.");
  const value doc = ok("rpc.discover");
  const auto& methods = doc.as<structure>().at("methods").as<array>();
  const value* centre = nullptr;
  for (const auto& m : methods) {
    const auto& name = m.as<structure>().at("name").as<std::string>();
    EXPECT_NE(name, "rpc.discover");
    if (name == "centre") centre = &m;
  }
  ASSERT_NE(centre, nullptr);
  const auto& c = centre->as<structure>();
  EXPECT_EQ(c.at("summary"), value("Centre."));
  EXPECT_EQ(c.at("paramStructure"), value("by-position"));
  const value point_schema = structure{
      {"type", "object"},
      {"properties",
       structure{
           {"x", structure{{"type", "integer"}, {"minimum", INT32_MIN}, {"maximum", INT32_MAX}}},
           {"y", structure{{"type", "integer"}, {"minimum", INT32_MIN}, {"maximum", INT32_MAX}}}}},
      {"required", array{"x", "y"}}};
  EXPECT_EQ(
      c.at("params"),
      value(array{structure{{"name", "param1"},
                            {"required", true},
                            {"schema", structure{{"type", "array"}, {"items", point_schema}}}}}));
  EXPECT_EQ(c.at("result"), value(structure{{"name", "result"}, {"schema", point_schema}}));
}

TEST_F(RegistryTest, TrailingOptionalParametersMayBeLeftOut) {
  reg.add("greet", [](std::string name, std::optional<std::string> greeting,
                      std::optional<std::int32_t> times) {
    std::string out;
    for (std::int32_t i = 0; i < times.value_or(1); ++i)
      out += greeting.value_or("hello") + " " + name;
    return out;
  });
  EXPECT_EQ(ok("greet", {"ann"}), value("hello ann"));
  EXPECT_EQ(ok("greet", {"ann", "hi"}), value("hi ann"));
  EXPECT_EQ(ok("greet", {"ann", nil, 2}), value("hello annhello ann"));
  EXPECT_EQ(failed("greet", {}).message(), "expected 1 to 3 parameters, got 0");
  EXPECT_EQ(failed("greet", {"a", "b", 1, 2}).message(), "expected 1 to 3 parameters, got 4");
  EXPECT_EQ(failed("greet", {"ann", 5}).message(), "parameter 2: expected string, got int");
  EXPECT_EQ(ok("system.methodSignature", {"greet"}),
            value(array{array{"string", "string", "string", "int"}}));
  // An optional before a required parameter is not left out: the count is exact.
  reg.add("mid", [](std::optional<std::int32_t>, std::int32_t) { return 0; });
  EXPECT_EQ(failed("mid", {1}).message(), "expected 2 parameters, got 1");
  EXPECT_EQ(ok("mid", {nil, 1}), value(0));
}

TEST_F(RegistryTest, RawMethodSeesEveryParameter) {
  reg.add_raw("count", [](const array& p) { return value(static_cast<std::int32_t>(p.size())); });
  EXPECT_EQ(ok("count", {1, "x", nil}), value(3));
}

TEST_F(RegistryTest, CapabilitiesNameFaultsInterop) {
  value caps = ok("system.getCapabilities");
  EXPECT_TRUE(caps.as<structure>().contains("faults_interop"));
}

value entry(std::string name, array params) {
  return structure{{"methodName", std::move(name)}, {"params", std::move(params)}};
}

TEST_F(RegistryTest, MulticallReturnsOneSlotPerCallInOrder) {
  reg.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
  reg.add(
      "heavy", [](std::int32_t a) { return a * 2; }, "", execution::pool);
  reg.add_async<std::int32_t>("later", [](responder r, std::int32_t a) { r.reply(a + 100); });
  value out =
      ok("system.multicall", {array{entry("add", {1, 2}), entry("nope", {}), entry("heavy", {5}),
                                    entry("add", {1}), entry("later", {1}), value(7)}});
  const auto& slots = out.as<array>();
  ASSERT_EQ(slots.size(), 6u);
  EXPECT_EQ(slots[0], value(array{3}));
  EXPECT_EQ(slots[1].as<structure>().at("faultCode"), value(fault_code::method_not_found));
  EXPECT_EQ(slots[2], value(array{10}));
  EXPECT_EQ(slots[3].as<structure>().at("faultCode"), value(fault_code::invalid_params));
  EXPECT_EQ(slots[4], value(array{101}));
  EXPECT_EQ(slots[5].as<structure>().at("faultCode"), value(fault_code::invalid_request));
}

TEST_F(RegistryTest, MulticallMayNotNest) {
  value out = ok("system.multicall", {array{entry("system.multicall", {array{}})}});
  EXPECT_EQ(out.as<array>()[0].as<structure>().at("faultCode"), value(fault_code::invalid_request));
}

TEST_F(RegistryTest, MulticallEntryCapIsEnforcedAtTheBoundary) {
  reg.add("one", [] { return 1; });
  reg.set_multicall_limit(3);
  array three(3, entry("one", {}));
  array four(4, entry("one", {}));
  EXPECT_EQ(ok("system.multicall", {three}).as<array>().size(), 3u);
  EXPECT_EQ(failed("system.multicall", {four}).code(), fault_code::invalid_params);
}

TEST_F(RegistryTest, LongMulticallOfInlineCallsDoesNotRecurse) {
  reg.add("one", [] { return 1; });
  array many(1000, entry("one", {}));
  EXPECT_EQ(ok("system.multicall", {many}).as<array>().size(), 1000u);
}

// ---- the authorizer -------------------------------------------------------------

TEST_F(RegistryTest, AuthorizerRefusesWithNotAuthorizedAndTheMethodDoesNotRun) {
  int runs = 0;
  reg.add("secret", [&] {
    ++runs;
    return 1;
  });
  reg.add("open", [] { return 2; });
  std::vector<std::string> asked;
  reg.set_authorizer([&](std::string_view method, const call_peer*) {
    asked.emplace_back(method);
    return method != "secret";
  });
  EXPECT_EQ(failed("secret").code(), fault_code::not_authorized);
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(ok("open"), value(2));
  EXPECT_EQ(asked, (std::vector<std::string>{"secret", "open"}));
}

TEST_F(RegistryTest, AuthorizerRunsBeforeTheLookupSoUnknownNamesLookAlike) {
  reg.set_authorizer([](std::string_view, const call_peer*) { return false; });
  EXPECT_EQ(failed("no.such.method").code(), fault_code::not_authorized);
}

TEST_F(RegistryTest, AuthorizerMayRefuseWithItsOwnFault) {
  reg.add("f", [] { return 1; });
  reg.set_authorizer(
      [](std::string_view, const call_peer*) -> bool { throw fault(-32099, "go away"); });
  fault f = failed("f");
  EXPECT_EQ(f.code(), -32099);
  EXPECT_EQ(f.message(), "go away");
  reg.set_authorizer(
      [](std::string_view, const call_peer*) -> bool { throw std::runtime_error("/etc/x"); });
  f = failed("f");
  EXPECT_EQ(f.code(), fault_code::internal_error);
  EXPECT_EQ(f.message(), "internal error");  // no exception text on the wire
}

TEST_F(RegistryTest, AuthorizerSeesThePeer) {
  call_peer peer{boost::asio::ip::make_address("192.0.2.7"), 4242, "alice"};
  reg.add("whoami", [] { return 0; });
  std::string seen;
  reg.set_authorizer([&](std::string_view, const call_peer* p) {
    seen = p == nullptr ? "none"
                        : p->address.to_string() + ":" + std::to_string(p->port) + "/" +
                              std::string(p->user);
    return true;
  });
  std::optional<outcome> result;
  call_context c = ctx();
  c.peer = &peer;
  reg.invoke(c, "whoami", {}, [&](outcome o) { result = std::move(o); });
  ASSERT_TRUE(result);
  EXPECT_EQ(seen, "192.0.2.7:4242/alice");
  ok("whoami");
  EXPECT_EQ(seen, "none");
}

TEST_F(RegistryTest, AuthorizerChecksEveryMulticallEntry) {
  reg.add("add", [](std::int32_t a, std::int32_t b) { return a + b; });
  reg.add(
      "heavy", [](std::int32_t a) { return a * 2; }, "", execution::pool);
  std::vector<std::string> asked;
  reg.set_authorizer([&](std::string_view method, const call_peer*) {
    asked.emplace_back(method);
    return method != "heavy";
  });
  value out = ok("system.multicall",
                 {array{entry("add", {1, 2}), entry("heavy", {5}), entry("add", {2, 2})}});
  const auto& slots = out.as<array>();
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots[0], value(array{3}));
  EXPECT_EQ(slots[1].as<structure>().at("faultCode"), value(fault_code::not_authorized));
  EXPECT_EQ(slots[2], value(array{4}));
  EXPECT_EQ(asked, (std::vector<std::string>{"system.multicall", "add", "heavy", "add"}));
}

TEST_F(RegistryTest, AuthorizerCanRefuseMulticallItself) {
  reg.set_authorizer(
      [](std::string_view method, const call_peer*) { return method != "system.multicall"; });
  EXPECT_EQ(failed("system.multicall", {array{}}).code(), fault_code::not_authorized);
}

// ---- reloadable methods -----------------------------------------------------

method returning(std::string text, execution where = execution::inline_call) {
  method m;
  m.run = [text](const array&) { return value(text); };
  m.where = where;
  m.help = text;
  return m;
}

method_table table_of(std::initializer_list<std::pair<const char*, std::string>> entries,
                      execution where = execution::inline_call) {
  method_table t;
  for (const auto& [name, text] : entries) t.emplace(name, returning(text, where));
  return t;
}

TEST_F(RegistryTest, ReloadReplacesEveryReloadableMethodAtOnce) {
  reg.add_reloadable(table_of({{"version", "1"}, {"gone", "here"}}));
  EXPECT_EQ(ok("version").as<std::string>(), "1");
  EXPECT_EQ(ok("gone").as<std::string>(), "here");
  reg.reload(table_of({{"version", "2"}, {"added", "new"}}));
  EXPECT_EQ(ok("version").as<std::string>(), "2");
  EXPECT_EQ(ok("added").as<std::string>(), "new");
  EXPECT_EQ(failed("gone").code(), fault_code::method_not_found);
  EXPECT_EQ(failed("system.methodHelp", {"gone"}).code(), fault_code::method_not_found);
  EXPECT_EQ(ok("system.methodHelp", {"added"}).as<std::string>(), "new");
  // system.listMethods: both kinds, in one order.
  std::vector<std::string> listed;
  const value all = ok("system.listMethods");
  for (const auto& v : all.as<array>()) listed.push_back(v.as<std::string>());
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
  EXPECT_NE(std::find(listed.begin(), listed.end(), "added"), listed.end());
  EXPECT_NE(std::find(listed.begin(), listed.end(), "system.multicall"), listed.end());
  EXPECT_EQ(std::find(listed.begin(), listed.end(), "gone"), listed.end());
  EXPECT_EQ(reg.names(), listed);
}

TEST_F(RegistryTest, AReloadableMethodHidesAnotherOfTheSameName) {
  reg.add("same", [] { return std::string("fixed"); });
  reg.add_reloadable(table_of({{"same", "reloadable"}}));
  EXPECT_EQ(ok("same").as<std::string>(), "reloadable");
  const auto names = reg.names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "same"), 1);
  reg.reload({});
  EXPECT_EQ(ok("same").as<std::string>(), "fixed");
}

TEST_F(RegistryTest, AMethodLookedUpBeforeAReloadStaysAsItWas) {
  reg.add_reloadable(table_of({{"version", "1"}}));
  found_method held = reg.lookup("version");
  ASSERT_TRUE(held);
  reg.reload(table_of({{"version", "2"}}));
  reg.reload({});
  EXPECT_EQ(held->help, "1");
  array none;
  EXPECT_EQ(std::get<value>(call_method(*held.m, none)).as<std::string>(), "1");
  EXPECT_FALSE(reg.lookup("version"));
}

TEST_F(RegistryTest, AddingReloadableMethodsTwiceKeepsBothTheLaterWinning) {
  reg.add_reloadable(table_of({{"a", "1"}, {"b", "1"}}));
  reg.add_reloadable(table_of({{"b", "2"}, {"c", "2"}}));
  EXPECT_EQ(ok("a").as<std::string>(), "1");
  EXPECT_EQ(ok("b").as<std::string>(), "2");
  EXPECT_EQ(ok("c").as<std::string>(), "2");
}

TEST_F(RegistryTest, ReloadWithoutReloadableMethodsIsRefused) {
  EXPECT_THROW(reg.reload({}), std::logic_error);
}

// Loops look methods up and run pool calls while another thread reloads:
// no call sees a table freed under it (the sanitizer builds run this).
TEST_F(RegistryTest, CallsRunWhileTheMethodsAreReloaded) {
  reg.add_reloadable(table_of({{"m", "0"}}, execution::pool));
  std::atomic<bool> done{false};
  std::thread reloader([&] {
    for (int i = 1; !done.load(); ++i)
      reg.reload(table_of({{"m", std::to_string(i)}}, execution::pool));
  });
  std::vector<std::thread> loops;
  std::atomic<int> answered{0};
  // They outlive the pool's last post to them (pool.join() below).
  std::array<boost::asio::io_context, 2> contexts;
  for (std::size_t t = 0; t < contexts.size(); ++t) {
    loops.emplace_back([&, t] {
      auto& loop = contexts[t];
      auto guard = boost::asio::make_work_guard(loop);
      const call_context c{loop.get_executor(), nullptr, &on_pool};
      int mine = 0;
      for (int i = 0; i < 2000; ++i) {
        reg.invoke(c, "m", {}, [&](outcome o) {
          ++mine;
          if (std::holds_alternative<value>(o) && !std::get<value>(o).as<std::string>().empty())
            ++answered;
        });
        if (const auto m = reg.lookup("system.methodHelp")) (void)m->help.size();
        loop.poll();
      }
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (mine < 2000 && std::chrono::steady_clock::now() < deadline)
        loop.run_one_for(std::chrono::milliseconds(100));
    });
  }
  for (auto& l : loops) l.join();
  done = true;
  reloader.join();
  pool.join();
  EXPECT_EQ(answered.load(), 4000);
}

}  // namespace
}  // namespace rapidrpc
