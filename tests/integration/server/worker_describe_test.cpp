// The describe step of the worker protocol (rapidrpc::add_worker_methods):
// the worker program is a shell script here, which writes a method table,
// fails, stalls or writes what is not one.
#include <rapidrpc/registry.hpp>
#include <rapidrpc/worker.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace rapidrpc {
namespace {

// A program that runs `script` with "--describe" as its $1.
std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script, "sh"}; }

// A method table of two methods, as a describe step writes it.
const char* const table =
    "<?xml version='1.0'?><methodResponse><params><param><value><array><data>"
    "<value><struct>"
    "<member><name>name</name><value><string>add</string></value></member>"
    "<member><name>help</name><value><string>Adds.</string></value></member>"
    "<member><name>signature</name><value><array><data><value>int</value><value>int</value>"
    "<value>int</value></data></array></value></member>"
    "<member><name>params</name><value><array><data><value>a</value><value>b</value>"
    "</data></array></value></member>"
    "<member><name>min</name><value><int>2</int></value></member>"
    "<member><name>max</name><value><int>2</int></value></member>"
    "</struct></value>"
    "<value><struct>"
    "<member><name>name</name><value><string>join</string></value></member>"
    "<member><name>help</name><value><string></string></value></member>"
    "<member><name>signature</name><value><array><data></data></array></value></member>"
    "<member><name>params</name><value><array><data></data></array></value></member>"
    "<member><name>min</name><value><int>0</int></value></member>"
    "<member><name>max</name><value><int>-1</int></value></member>"
    "</struct></value>"
    "</data></array></value></param></params></methodResponse>";

std::string refusal(const std::vector<std::string>& command,
                    std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  registry methods;
  try {
    add_worker_methods(methods, command, limit);
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(methods.find("add"), nullptr) << "registered methods, then refused";
    return e.what();
  }
  return "(accepted)";
}

TEST(WorkerDescribe, RegistersTheTableAsPoolMethods) {
  registry methods;
  add_worker_methods(methods,
                     sh(std::string("test \"$1\" = --describe && printf '%s' \"") + table + "\""));
  const method* add = methods.find("add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->where, execution::pool);
  EXPECT_EQ(add->help, "Adds.");
  EXPECT_EQ(add->signature, (std::vector<std::string>{"int", "int", "int"}));
  EXPECT_EQ(add->param_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(add->param_count->first, 2u);
  EXPECT_EQ(add->param_count->second, 2u);
  const method* join = methods.find("join");
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->param_count->second, method::any_count);
  EXPECT_EQ(methods.find("--describe"), nullptr);
}

TEST(WorkerDescribe, TheProgramInheritsNoDescriptorOfTheCaller) {
  // A descriptor the program has open without close-on-exec (a listening
  // socket, say) does not reach the worker program.
  const int fd = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC
  ASSERT_GE(fd, 3);
  const std::string path = "/proc/$$/fd/" + std::to_string(fd);
  const std::string why =
      refusal(sh("test -e " + path + " && { echo 'inherited " + path + "' >&2; exit 5; }; exit 0"));
  ::close(fd);
  EXPECT_EQ(why.find("inherited"), std::string::npos) << why;
}

TEST(WorkerDescribe, RefusesAProgramThatFailsWithItsOwnWords) {
  const std::string why = refusal(sh("echo 'ImportError: no module named nowhere' >&2; exit 3"));
  EXPECT_NE(why.find("exited with status 3"), std::string::npos) << why;
  EXPECT_NE(why.find("ImportError: no module named nowhere"), std::string::npos) << why;
}

TEST(WorkerDescribe, RefusesAProgramThatDoesNotAnswerInTime) {
  const std::string why = refusal(sh("exec sleep 30"), std::chrono::milliseconds(200));
  EXPECT_NE(why.find("did not describe the methods"), std::string::npos) << why;
}

TEST(WorkerDescribe, RefusesWhatIsNotAMethodTable) {
  EXPECT_NE(refusal(sh("echo hello")).find("cannot be read"), std::string::npos);
  // Its first method whole, then one that is not a struct: nothing is added.
  std::string first_then_bad = table;
  first_then_bad.replace(first_then_bad.find("<value><struct><member><name>name</name><value>"
                                             "<string>join"),
                         std::string::npos,
                         "<value><int>1</int></value></data></array>"
                         "</value></param></params></methodResponse>");
  EXPECT_NE(refusal(sh("printf '%s' \"" + first_then_bad + "\"")).find("malformed"),
            std::string::npos);
  EXPECT_NE(refusal({"/nonexistent/worker"}).find("/nonexistent/worker"), std::string::npos);
}

}  // namespace
}  // namespace rapidrpc
