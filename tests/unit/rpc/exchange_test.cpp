// The RPC exchange with bytes in and a reply out: no socket, a registry and
// an io_context standing in for a connection's loop.
#include "rpc/exchange.hpp"

#include "paths.hpp"
#include "registry/pool.hpp"
#include "worker/frame.hpp"

#include <rapidrpc/worker.hpp>

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rapidrpc::detail::rpc {
namespace {

namespace fs = std::filesystem;

// What a sink heard, copied out of the exchange.
struct heard {
  std::string body;
  std::string content_type;
  std::int32_t fault = 0;
  std::thread::id thread;
};

class recorder final : public reply_sink {
 public:
  void on_reply(const reply& r) override {
    ++count;
    last = heard{std::string(r.body), std::string(r.content_type), r.fault,
                 std::this_thread::get_id()};
  }
  int count = 0;
  std::optional<heard> last;
};

std::int32_t sum_of(const array& params) {
  std::int32_t total = 0;
  for (const auto& p : params) total += p.as<std::int32_t>();
  return total;
}

// The methods of the JSON-RPC specification's examples, and one of each
// kind the exchange must run.
class ExchangeTest : public ::testing::Test {
 protected:
  ExchangeTest() {
    reg.add("subtract",
            [](std::int32_t minuend, std::int32_t subtrahend) { return minuend - subtrahend; });
    reg.set_param_names("subtract", {"minuend", "subtrahend"});
    reg.add_raw(
        "sum", [](const array& p) { return value(sum_of(p)); }, "", execution::pool);
    reg.add_raw("update", [](const array&) { return value(); });
    reg.add_raw("notify_hello", [](const array&) { return value(); });
    reg.add_raw("notify_sum", [](const array&) { return value(); });
    reg.add("get_data", [] { return array{value("hello"), value(std::int32_t{5})}; });
    reg.add("echo", [](value v) { return v; });
    reg.add("fail", []() -> std::int32_t { throw fault(7, "no luck"); });
    reg.add("not_a_number", [] { return std::numeric_limits<double>::quiet_NaN(); });
    reg.add(
        "on_pool", [] { return true; }, "", execution::pool);
    reg.add_async<std::int32_t>("later", [](responder reply, std::int32_t v) {
      auto timer =
          std::make_shared<boost::asio::steady_timer>(reply.loop(), std::chrono::milliseconds(20));
      timer->async_wait([reply, v, timer](const boost::system::error_code&) { reply.reply(v); });
    });
    reg.add(
        "stuck",
        [] {
          std::this_thread::sleep_for(std::chrono::milliseconds(600));
          return 0;
        },
        "", execution::pool);
    reg.set_timeout("stuck", std::chrono::milliseconds(100));
  }

  call_context context() { return {io.get_executor(), nullptr, &on_pool}; }

  // Runs one request and waits (up to 10 s) for its reply.
  heard run(protocol p, std::string_view document) {
    auto sink = std::make_shared<recorder>();
    ex.start(p, document, context(), sink);
    io.restart();
    auto guard = boost::asio::make_work_guard(io);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sink->count == 0 && std::chrono::steady_clock::now() < deadline)
      io.run_one_for(std::chrono::milliseconds(50));
    guard.reset();
    io.poll();  // nothing else may answer
    EXPECT_EQ(sink->count, 1) << document;
    return sink->last.value_or(heard{});
  }
  heard json(std::string_view text) { return run(protocol::jsonrpc, text); }
  heard xml(std::string_view text) { return run(protocol::xmlrpc, text); }

  static std::string call_doc(std::string_view method, std::string_view params_xml = "") {
    return "<?xml version=\"1.0\"?><methodCall><methodName>" + std::string(method) +
           "</methodName><params>" + std::string(params_xml) + "</params></methodCall>";
  }

  boost::asio::io_context io;
  // Before the pool, so it outlives the pool's threads: a pool call past its
  // timeout ("stuck") is still running its method when its test ends.
  registry reg;
  boost::asio::thread_pool pool{2};
  thread_runner threads{pool.get_executor()};
  pool_target on_pool{&threads};
  exchange ex{reg, limits{}};
};

TEST_F(ExchangeTest, XmlCallAnswersItsResult) {
  auto r = xml(call_doc(
      "subtract",
      "<param><value><int>42</int></value></param><param><value><i4>23</i4></value></param>"));
  EXPECT_EQ(r.content_type, xml_content_type);
  EXPECT_EQ(r.fault, 0);
  EXPECT_EQ(r.body,
            "<?xml version=\"1.0\"?>\n<methodResponse><params><param><value><int>19</int></value>"
            "</param></params></methodResponse>");
  EXPECT_EQ(ex.method(), "subtract");
}

// A sink that takes the reply's storage as a transport sending it in place
// does: the body must end the storage, head_room bytes in.
class taker final : public reply_sink {
 public:
  explicit taker(exchange& e) : ex(e) {}
  void on_reply(const reply& r) override {
    body = std::string(r.body);
    std::string* storage = ex.reply_storage();
    if (storage == nullptr) return;
    room_ok = storage->size() == exchange::head_room + r.body.size() &&
              storage->compare(exchange::head_room, std::string::npos, r.body) == 0;
    taken.swap(*storage);
  }
  exchange& ex;
  std::string body;
  std::string taken;
  bool room_ok = false;
};

TEST_F(ExchangeTest, ATransportMayTakeTheReplyStorageAndGiveItBack) {
  for (auto p : {protocol::xmlrpc, protocol::jsonrpc}) {
    const std::string doc =
        p == protocol::xmlrpc
            ? call_doc("echo", "<param><value><string>" + std::string(100000, 'x') +
                                   "</string></value></param>")
            : R"({"jsonrpc":"2.0","method":"echo","params":[")" + std::string(100000, 'x') +
                  R"("],"id":1})";
    auto sink = std::make_shared<taker>(ex);
    ex.start(p, doc, context(), sink);
    ASSERT_TRUE(sink->room_ok) << sink->body.substr(0, 100);
    EXPECT_NE(sink->body.find(std::string(100000, 'x')), std::string::npos);
    // Given back once sent: the exchange keeps the larger storage, and the
    // next reply is whole.
    const std::size_t capacity = sink->taken.capacity();
    ex.keep_storage(sink->taken);
    EXPECT_LT(sink->taken.capacity(), capacity);
    auto again = p == protocol::xmlrpc ? xml(call_doc("get_data"))
                                       : json(R"({"jsonrpc":"2.0","method":"get_data","id":2})");
    EXPECT_NE(again.body.find("hello"), std::string::npos) << again.body;
    EXPECT_EQ(again.body.find("xxxx"), std::string::npos) << again.body;
  }
  // A batch's reply is put together elsewhere: no room, nothing to take.
  auto sink = std::make_shared<taker>(ex);
  ex.start(protocol::jsonrpc, R"([{"jsonrpc":"2.0","method":"get_data","id":1}])", context(), sink);
  io.restart();
  io.run_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(sink->body.empty());
  EXPECT_TRUE(sink->taken.empty());
}

TEST_F(ExchangeTest, XmlFaultsCarryTheirCode) {
  auto thrown = xml(call_doc("fail"));
  EXPECT_EQ(thrown.fault, 7);
  EXPECT_NE(thrown.body.find("<name>faultString</name><value><string>no luck</string>"),
            std::string::npos)
      << thrown.body;

  auto unknown = xml(call_doc("nope"));
  EXPECT_EQ(unknown.fault, fault_code::method_not_found);

  auto bad_params = xml(call_doc("subtract", "<param><value>x</value></param>"));
  EXPECT_EQ(bad_params.fault, fault_code::invalid_params);

  auto not_xml = xml("<methodCall><methodName>x");
  EXPECT_EQ(not_xml.fault, fault_code::parse_error);
  EXPECT_EQ(ex.method(), "");  // nothing was read

  auto unencodable = xml(call_doc("not_a_number"));
  EXPECT_EQ(unencodable.fault, fault_code::internal_error);
  EXPECT_NE(unencodable.body.find("cannot be encoded"), std::string::npos) << unencodable.body;
  EXPECT_EQ(unencodable.body.find("<params>"), std::string::npos)
      << "half a response was left in: " << unencodable.body;
}

TEST_F(ExchangeTest, XmlMulticallRunsEachEntry) {
  auto r = xml(call_doc(
      "system.multicall",
      "<param><value><array><data>"
      "<value><struct><member><name>methodName</name><value>subtract</value></member>"
      "<member><name>params</name><value><array><data><value><int>5</int></value>"
      "<value><int>3</int></value></data></array></value></member></struct></value>"
      "<value><struct><member><name>methodName</name><value>fail</value></member>"
      "<member><name>params</name><value><array><data/></array></value></member></struct></value>"
      "</data></array></value></param>"));
  EXPECT_EQ(r.fault, 0);
  EXPECT_NE(r.body.find("<array><data><value><int>2</int></value></data></array>"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("<name>faultCode</name><value><int>7</int></value>"), std::string::npos)
      << r.body;
  EXPECT_EQ(ex.method(), "system.multicall");
}

TEST_F(ExchangeTest, PoolAndAsyncMethodsAnswerOnTheLoopThread) {
  for (const char* method : {"on_pool", "later"}) {
    std::string params =
        std::string(method) == "later" ? "<param><value><int>3</int></value></param>" : "";
    auto r = xml(call_doc(method, params));
    EXPECT_EQ(r.fault, 0) << method << ": " << r.body;
    EXPECT_EQ(r.thread, std::this_thread::get_id()) << method;
  }
}

TEST_F(ExchangeTest, TheParserIsReusedAcrossRequests) {
  // A bad document must not leave state behind for the next one.
  xml("<methodCall><methodName>sub");
  auto r = xml(call_doc(
      "subtract",
      "<param><value><int>1</int></value></param><param><value><int>1</int></value></param>"));
  EXPECT_EQ(r.fault, 0) << r.body;
}

// Exchanges sharing a loop's parsers: a call still running keeps its own
// method name (the log's and the metrics') while other exchanges parse, and
// a released exchange still answers its next request.
TEST_F(ExchangeTest, SharedParsersLeaveEachExchangeItsMethod) {
  parser_pool parsers{limits{}};
  ex.share_parsers(parsers);
  exchange other{reg, limits{}};
  other.share_parsers(parsers);

  auto later = std::make_shared<recorder>();
  ex.start(protocol::xmlrpc, call_doc("later", "<param><value><int>4</int></value></param>"),
           context(), later);
  auto now = std::make_shared<recorder>();
  other.start(protocol::xmlrpc,
              call_doc("subtract",
                       "<param><value><int>9</int></value></param>"
                       "<param><value><int>2</int></value></param>"),
              context(), now);
  ASSERT_EQ(now->count, 1);
  EXPECT_EQ(now->last->fault, 0) << now->last->body;
  EXPECT_EQ(other.method(), "subtract");
  EXPECT_EQ(ex.method(), "later");

  io.restart();
  auto guard = boost::asio::make_work_guard(io);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (later->count == 0 && std::chrono::steady_clock::now() < deadline)
    io.run_one_for(std::chrono::milliseconds(50));
  guard.reset();
  ASSERT_EQ(later->count, 1);
  EXPECT_NE(later->last->body.find("<int>4</int>"), std::string::npos) << later->last->body;
  EXPECT_EQ(ex.method(), "later");

  ex.release();
  EXPECT_EQ(ex.method(), "");
  auto again = xml(call_doc("get_data"));
  EXPECT_EQ(again.fault, 0) << again.body;
  EXPECT_EQ(ex.method(), "get_data");
}

// A parser keeps the buffer of the largest document it read, and a loop's
// pool lives as long as the loop: one big request must not pin its size.
TEST_F(ExchangeTest, SharedParsersAreNotKeptAfterABigDocument) {
  parser_pool parsers{limits{}};
  ex.share_parsers(parsers);
  EXPECT_EQ(xml(call_doc("get_data")).fault, 0);
  EXPECT_EQ(parsers.kept(), 1U);

  const std::string big(100 * 1024, 'x');
  auto r = xml(call_doc("echo", "<param><value><string>" + big + "</string></value></param>"));
  EXPECT_EQ(r.fault, 0) << r.body.substr(0, 200);
  EXPECT_EQ(parsers.kept(), 0U);

  EXPECT_EQ(xml(call_doc("get_data")).fault, 0);
  EXPECT_EQ(parsers.kept(), 1U);

  // A big document that fails: its fault is answered from the parser's
  // error, which is gone once the parser is (a sanitizer build sees a read
  // after that).
  auto bad = xml("<methodCall><methodName>m</methodName>" + big);
  EXPECT_EQ(bad.fault, fault_code::invalid_request) << bad.body.substr(0, 200);
  EXPECT_NE(bad.body.find("text is not allowed in &lt;methodCall&gt;"), std::string::npos)
      << bad.body.substr(0, 200);
  EXPECT_EQ(parsers.kept(), 0U);
}

TEST_F(ExchangeTest, PoolCallPastItsTimeoutFails) {
  const auto before = std::chrono::steady_clock::now();
  auto r = json(R"({"jsonrpc":"2.0","method":"stuck","id":1})");
  EXPECT_EQ(r.fault, fault_code::timeout);
  EXPECT_NE(r.body.find(R"("code":-32001)"), std::string::npos) << r.body;
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(500));
}

TEST_F(ExchangeTest, TimeoutReplyFollowsTheRequest) {
  std::string body;
  xml(call_doc(
      "subtract",
      "<param><value><int>1</int></value></param><param><value><int>1</int></value></param>"));
  EXPECT_EQ(ex.timeout_reply(body), xml_content_type);
  EXPECT_NE(body.find("<int>-32001</int>"), std::string::npos) << body;

  body.clear();
  json(R"({"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":"abc"})");
  EXPECT_EQ(ex.timeout_reply(body), json_content_type);
  EXPECT_EQ(
      body,
      R"({"jsonrpc":"2.0","error":{"code":-32001,"message":"the call took too long"},"id":"abc"})");

  body.clear();
  json(R"([{"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":1}])");
  ex.timeout_reply(body);
  EXPECT_NE(body.find(R"("id":null)"), std::string::npos) << body;
}

TEST_F(ExchangeTest, JsonNotificationAnswersNothingButIsRun) {
  bool ran = false;
  reg.add("mark", [&ran] { ran = true; });
  auto r = json(R"({"jsonrpc":"2.0","method":"mark"})");
  EXPECT_TRUE(ran);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.content_type, json_content_type);
  EXPECT_EQ(ex.method(), "mark");
}

TEST_F(ExchangeTest, BatchIsNamedForTheLog) {
  json(R"([{"jsonrpc":"2.0","method":"update"},{"jsonrpc":"2.0","method":"update"}])");
  EXPECT_EQ(ex.method(), "[batch:2]");
}

TEST_F(ExchangeTest, RefuseAnswersWithoutRunning) {
  recorder sink;
  ex.refuse(protocol::jsonrpc, fault(fault_code::not_authorized, ""), sink);
  ASSERT_EQ(sink.count, 1);
  EXPECT_EQ(sink.last->fault, fault_code::not_authorized);
  EXPECT_EQ(sink.last->body, R"({"jsonrpc":"2.0","error":{"code":-32002,"message":""},"id":null})");
  ex.refuse(protocol::xmlrpc, fault(fault_code::not_authorized, "go away"), sink);
  EXPECT_EQ(sink.count, 2);
  EXPECT_NE(sink.last->body.find("go away"), std::string::npos);
}

// The worker-process side runs its calls through an exchange too: over a
// socket pair, serve_worker() answers each frame in turn, an async
// method's included, until end of stream.
TEST_F(ExchangeTest, ServeWorkerAnswersEachCallThroughAnExchange) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  int status = -1;
  std::thread worker([&] { status = serve_worker(reg, sv[1]); });
  auto read_frame = [&] {
    unsigned char header[4];
    EXPECT_EQ(::recv(sv[0], header, 4, MSG_WAITALL), 4);
    std::string body(frame_length(header), '\0');
    if (!body.empty()) {
      EXPECT_EQ(::recv(sv[0], body.data(), body.size(), MSG_WAITALL), body.size());
    }
    return body;
  };
  auto ask = [&](std::string_view doc) {
    std::string frame;
    append_frame(frame, doc);
    EXPECT_EQ(::send(sv[0], frame.data(), frame.size(), MSG_NOSIGNAL), frame.size());
    return read_frame();
  };
  EXPECT_EQ(read_frame(), "");  // ready
  EXPECT_NE(ask(call_doc("get_data")).find("<string>hello</string>"), std::string::npos);
  EXPECT_NE(ask(call_doc("sum",
                         "<param><value><int>2</int></value></param>"
                         "<param><value><int>3</int></value></param>"))
                .find("<int>5</int>"),
            std::string::npos);
  EXPECT_NE(
      ask(call_doc("later", "<param><value><int>4</int></value></param>")).find("<int>4</int>"),
      std::string::npos);
  const std::string fault = ask(call_doc("fail"));
  EXPECT_NE(fault.find("<int>7</int>"), std::string::npos) << fault;
  EXPECT_NE(ask("<methodCall>").find("<int>-32700</int>"), std::string::npos);
  ::shutdown(sv[0], SHUT_WR);
  worker.join();
  EXPECT_EQ(status, 0);
  ::close(sv[0]);
  ::close(sv[1]);
}

// tests/data/jsonrpc: NAME.request.json through the exchange must give
// NAME.response.json byte for byte (empty: no reply).
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(ExchangeTest, GoldenJsonRpcFiles) {
  const fs::path dir = fs::path(rapidrpc::test::test_data_dir) / "jsonrpc";
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".request.json";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string stem = name.substr(0, name.size() - suffix.size());
    const fs::path expected = dir / (stem + ".response.json");
    ASSERT_TRUE(fs::exists(expected)) << stem << " has no response file";
    auto r = json(slurp(entry.path()));
    EXPECT_EQ(r.body, slurp(expected)) << stem;
    EXPECT_EQ(r.content_type, json_content_type) << stem;
    ++cases;
  }
  EXPECT_GE(cases, 20);  // a wrong data path must not turn this into nothing
}

}  // namespace
}  // namespace rapidrpc::detail::rpc

namespace rapidrpc::detail::rpc {
namespace {

// The exchange counts each reply once, by protocol, method and outcome,
// whichever way the call ran; a refusal is not a call.
TEST_F(ExchangeTest, CountsEveryReplyOnce) {
  metrics::store store(reg.names(), 1);
  ex.count_into(store, store.at(0));
  xml(call_doc("subtract",
               "<param><value><int>5</int></value></param>"
               "<param><value><int>3</int></value></param>"));
  xml(call_doc("fail"));
  xml("<methodCall>broken");
  json(R"({"jsonrpc":"2.0","method":"on_pool","id":1})");
  json(R"({"jsonrpc":"2.0","method":"later","params":[4],"id":2})");
  json(R"({"jsonrpc":"2.0","method":"stuck","id":3})");
  json(
      R"([{"jsonrpc":"2.0","method":"get_data","id":4},{"jsonrpc":"2.0","method":"echo","params":[1],"id":5}])");
  json(R"({"jsonrpc":"2.0","method":"nope","id":6})");
  recorder refused;
  ex.refuse(protocol::jsonrpc, fault(fault_code::not_authorized, ""), refused);
  std::string text;
  store.write_exposition(text, {});
  const auto has = [&text](std::string_view line) {
    return text.find(std::string(line) + "\n") != std::string::npos;
  };
  EXPECT_TRUE(has(R"(rapidrpc_calls_total{protocol="xmlrpc",method="subtract",outcome="ok"} 1)"));
  EXPECT_TRUE(has(R"(rapidrpc_calls_total{protocol="xmlrpc",method="fail",outcome="fault"} 1)"));
  EXPECT_TRUE(
      has(R"m(rapidrpc_calls_total{protocol="xmlrpc",method="(other)",outcome="fault"} 1)m"));
  EXPECT_TRUE(has(R"(rapidrpc_calls_total{protocol="jsonrpc",method="on_pool",outcome="ok"} 1)"));
  EXPECT_TRUE(has(R"(rapidrpc_calls_total{protocol="jsonrpc",method="later",outcome="ok"} 1)"));
  EXPECT_TRUE(
      has(R"(rapidrpc_calls_total{protocol="jsonrpc",method="stuck",outcome="timeout"} 1)"));
  EXPECT_TRUE(has(R"m(rapidrpc_calls_total{protocol="jsonrpc",method="(batch)",outcome="ok"} 1)m"));
  EXPECT_TRUE(
      has(R"m(rapidrpc_calls_total{protocol="jsonrpc",method="(other)",outcome="fault"} 1)m"));
  EXPECT_TRUE(has("rapidrpc_calls_in_flight 0")) << text;
  EXPECT_TRUE(has(R"(rapidrpc_rejections_total{reason="method_denied"} 0)"));
  // The slow call (stopped at its 0.1 s timeout) is past the 0.05 s bucket.
  EXPECT_TRUE(has(
      R"(rapidrpc_call_duration_seconds_bucket{protocol="jsonrpc",method="stuck",le="0.05"} 0)"));
}

// A runner standing in for worker processes: it answers every call with the
// document it was given, as a worker's, and keeps what it would have sent.
class document_runner final : public pool_runner {
 public:
  explicit document_runner(std::string answer) : answer_(std::move(answer)) {}
  void run(pool_call c) override {
    sent.clear();
    append_call_document(sent, c);
    finish_with_document(c, answer_, "internal error: unreadable");
  }
  std::string sent;  // the methodCall a worker would have got

 private:
  std::string answer_;
};

class ExchangeWithWorkers : public ExchangeTest {
 protected:
  heard with_answer(protocol p, std::string_view request, std::string answer) {
    document_runner runner(std::move(answer));
    on_pool.runner = &runner;
    auto r = run(p, request);
    on_pool.runner = &threads;
    sent = runner.sent;
    return r;
  }
  static std::string written(std::string_view method, const array& params) {
    std::string doc;
    xmlrpc::write_call(doc, method, params);
    return doc;
  }
  std::string sent;
};

// As a Python worker writes them (xmlrpc.client's Marshaller).
constexpr std::string_view python_result =
    "<?xml version='1.0'?>\n<methodResponse>\n<params>\n<param>\n"
    "<value><int>8</int></value>\n</param>\n</params>\n</methodResponse>\n";
constexpr std::string_view python_fault =
    "<?xml version='1.0'?>\n<methodResponse>\n<fault>\n<value><struct>\n<member>\n"
    "<name>faultCode</name>\n<value><int>7</int></value>\n</member>\n<member>\n"
    "<name>faultString</name>\n<value><string>no luck</string></value>\n</member>\n"
    "</struct></value>\n</fault>\n</methodResponse>\n";

TEST_F(ExchangeWithWorkers, AnXmlRpcCallReachesTheWorkerAndTheClientUnwritten) {
  // As xmlrpc.client writes it.
  const std::string request =
      "<?xml version='1.0'?>\n<methodCall>\n<methodName>sum</methodName>\n<params>\n"
      "<param>\n<value><string>caf\xc3\xa9</string></value>\n</param>\n</params>\n"
      "</methodCall>\n";
  auto r = with_answer(protocol::xmlrpc, request, std::string(python_result));
  EXPECT_EQ(sent, request);
  EXPECT_EQ(r.body, python_result);
  EXPECT_EQ(r.fault, 0);
  EXPECT_EQ(r.content_type, xml_content_type);
}

TEST_F(ExchangeWithWorkers, ACallNotInPlainUtf8IsWrittenAgainForTheWorker) {
  // Another encoding, or a comment: not every worker's parser reads them.
  for (const std::string request :
       {"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><methodCall><methodName>sum"
        "</methodName><params><param><value><string>caf\xe9</string></value></param></params>"
        "</methodCall>",
        "<?xml version=\"1.0\"?><methodCall><!-- hi --><methodName>sum</methodName><params>"
        "<param><value><string>caf\xc3\xa9</string></value></param></params></methodCall>"}) {
    auto r = with_answer(protocol::xmlrpc, request, std::string(python_result));
    EXPECT_EQ(sent, written("sum", {value("caf\xc3\xa9")}));
    EXPECT_EQ(r.body, python_result);  // the answer passes on all the same
  }
}

TEST_F(ExchangeWithWorkers, AWorkersFaultPassesOnWithItsCodeCounted) {
  auto r = with_answer(protocol::xmlrpc, call_doc("sum"), std::string(python_fault));
  EXPECT_EQ(r.body, python_fault);
  EXPECT_EQ(r.fault, 7);
}

TEST_F(ExchangeWithWorkers, AJsonRpcCallGoesAsValuesAndItsAnswerIsRead) {
  auto r =
      with_answer(protocol::jsonrpc, R"({"jsonrpc":"2.0","method":"sum","params":[3,5],"id":1})",
                  std::string(python_result));
  EXPECT_EQ(sent, written("sum", {value(3), value(5)}));  // no document to lend
  EXPECT_EQ(r.body, R"({"jsonrpc":"2.0","result":8,"id":1})");
  r = with_answer(protocol::jsonrpc, R"({"jsonrpc":"2.0","method":"sum","id":2})",
                  std::string(python_fault));
  EXPECT_EQ(r.body, R"({"jsonrpc":"2.0","error":{"code":7,"message":"no luck"},"id":2})");
  EXPECT_EQ(r.fault, 7);
}

TEST_F(ExchangeWithWorkers, AMulticallEntryIsReadIntoItsSlot) {
  auto r = with_answer(
      protocol::xmlrpc,
      call_doc("system.multicall",
               "<param><value><array><data><value><struct><member><name>methodName</name>"
               "<value><string>sum</string></value></member><member><name>params</name>"
               "<value><array><data/></array></value></member></struct></value></data></array>"
               "</value></param>"),
      std::string(python_result));
  EXPECT_EQ(sent, written("sum", {}));
  EXPECT_NE(r.body.find("<array><data><value><array><data><value><int>8</int>"), std::string::npos)
      << r.body;
}

TEST_F(ExchangeWithWorkers, AnAnswerThatCannotBeReadIsAnInternalError) {
  auto r = with_answer(protocol::xmlrpc, call_doc("sum"), "<methodResponse><fault>oops");
  EXPECT_EQ(r.fault, fault_code::internal_error);
  EXPECT_NE(r.body.find("internal error: unreadable"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace rapidrpc::detail::rpc
