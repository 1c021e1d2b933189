// Access control: address ranges, password hashes, users files, and the
// server's check of a request header.
#include "access/access.hpp"

#include <rapidrpc/access.hpp>

#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace rapidrpc {
namespace {

namespace ip = boost::asio::ip;

bool in(std::string_view cidr, std::string_view address) {
  return ip_network::parse(cidr).contains(ip::make_address(std::string(address)));
}

// ---- ip_network -----------------------------------------------------------------

TEST(IpNetwork, Ipv4Ranges) {
  EXPECT_TRUE(in("127.0.0.0/8", "127.0.0.1"));
  EXPECT_TRUE(in("127.0.0.0/8", "127.255.255.255"));
  EXPECT_FALSE(in("127.0.0.0/8", "128.0.0.1"));
  EXPECT_TRUE(in("10.1.2.3", "10.1.2.3"));  // a bare address is /32
  EXPECT_FALSE(in("10.1.2.3", "10.1.2.4"));
  EXPECT_TRUE(in("192.168.0.0/23", "192.168.1.200"));
  EXPECT_FALSE(in("192.168.0.0/23", "192.168.2.1"));
  EXPECT_TRUE(in("0.0.0.0/0", "203.0.113.9"));
  EXPECT_FALSE(in("0.0.0.0/0", "::1"));  // an IPv4 range holds no IPv6 address
}

TEST(IpNetwork, Ipv6Ranges) {
  EXPECT_TRUE(in("::1/128", "::1"));
  EXPECT_FALSE(in("::1/128", "::2"));
  EXPECT_TRUE(in("::1", "::1"));
  EXPECT_TRUE(in("2001:db8::/32", "2001:db8:ffff::1"));
  EXPECT_FALSE(in("2001:db8::/32", "2001:db9::1"));
  EXPECT_TRUE(in("fe80::/10", "febf::1"));
  EXPECT_FALSE(in("fe80::/10", "fec0::1"));
  EXPECT_FALSE(in("::/0", "127.0.0.1"));  // an IPv6 range holds no (unmapped) IPv4 address
  EXPECT_TRUE(in("::/0", "2001:db8::1"));
}

TEST(IpNetwork, Ipv4MappedPeersCountAsIpv4) {
  EXPECT_TRUE(in("127.0.0.0/8", "::ffff:127.0.0.1"));
  EXPECT_FALSE(in("10.0.0.0/8", "::ffff:127.0.0.1"));
  EXPECT_FALSE(in("::1/128", "::ffff:0.0.0.1"));
  // A mapped range matches IPv4 peers, mapped or not.
  EXPECT_TRUE(in("::ffff:10.0.0.0/104", "10.9.8.7"));
  EXPECT_TRUE(in("::ffff:10.0.0.0/104", "::ffff:10.9.8.7"));
  EXPECT_FALSE(in("::ffff:10.0.0.0/104", "11.0.0.1"));
}

TEST(IpNetwork, HostBitsAreClearedAndPrinted) {
  EXPECT_EQ(ip_network::parse("10.1.2.3/8").to_string(), "10.0.0.0/8");
  EXPECT_EQ(ip_network::parse("2001:db8::1/32").to_string(), "2001:db8::/32");
  EXPECT_EQ(ip_network::parse("::1").to_string(), "::1/128");
  EXPECT_EQ(ip_network::parse("192.168.1.255/23").to_string(), "192.168.0.0/23");
}

TEST(IpNetwork, BadNotationThrows) {
  for (const char* bad : {"", "/8", "127.0.0.1/", "127.0.0.1/33", "::1/129", "127.0.0.1/-1",
                          "127.0.0.1/8x", "localhost", "1.2.3/8", "127.0.0.1/ 8", "::1/1/2"})
    EXPECT_THROW(ip_network::parse(bad), std::invalid_argument) << bad;
}

// ---- password hashes ----------------------------------------------------------------

// Written by Python's hashlib.pbkdf2_hmac with the salt bytes 0..15, in
// passlib's form: an implementation of its own to check against.
constexpr const char* correct_horse =
    "$pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGQ";
constexpr const char* empty_password =
    "$pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw$xbMBsf1hvO1j8AZCojBOxnRRn7182DxLyD2v4XQ/mFU";
constexpr const char* utf8_password =  // "pässword", 2000 iterations
    "$pbkdf2-sha256$2000$AAECAwQFBgcICQoLDA0ODw$ZjBBBr8MmJ2l9csZs49xJS7PQrQRYwTYzXxy3uRWXvM";
constexpr const char* dotted =  // "dot", 1003 iterations: a '.' in the hash (base64 '+')
    "$pbkdf2-sha256$1003$AAECAwQFBgcICQoLDA0ODw$/SPaZjMnnrVim3.1ohAeKoWdQhg7FbeG/eKYT7NEeVY";

TEST(Password, VerifiesHashesWrittenElsewhere) {
  EXPECT_TRUE(verify_password("correct horse", correct_horse));
  EXPECT_FALSE(verify_password("correct horsf", correct_horse));
  EXPECT_FALSE(verify_password("correct horse ", correct_horse));
  EXPECT_TRUE(verify_password("", empty_password));
  EXPECT_FALSE(verify_password("x", empty_password));
  EXPECT_TRUE(verify_password("p\xc3\xa4ssword", utf8_password));
  EXPECT_TRUE(verify_password("dot", dotted));
  EXPECT_FALSE(verify_password("dou", dotted));
}

TEST(Password, HashRoundTripsWithAFreshSalt) {
  std::string a = hash_password("s3cret", 1000);
  std::string b = hash_password("s3cret", 1000);
  EXPECT_NE(a, b);  // salted
  EXPECT_EQ(a.rfind("$pbkdf2-sha256$1000$", 0), 0u) << a;
  EXPECT_TRUE(valid_password_hash(a));
  EXPECT_TRUE(verify_password("s3cret", a));
  EXPECT_TRUE(verify_password("s3cret", b));
  EXPECT_FALSE(verify_password("s3creT", a));
  EXPECT_EQ(hash_password("x").find("$100000$"), 14u);  // the default iterations
  EXPECT_THROW(hash_password("x", 999), std::invalid_argument);
}

TEST(Password, MalformedHashesNeverMatch) {
  std::string good = correct_horse;
  for (
      const std::string& bad : std::vector<std::string>{
          std::string(""), std::string("correct horse"),
          "$pbkdf2-sha1$1000$AAECAwQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGQ",
          "$pbkdf2-sha256$999$AAECAwQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGQ",
          "$pbkdf2-sha256$01000$AAECAwQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGQ",
          "$pbkdf2-sha256$$AAECAwQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGQ",
          "$pbkdf2-sha256$1000$$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGQ",
          "$pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumG",
          "$pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGQ=",
          "$pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGR",
          "$pbkdf2-sha256$1000$AAEC*wQFBgcICQoLDA0ODw$yRTMTwbMbo9G0VfjobWqerzuuxe7BETNTErBbKKumGQ",
          "$pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw", good + "$"}) {
    EXPECT_FALSE(valid_password_hash(bad)) << bad;
    EXPECT_FALSE(verify_password("correct horse", bad)) << bad;
  }
}

// ---- users files ------------------------------------------------------------------

TEST(UsersFile, ParsesNamesHashesCommentsAndBlankLines) {
  auto users = parse_users(std::string("# who may call\n\nalice:") + correct_horse +
                           "\r\n  bob:" + empty_password + "  \n#carol:x\n");
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users.at("alice"), correct_horse);
  EXPECT_EQ(users.at("bob"), empty_password);
  EXPECT_TRUE(parse_users("").empty());
  EXPECT_TRUE(parse_users("# nothing\n").empty());
}

std::string parse_error(const std::string& text) {
  try {
    parse_users(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(UsersFile, MalformedLinesNameTheLineAndNotTheHash) {
  std::string h = correct_horse;
  EXPECT_EQ(parse_error("alice:" + h + "\nbob\n"), "line 2: expected name:hash");
  EXPECT_EQ(parse_error("alice:" + h + "\nalice:" + h + "\n"),
            "line 2: user \"alice\" appears twice");
  EXPECT_NE(parse_error(":" + h).find("line 1: bad user name"), std::string::npos);
  EXPECT_NE(parse_error("al ice:" + h).find("line 1: bad user name"), std::string::npos);
  EXPECT_NE(parse_error("al\"ice:" + h).find("line 1: bad user name"), std::string::npos);
  EXPECT_NE(parse_error(std::string(65, 'a') + ":" + h).find("bad user name"), std::string::npos);
  EXPECT_EQ(parse_users(std::string(64, 'a') + ":" + h).size(), 1u);
  std::string bad_hash = parse_error("\n\nalice:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n");
  EXPECT_NE(bad_hash.find("line 3: bad password hash"), std::string::npos) << bad_hash;
  EXPECT_EQ(bad_hash.find("W6ph5"), std::string::npos);  // the hash is not repeated
  EXPECT_EQ(parse_error("alice:" + h.substr(0, h.size() - 1)).find("yRTM"), std::string::npos);
}

TEST(UsersFile, LoadNamesTheFile) {
  try {
    load_users("/nonexistent/users");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/users"), std::string::npos);
  }
}

// ---- the server's header check ----------------------------------------------------

std::string basic(std::string_view b64) { return "Basic " + std::string(b64); }

class AccessPolicy : public ::testing::Test {
 protected:
  AccessPolicy()
      : policy({{"alice", correct_horse}, {"bob", utf8_password}},
               {ip_network::parse("127.0.0.0/8"), ip_network::parse("::1/128")}) {}
  detail::access_policy policy;
};

TEST_F(AccessPolicy, AllowedAddresses) {
  EXPECT_TRUE(policy.allowed(ip::make_address("127.0.0.1")));
  EXPECT_TRUE(policy.allowed(ip::make_address("::1")));
  EXPECT_TRUE(policy.allowed(ip::make_address("::ffff:127.0.0.1")));
  EXPECT_FALSE(policy.allowed(ip::make_address("10.0.0.1")));
  EXPECT_FALSE(policy.allowed(ip::make_address("::2")));
  detail::access_policy open({}, {});
  EXPECT_TRUE(open.allowed(ip::make_address("10.0.0.1")));
  EXPECT_FALSE(open.active());
}

TEST_F(AccessPolicy, GoodCredentialsAuthenticate) {
  // "alice:correct horse"
  const std::string* user = policy.authenticate(basic("YWxpY2U6Y29ycmVjdCBob3JzZQ=="));
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(*user, "alice");
  // The scheme is case-insensitive and may be followed by several spaces.
  user = policy.authenticate("bAsIc   YWxpY2U6Y29ycmVjdCBob3JzZQ==");
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(*user, "alice");
}

TEST_F(AccessPolicy, BadUnknownAndMalformedCredentialsDoNot) {
  EXPECT_EQ(policy.authenticate(basic("Ym9iOng=")), nullptr);  // bob:x
  EXPECT_EQ(policy.authenticate(basic("bm9ib2R5OmNvcnJlY3QgaG9yc2U=")),
            nullptr);                                                  // nobody:correct horse
  EXPECT_EQ(policy.authenticate(basic("YWxpY2Vjb3JyZWN0")), nullptr);  // no ':'
  EXPECT_EQ(policy.authenticate(basic("YWxpY2U6Y29ycmVjdCBob3JzZQ")), nullptr);    // unpadded
  EXPECT_EQ(policy.authenticate(basic("YWxp!2U6Y29ycmVjdCBob3JzZQ==")), nullptr);  // not base64
  EXPECT_EQ(policy.authenticate("Bearer YWxpY2U6Y29ycmVjdCBob3JzZQ=="), nullptr);
  EXPECT_EQ(policy.authenticate("BasicYWxpY2U6Y29ycmVjdCBob3JzZQ=="), nullptr);
  EXPECT_EQ(policy.authenticate(""), nullptr);
  EXPECT_EQ(policy.authenticate("Basic "), nullptr);
}

// CPU time of this thread: PBKDF2 runs on the calling thread, and CPU time
// does not grow when other processes load the machine.
std::chrono::nanoseconds thread_cpu_time() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

TEST_F(AccessPolicy, UnknownUsersCostAsMuchAsKnownOnes) {
  // Large iteration counts make PBKDF2 dominate the time taken.
  detail::access_policy slow({{"alice", hash_password("right", 50'000)}}, {});
  auto time = [&](std::string_view header) {
    auto t0 = thread_cpu_time();
    EXPECT_EQ(slow.authenticate(header), nullptr);
    return thread_cpu_time() - t0;
  };
  // "alice:wrong" and "nobody:wrong": known and unknown names.
  auto known = std::min({time(basic("YWxpY2U6d3Jvbmc=")), time(basic("YWxpY2U6d3Jvbmc="))});
  auto unknown = std::min({time(basic("bm9ib2R5Ondyb25n")), time(basic("bm9ib2R5Ondyb25n"))});
  // Both run one PBKDF2 of 50,000 iterations (milliseconds of CPU); a
  // shortcut for unknown names would take microseconds.
  EXPECT_GT(unknown, known / 2) << "known " << known.count() << " ns, unknown " << unknown.count()
                                << " ns";
}

TEST_F(AccessPolicy, CheckHeaderRemembersTheConnectionsCredentials) {
  detail::peer_access peer;
  EXPECT_EQ(policy.check_header(peer, ""), 401);
  EXPECT_EQ(policy.check_header(peer, basic("Ym9iOng=")), 401);
  EXPECT_EQ(peer.user, nullptr);
  EXPECT_EQ(policy.check_header(peer, basic("YWxpY2U6Y29ycmVjdCBob3JzZQ==")), 0);
  ASSERT_NE(peer.user, nullptr);
  EXPECT_EQ(*peer.user, "alice");
  EXPECT_EQ(policy.check_header(peer, basic("YWxpY2U6Y29ycmVjdCBob3JzZQ==")), 0);
  // Other credentials on the same connection are checked afresh.
  EXPECT_EQ(policy.check_header(peer, basic("Ym9iOng=")), 401);
  EXPECT_EQ(peer.user, nullptr);
  peer.allowed = false;
  EXPECT_EQ(policy.check_header(peer, basic("YWxpY2U6Y29ycmVjdCBob3JzZQ==")), 403);
}

TEST_F(AccessPolicy, AVerifiedCredentialIsCheapTheSecondTime) {
  detail::access_policy slow({{"alice", hash_password("right", 100'000)}}, {});
  const std::string header = basic("YWxpY2U6cmlnaHQ=");  // alice:right
  auto t0 = thread_cpu_time();
  ASSERT_NE(slow.authenticate(header), nullptr);
  auto first = thread_cpu_time() - t0;
  t0 = thread_cpu_time();
  for (int i = 0; i < 10; ++i) ASSERT_NE(slow.authenticate(header), nullptr);
  auto ten_more = thread_cpu_time() - t0;
  // Without the cache each would cost as much as the first.
  EXPECT_LT(ten_more, first / 10) << "the loop's cache did not spare PBKDF2: first "
                                  << first.count() << " ns, ten more " << ten_more.count() << " ns";
}

TEST(AccessPolicyBuild, MalformedEntriesThrow) {
  EXPECT_THROW(detail::access_policy({{"alice", "plain"}}, {}), std::invalid_argument);
  EXPECT_THROW(detail::access_policy({{"a:b", correct_horse}}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace rapidrpc
