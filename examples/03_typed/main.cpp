// Methods that take and return C++ types: described structs, containers,
// optionals, tuples, time points, enums and bytes, converted from and to
// XML-RPC and JSON-RPC values with no code of their own; a coroutine method
// that waits and calls out without holding a thread; and the server on the
// program's own io_context, which main() runs.
//
//   build/bin/example_typed 8080
//   python3 -c "import xmlrpc.client as c; print(c.ServerProxy('http://localhost:8080')
//     .route.length({'name': 'r', 'stops': [{'x': 0, 'y': 0}, {'x': 3, 'y': 4}]}))"
#include <rapidrpc/client.hpp>
#include <rapidrpc/server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace geo {

struct point {
  double x = 0;
  double y = 0;
};
BOOST_DESCRIBE_STRUCT(point, (), (x, y))

enum class unit { metres, feet };
BOOST_DESCRIBE_ENUM(unit, metres, feet)

// A struct nested in a vector, an optional member (it may be left out),
// an enum (its enumerator's name) and a map (a struct of strings).
struct route {
  std::string name;
  std::vector<point> stops;
  std::optional<unit> units;
  std::map<std::string, std::string> tags;
};
BOOST_DESCRIBE_STRUCT(route, (), (name, stops, units, tags))

double length(const route& r) {
  double total = 0;
  for (std::size_t i = 1; i < r.stops.size(); ++i)
    total += std::hypot(r.stops[i].x - r.stops[i - 1].x, r.stops[i].y - r.stops[i - 1].y);
  return r.units == unit::feet ? total * 0.3048 : total;
}

}  // namespace geo

// `self` is this server's own URL, known once it listens.
void add_methods(rapidrpc::server& server, const std::string& self) {
  using clock = std::chrono::system_clock;
  server.add("route.length", geo::length, "The length of a route, in metres.");
  server.add(
      "route.reversed",
      [](geo::route r) {
        std::reverse(r.stops.begin(), r.stops.end());
        r.name += " (reversed)";
        return r;
      },
      "The route with its stops in reverse order.");
  server.add(
      "geo.bounds",
      [](const std::vector<geo::point>& points) {
        if (points.empty())
          throw rapidrpc::fault(rapidrpc::fault_code::invalid_params, "no points");
        std::pair<geo::point, geo::point> box{points[0], points[0]};
        for (const auto& p : points) {
          box.first = {std::min(box.first.x, p.x), std::min(box.first.y, p.y)};
          box.second = {std::max(box.second.x, p.x), std::max(box.second.y, p.y)};
        }
        return box;
      },
      "The lower-left and upper-right corners of the points.");
  server.add(
      "stats.summary",
      [](const std::vector<double>& xs, std::optional<std::int32_t> round_to) {
        std::map<std::string, double> out{{"count", static_cast<double>(xs.size())}};
        double sum = 0;
        for (double x : xs) sum += x;
        out["mean"] = xs.empty() ? 0 : sum / static_cast<double>(xs.size());
        if (round_to) {
          const double scale = std::pow(10.0, *round_to);
          out["mean"] = std::round(out["mean"] * scale) / scale;
        }
        return out;
      },
      "The count and mean of the numbers, the mean rounded to that many places if given.");
  server.add(
      "time.later",
      [](clock::time_point t, std::int64_t seconds) { return t + std::chrono::seconds(seconds); },
      "The time that many seconds after t (UTC).");
  server.add(
      "bytes.reversed",
      [](std::vector<std::uint8_t> b) {
        std::reverse(b.begin(), b.end());
        return b;
      },
      "The bytes in reverse order.");
  server.add(
      "pair.swapped",
      [](std::tuple<std::string, std::int32_t> t) {
        return std::tuple<std::int32_t, std::string>{std::get<1>(t), std::get<0>(t)};
      },
      "[text, number] as [number, text].");
  server.add(
      "rgb.grey", [](std::array<std::int32_t, 3> rgb) { return (rgb[0] + rgb[1] + rgb[2]) / 3; },
      "The grey level of an [r, g, b] colour.");
  // A coroutine: it runs on the server's loop, and while it waits (a timer,
  // a call to a server: here this one) the loop serves other calls.
  server.add(
      "routes.total",
      [&self](std::vector<geo::route> routes,
              std::optional<double> pause) -> boost::asio::awaitable<double> {
        auto loop = co_await boost::asio::this_coro::executor;
        if (pause) {
          boost::asio::steady_timer timer(
              loop, std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::duration<double>(std::clamp(*pause, 0.0, 60.0))));
          co_await timer.async_wait(boost::asio::use_awaitable);
        }
        rapidrpc::client lengths(loop, self);
        double total = 0;
        for (const auto& r : routes)
          total +=
              co_await lengths.async_call<double>("route.length", boost::asio::use_awaitable, r);
        co_return total;
      },
      "The total length of the routes, asked of route.length one by one, after a pause of "
      "that many seconds if given.");
  server.methods().set_param_names("stats.summary", {"numbers", "round_to"});
  server.methods().set_param_names("routes.total", {"routes", "pause"});
}

int main(int argc, char** argv) {
  // The program's own io_context, run by this thread: the server's
  // connections are served on it, beside whatever else the program does.
  boost::asio::io_context io(1);
  rapidrpc::server server(
      io, {.listen = {.host = "localhost",
                      .port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 8080)}});
  std::string self;
  add_methods(server, self);
  server.start();
  self = "http://localhost:" + std::to_string(server.port());
  std::printf("listening on port %u\n",
              static_cast<unsigned>(server.port()));  // port 0: the one chosen
  std::fflush(stdout);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&server](const boost::system::error_code& ec, int) {
    if (!ec) server.stop();
  });
  io.run();       // until the server has stopped: it leaves no work behind
  server.wait();  // its own threads (the pool's)
}
