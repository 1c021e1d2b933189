// The ordered list of services (src/service/service.hpp): started in the
// order added, stopped in that order, joined in the reverse one; a start
// that fails part-way leaves none of them running, whichever one fails.
#include "service/service.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rapidrpc::detail {
namespace {

using std::chrono::milliseconds;

// Writes what is done to it, "start a", "stop a 250", "join a", into a log
// shared by all; start() throws when told to.
class recorder final : public service {
 public:
  recorder(std::string name, std::vector<std::string>& log) : name_(std::move(name)), log_(log) {}

  void fail_start() { fail_ = true; }

  void start() override {
    if (fail_) throw std::runtime_error(name_ + " cannot start");
    log_.push_back("start " + name_);
  }
  void stop(milliseconds drain) override {
    log_.push_back("stop " + name_ + " " + std::to_string(drain.count()));
  }
  void join() override { log_.push_back("join " + name_); }

 private:
  std::string name_;
  std::vector<std::string>& log_;
  bool fail_ = false;
};

struct fixture {
  std::vector<std::string> log;
  std::vector<std::unique_ptr<recorder>> parts;
  service_list list;

  explicit fixture(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      parts.push_back(std::make_unique<recorder>(std::string(1, static_cast<char>('a' + i)), log));
      list.add(*parts.back());
    }
  }
};

TEST(ServiceList, StartsAndStopsInTheOrderAddedAndJoinsInTheReverse) {
  fixture f(3);
  f.list.start();
  EXPECT_EQ(f.list.started(), 3U);
  f.list.stop(milliseconds(250));
  f.list.join();
  EXPECT_EQ(f.log,
            (std::vector<std::string>{"start a", "start b", "start c", "stop a 250", "stop b 250",
                                      "stop c 250", "join c", "join b", "join a"}));
}

TEST(ServiceList, NothingStartedIsNeitherStoppedNorJoined) {
  fixture f(2);
  f.list.stop(milliseconds(250));
  f.list.join();
  EXPECT_TRUE(f.log.empty());
}

TEST(ServiceList, AStartFailingAtAnyPlaceUndoesWhatStartedInReverse) {
  constexpr std::size_t n = 4;
  for (std::size_t failing = 0; failing < n; ++failing) {
    SCOPED_TRACE("service " + std::to_string(failing) + " fails to start");
    fixture f(n);
    f.parts[failing]->fail_start();
    EXPECT_THROW(f.list.start(), std::runtime_error);
    EXPECT_EQ(f.list.started(), 0U);

    std::vector<std::string> expected;
    for (std::size_t i = 0; i < failing; ++i)
      expected.push_back("start " + std::string(1, static_cast<char>('a' + i)));
    for (std::size_t i = 0; i < failing; ++i)
      expected.push_back("stop " + std::string(1, static_cast<char>('a' + i)) + " 0");
    for (std::size_t i = failing; i-- > 0;)
      expected.push_back("join " + std::string(1, static_cast<char>('a' + i)));
    EXPECT_EQ(f.log, expected);

    // Undone, the list neither stops nor joins them again.
    f.log.clear();
    f.list.stop(milliseconds(250));
    f.list.join();
    EXPECT_TRUE(f.log.empty());
  }
}

}  // namespace
}  // namespace rapidrpc::detail
