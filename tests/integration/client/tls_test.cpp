// The client over https against rapidrpcd with a certificate made at test
// time by the openssl command line: a test CA, and a server certificate for
// the DNS name localhost only (so an https://127.0.0.1 URL is a name
// mismatch), in a temporary directory removed afterwards.
#include "paths.hpp"
#include "peers.hpp"

#include <rapidrpc/client.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

namespace rapidrpc {
namespace {

namespace fs = std::filesystem;
using why = transport_error::reason;

// Runs a shell command in `dir`; throws with its output if it fails.
void run(const fs::path& dir, const std::string& command) {
  std::string line = "cd '" + dir.string() + "' && " + command + " > openssl.log 2>&1";
  if (std::system(line.c_str()) != 0) {
    std::ifstream log(dir / "openssl.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    throw std::runtime_error("failed: " + command + "\n" + text);
  }
}

// The certificates and one HTTPS rapidrpcd, for the whole test program.
class tls_setup : public ::testing::Environment {
 public:
  static tls_setup* instance;
  fs::path dir;
  std::unique_ptr<test::child_server> server;
  std::string skip_reason;

  void SetUp() override {
    instance = this;
    if (std::system("command -v openssl > /dev/null 2>&1") != 0) {
      skip_reason = "the openssl command line is not installed";
      return;
    }
    char templ[] = "/tmp/rapidrpc-tls-XXXXXX";
    if (::mkdtemp(templ) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = templ;
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run(dir, "openssl req -x509 " + ec +
                 " -keyout ca.key -out ca.pem -days 2 -subj '/CN=rapidrpc test CA'");
    run(dir, "printf 'subjectAltName=DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > server.ext");
    run(dir, "openssl req " + ec + " -keyout server.key -out server.csr -subj /CN=localhost");
    run(dir,
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server.pem -days 2 -extfile server.ext");
    server = std::make_unique<test::child_server>(std::vector<std::string>{
        test::rapidrpcd_path, "--host", "127.0.0.1", "--port", "0", "--threads", "2", "--workers",
        "1", "--drain-timeout", "1", "--tls-cert", (dir / "server.pem").string(), "--tls-key",
        (dir / "server.key").string()});
  }

  void TearDown() override {
    if (server) {
      EXPECT_EQ(server->stop(), 0) << "rapidrpcd did not stop cleanly on SIGTERM";
    }
    server.reset();
    std::error_code ignored;
    if (!dir.empty()) fs::remove_all(dir, ignored);
  }
};

tls_setup* tls_setup::instance = nullptr;
[[maybe_unused]] const auto* const registered = ::testing::AddGlobalTestEnvironment(new tls_setup);

class ClientTls : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tls_setup::instance->skip_reason.empty()) GTEST_SKIP() << tls_setup::instance->skip_reason;
  }
  static unsigned short port() { return tls_setup::instance->server->port(); }
  static std::string url(const std::string& host) {
    return "https://" + host + ":" + std::to_string(port()) + "/RPC2";
  }
  static client_options trusting() {
    client_options o;
    o.tls_ca_file = (tls_setup::instance->dir / "ca.pem").string();
    return o;
  }
};

TEST_F(ClientTls, VerifiesTheServerWithTheGivenCaFile) {
  client c(url("localhost"), trusting());
  EXPECT_EQ(c.call<std::int32_t>("sample.add", 3, 5), 8);
  value big(std::string(200'000, 'x'));
  EXPECT_EQ(c.call("echo", {big}), big);
}

TEST_F(ClientTls, KeepsTheTlsConnectionForLaterCalls) {
  // The relay counts TCP connections; TLS passes through it untouched, and
  // the certificate names localhost, which the client asks for.
  test::counting_proxy relay(port());
  std::string relayed = relay.url();
  relayed.replace(0, std::string("http://127.0.0.1").size(), "https://localhost");
  client c(relayed, trusting());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.call<std::int32_t>("sample.add", i, 1), i + 1);
  EXPECT_EQ(relay.connections(), 1);
}

TEST_F(ClientTls, FailsVerificationWithoutTheCaFile) {
  client c(url("localhost"));  // the system's CA store does not know the test CA
  try {
    c.call("sample.add", {value(1), value(2)});
    FAIL() << "an unknown CA was accepted";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.why(), why::connect);
    EXPECT_NE(std::string(e.what()).find("certificate verify failed"), std::string::npos)
        << e.what();
  }
}

TEST_F(ClientTls, ChecksTheHostName) {
  // Trusted chain, but the certificate names localhost, not 127.0.0.1.
  client c(url("127.0.0.1"), trusting());
  try {
    c.call("sample.add", {value(1), value(2)});
    FAIL() << "a certificate for another name was accepted";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.why(), why::connect);
    EXPECT_NE(std::string(e.what()).find("mismatch"), std::string::npos) << e.what();
  }
}

TEST_F(ClientTls, InsecureAcceptsAnyCertificate) {
  client_options o;
  o.tls_verify = false;
  client c(url("127.0.0.1"), o);  // unknown CA and another name: both ignored
  EXPECT_EQ(c.call<std::int32_t>("sample.add", 20, 22), 42);
}

TEST_F(ClientTls, AsyncCallsOverHttps) {
  boost::asio::io_context io;
  client c(io.get_executor(), url("localhost"), trusting());
  std::vector<outcome> results(8);
  int done = 0;
  for (int i = 0; i < 8; ++i)
    c.async_call("sample.add", {value(i), value(100)}, [&, i](outcome r) {
      results[static_cast<std::size_t>(i)] = std::move(r);
      ++done;
    });
  io.run_for(std::chrono::seconds(30));
  ASSERT_EQ(done, 8);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(std::get<value>(results[static_cast<std::size_t>(i)]), value(i + 100));
}

TEST_F(ClientTls, PlainHttpToTheTlsPortIsNoAnswer) {
  client c("http://127.0.0.1:" + std::to_string(port()) + "/RPC2");
  try {
    c.call("sample.add", {value(1), value(2)});
    FAIL() << "plain HTTP was answered on the TLS port";
  } catch (const transport_error& e) {
    // The handshake fails and the server closes: no byte comes back.
    EXPECT_EQ(e.why(), why::io) << e.what();
    EXPECT_NE(std::string(e.what()).find("without answering"), std::string::npos) << e.what();
  }
  // The server keeps serving.
  client_options o;
  o.tls_verify = false;
  EXPECT_EQ(client(url("127.0.0.1"), o).call<std::int32_t>("sample.add", 1, 2), 3);
}

TEST_F(ClientTls, HttpsToAPlainServerIsAConnectError) {
  // A plain HTTP server answers the ClientHello as the bad request it is.
  test::scripted_server plain([](int fd, int) {
    char buf[512];
    if (::recv(fd, buf, sizeof buf, 0) > 0)
      test::write_all(fd,
                      "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });
  std::string u = plain.url();
  u.replace(0, 4, "https");
  client c(u, trusting());
  try {
    c.call("echo", {value(1)});
    FAIL() << "a plain server passed for TLS";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.why(), why::connect) << e.what();
  }
}

}  // namespace
}  // namespace rapidrpc
