// Unit tests of rapidrpcd's config file (tools/rapidrpcd/config.cpp): which
// options are keys, how a TOML value reaches its option, that the command
// line wins, what each kind of mistake says, and that --print-config's
// output reads back as the same settings.
#include "config.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace rapidrpcd {
namespace {

// A small option table shaped like rapidrpcd's: every kind of value, an
// option group, a hidden option, an action, a check and a needs.
struct table {
  CLI::App app{"test", "test"};
  std::uint16_t port = 6677;
  std::string mode = "a";
  std::vector<std::string> paths{"/RPC2", "/"};
  bool isolate = false;
  double timeout = 10;
  std::string cert, key;
  bool hidden = false;
  bool check = false;
  std::int64_t max_body = 16;

  table() {
    app.add_option("--port", port, "TCP port")->capture_default_str();
    app.add_option("--mode", mode, "Mode")->check(CLI::IsMember({"a", "b"}))->capture_default_str();
    app.add_option("--path", paths, "A path (repeatable)")->capture_default_str();
    app.add_flag("--isolate", isolate, "Isolate");
    auto* cert_opt = app.add_option("--tls-cert", cert, "Certificate");
    auto* key_opt = app.add_option("--tls-key", key, "Key");
    cert_opt->needs(key_opt);
    app.add_flag("--worker", hidden, "Hidden")->group("");
    app.add_flag("--check-config", check, "An action");
    auto* limits = app.add_option_group("Limits", "Limits");
    limits->add_option("--max-body-bytes", max_body, "Largest body")->capture_default_str();
    limits->add_option("--drain-timeout", timeout, "Seconds")->capture_default_str();
  }

  std::vector<setting> settings() { return settings_of(app, {"help", "check-config"}); }

  void parse(std::vector<std::string> args) {
    std::vector<char*> argv{const_cast<char*>("test")};
    for (auto& a : args) argv.push_back(a.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
  }
};

class ConfigFile : public ::testing::Test {
 protected:
  void TearDown() override { ::unlink(path_.c_str()); }

  const std::string& write(const std::string& text) {
    std::ofstream(path_, std::ios::trunc) << text;
    return path_;
  }

  // apply_config_file's message for `text`, or "" if it took it.
  std::string error_for(const std::string& text) {
    table t;
    t.parse({});
    try {
      apply_config_file(write(text), t.settings());
    } catch (const config_error& e) {
      return e.what();
    }
    return "";
  }

  std::string path_ = ::testing::TempDir() + "rapidrpcd_config_test." + std::to_string(::getpid());
};

TEST(Settings, AreTheNamedOptionsMinusHiddenOnesAndActionsWithTheirKinds) {
  table t;
  std::vector<std::string> keys;
  for (const auto& s : t.settings()) keys.push_back(s.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"port", "mode", "path", "isolate", "tls-cert",
                                            "tls-key", "max-body-bytes", "drain-timeout"}));
  auto settings = t.settings();
  EXPECT_EQ(settings[0].kind, value_kind::integer);
  EXPECT_EQ(settings[1].kind, value_kind::string);
  EXPECT_TRUE(settings[2].repeatable);
  EXPECT_FALSE(settings[0].repeatable);
  EXPECT_EQ(settings[3].kind, value_kind::boolean);
  EXPECT_EQ(settings[7].kind, value_kind::number);
}

TEST_F(ConfigFile, ValuesReachTheirOptionsAndTheCommandLineWins) {
  table t;
  t.parse({"--mode", "b"});
  apply_config_file(write("port = 7000\nmode = \"a\"\npath = [\"/x\", \"/y\"]\nisolate = true\n"
                          "max-body-bytes = 99\ndrain-timeout = 2.5\ntls-cert = \"\"\n"),
                    t.settings());
  EXPECT_EQ(t.port, 7000);
  EXPECT_EQ(t.mode, "b");  // the command line's
  EXPECT_EQ(t.paths, (std::vector<std::string>{"/x", "/y"}));
  EXPECT_TRUE(t.isolate);
  EXPECT_EQ(t.max_body, 99);
  EXPECT_EQ(t.timeout, 2.5);
  EXPECT_EQ(t.app.get_option("--tls-cert")->count(), 0u);  // empty: not set
}

TEST_F(ConfigFile, AnIntegerIsANumberToo) {
  table t;
  t.parse({});
  apply_config_file(write("drain-timeout = 3\n"), t.settings());
  EXPECT_EQ(t.timeout, 3.0);
}

TEST_F(ConfigFile, MistakesNameFileLineColumnKeyAndWhatWasExpected) {
  EXPECT_EQ(error_for("port = 1\n\nprot = 2\n"),
            path_ + ":3:1: unknown key \"prot\" (did you mean \"port\"?)");
  EXPECT_EQ(error_for("zzzzzz = 2\n"), path_ + ":1:1: unknown key \"zzzzzz\"");
  EXPECT_EQ(error_for("worker = true\n"), path_ + ":1:1: unknown key \"worker\"");
  EXPECT_EQ(error_for("check-config = true\n"), path_ + ":1:1: unknown key \"check-config\"");
  EXPECT_EQ(error_for("port = \"abc\"\n"),
            path_ + ":1:8: port: expected an integer, got a string (\"abc\")");
  EXPECT_EQ(error_for("port = 70000\n"), path_ + ":1:8: port: 70000 is out of range (UINT)");
  EXPECT_EQ(error_for("port = 1.5\n"),
            path_ + ":1:8: port: expected an integer, got a float (1.5)");
  EXPECT_EQ(error_for("isolate = 1\n"),
            path_ + ":1:11: isolate: expected true or false, got an integer (1)");
  EXPECT_EQ(error_for("mode = \"c\"\n"), path_ + ":1:8: mode: c not in {a,b}");
  EXPECT_EQ(
      error_for("path = \"/x\"\n"),
      path_ + ":1:8: path: expected an array of strings (path = [...]), got a string (\"/x\")");
  EXPECT_EQ(error_for("path = [\"/x\", 2]\n"),
            path_ + ":1:15: path: expected an array of strings, got an integer (2) in it");
  EXPECT_EQ(error_for("tls-cert = \"a.pem\"\n"), path_ + ":1:12: tls-cert needs tls-key too");
  EXPECT_EQ(error_for("tls-cert = \"a.pem\"\ntls-key = \"a.key\"\n"), "");
  EXPECT_EQ(error_for("[limits]\nmax-body-bytes = 1\n"), path_ + ":1:2: unknown key \"limits\"");
  EXPECT_TRUE(error_for("port = 1\nmode = \"a\n").starts_with(path_ + ":2:"));
}

TEST_F(ConfigFile, ThatCannotBeReadSaysSo) {
  table t;
  t.parse({});
  EXPECT_THROW(apply_config_file(path_ + ".missing", t.settings()), config_error);
}

TEST_F(ConfigFile, PrintedSettingsReadBackAsTheSame) {
  table first;
  first.parse({"--port", "8000", "--isolate", "--path", "/a b", "--path", "/\"q\"",
               "--drain-timeout", "0.25"});
  const auto printed = to_toml(current_values(first.settings()));
  table second;
  second.parse({});
  apply_config_file(write(printed), second.settings());
  EXPECT_EQ(second.port, 8000);
  EXPECT_TRUE(second.isolate);
  EXPECT_EQ(second.paths, (std::vector<std::string>{"/a b", "/\"q\""}));
  EXPECT_EQ(second.timeout, 0.25);
  EXPECT_EQ(second.mode, "a");
  EXPECT_EQ(to_toml(current_values(second.settings())), printed);
}

TEST(Nearest, FindsTyposOnly) {
  const std::vector<std::string> keys{"port", "path", "max-body-bytes", "mode"};
  EXPECT_EQ(nearest("prot", keys), "port");
  EXPECT_EQ(nearest("max-body-byte", keys), "max-body-bytes");
  EXPECT_EQ(nearest("threads", keys), "");
}

}  // namespace
}  // namespace rapidrpcd
