// zmq_endpoint: the ZeroMQ URLs zmq_client accepts, without I/O.
#include <rapidrpc/zmq_client.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace rapidrpc {
namespace {

TEST(ZmqEndpoint, AcceptsTcpAndIpc) {
  EXPECT_EQ(zmq_endpoint::parse("tcp://127.0.0.1:5555").scheme, "tcp");
  EXPECT_EQ(zmq_endpoint::parse("tcp://localhost:1").address, "tcp://localhost:1");
  EXPECT_EQ(zmq_endpoint::parse("tcp://[::1]:5555").scheme, "tcp");
  EXPECT_EQ(zmq_endpoint::parse("ipc:///run/x.sock").scheme, "ipc");
  EXPECT_TRUE(zmq_endpoint::is_zmq_url("ipc:///x"));
  EXPECT_FALSE(zmq_endpoint::is_zmq_url("http://localhost/RPC2"));
}

TEST(ZmqEndpoint, RejectsWhatZeroMqCouldNotConnectTo) {
  for (const char* bad :
       {"http://127.0.0.1:80", "tcp://127.0.0.1", "tcp://127.0.0.1:0", "tcp://127.0.0.1:65536",
        "tcp://127.0.0.1:*", "tcp://:5555", "tcp://::1:5555", "ipc://", "tcp://a b:1"})
    EXPECT_THROW(zmq_endpoint::parse(bad), std::invalid_argument) << bad;
  EXPECT_THROW(zmq_client("http://127.0.0.1:1/RPC2"), std::invalid_argument);
}

}  // namespace
}  // namespace rapidrpc
