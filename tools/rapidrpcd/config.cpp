#include "config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

namespace rapidrpcd {

namespace {

value_kind kind_of(const CLI::Option& opt) {
  if (opt.get_expected_max() == 0) return value_kind::boolean;  // a flag
  // CLI11's type names (INT, UINT, FLOAT, TEXT), with a check's text after
  // a ':'; FD is --listen-fd's own name for an INT.
  const std::string type = opt.get_type_name();
  const std::string base = type.substr(0, type.find(':'));
  if (base == "INT" || base == "UINT" || base == "FD") return value_kind::integer;
  if (base == "FLOAT") return value_kind::number;
  return value_kind::string;
}

std::string kind_name(value_kind kind) {
  switch (kind) {
    case value_kind::boolean:
      return "true or false";
    case value_kind::integer:
      return "an integer";
    case value_kind::number:
      return "a number";
    case value_kind::string:
      break;
  }
  return "a string";
}

std::string kind_plural(value_kind kind) {
  switch (kind) {
    case value_kind::boolean:
      return "booleans";
    case value_kind::integer:
      return "integers";
    case value_kind::number:
      return "numbers";
    case value_kind::string:
      break;
  }
  return "strings";
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + '"';
}

std::string shortest(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

// How an error names a value it got: its TOML type and, for a scalar, the
// value.
std::string describe(const toml::node& node) {
  if (auto s = node.value_exact<std::string>()) return "a string (" + toml_string(*s) + ")";
  if (auto i = node.value_exact<std::int64_t>()) return "an integer (" + std::to_string(*i) + ")";
  if (auto d = node.value_exact<double>()) return "a float (" + shortest(*d) + ")";
  if (auto b = node.value_exact<bool>())
    return std::string("a boolean (") + (*b ? "true" : "false") + ")";
  if (node.is_array()) return "an array";
  if (node.is_table()) return "a table";
  return "a date or time";
}

std::string where(const std::string& path, const toml::source_region& source) {
  return path + ':' + std::to_string(source.begin.line) + ':' + std::to_string(source.begin.column);
}

// One scalar of a setting as CLI11 takes it, or nothing if its TOML type is
// not the setting's.
std::optional<std::string> scalar_text(const toml::node& node, value_kind kind) {
  switch (kind) {
    case value_kind::boolean:
      if (auto b = node.value_exact<bool>()) return *b ? "true" : "false";
      break;
    case value_kind::integer:
      if (auto i = node.value_exact<std::int64_t>()) return std::to_string(*i);
      break;
    case value_kind::number:
      if (auto i = node.value_exact<std::int64_t>()) return std::to_string(*i);
      if (auto d = node.value_exact<double>()) return shortest(*d);
      break;
    case value_kind::string:
      if (auto s = node.value_exact<std::string>()) return *s;
      break;
  }
  return std::nullopt;
}

// A setting's value as CLI11's results; throws config_error for a value of
// the wrong TOML type.
std::vector<std::string> results_of(const toml::node& node, const setting& s,
                                    const std::string& path) {
  std::vector<std::string> out;
  if (!s.repeatable) {
    auto text = scalar_text(node, s.kind);
    if (!text)
      throw config_error(where(path, node.source()) + ": " + s.key + ": expected " +
                         kind_name(s.kind) + ", got " + describe(node));
    if (!text->empty()) out.push_back(std::move(*text));
    return out;
  }
  const toml::array* items = node.as_array();
  if (!items)
    throw config_error(where(path, node.source()) + ": " + s.key + ": expected an array of " +
                       kind_plural(s.kind) + " (" + s.key + " = [...]), got " + describe(node));
  for (const toml::node& item : *items) {
    auto text = scalar_text(item, s.kind);
    if (!text)
      throw config_error(where(path, item.source()) + ": " + s.key + ": expected an array of " +
                         kind_plural(s.kind) + ", got " + describe(item) + " in it");
    out.push_back(std::move(*text));
  }
  return out;
}

// CLI11's message for a value it refused, without the option's name it
// starts with ("--mode: ...").
std::string without_option_name(std::string message, const CLI::Option& opt) {
  const std::string prefix = opt.get_name() + ": ";
  if (message.starts_with(prefix)) message.erase(0, prefix.size());
  return message;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string toml_of(const setting& s) {
  const CLI::Option& opt = *s.option;
  if (s.kind == value_kind::boolean) return opt.count() > 0 && opt.as<bool>() ? "true" : "false";
  std::vector<std::string> values;
  if (opt.count() > 0) {
    values = opt.results();
  } else {
    // The default as CLI11 captured it: "x", or "[a,b]" for a list.
    std::string text = opt.get_default_str();
    if (s.repeatable && text.size() >= 2 && text.front() == '[' && text.back() == ']') {
      for (auto& item : CLI::detail::split(text.substr(1, text.size() - 2), ','))
        if (!item.empty()) values.push_back(item);
    } else if (!text.empty()) {
      values.push_back(text);
    }
  }
  auto spell = [&](const std::string& v) {
    return s.kind == value_kind::string ? toml_string(v) : v;
  };
  if (!s.repeatable)
    return values.empty() ? (s.kind == value_kind::string ? "\"\"" : "0") : spell(values.back());
  std::string out = "[";
  for (const auto& v : values) out += (out.size() > 1 ? ", " : "") + spell(v);
  return out + "]";
}

// `text` as comment lines of at most 79 columns.
std::string comment(const std::string& text) {
  std::string out, line = "#";
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (line.size() > 1 && line.size() + 1 + word.size() > 79) {
      out += line + '\n';
      line = "#";
    }
    line += ' ' + word;
  }
  return out + line + '\n';
}

}  // namespace

std::vector<setting> settings_of(CLI::App& app, const std::set<std::string>& not_settings) {
  std::vector<CLI::Option*> options = app.get_options();
  for (CLI::App* group :
       app.get_subcommands([](const CLI::App* sub) { return sub->get_name().empty(); }))
    for (CLI::Option* opt : group->get_options()) options.push_back(opt);
  std::vector<setting> out;
  for (CLI::Option* opt : options) {
    if (opt->get_group().empty() || opt->get_lnames().empty()) continue;
    const std::string& key = opt->get_lnames().front();
    if (not_settings.contains(key)) continue;
    out.push_back({key, opt, kind_of(*opt), opt->get_items_expected_max() > 1});
  }
  return out;
}

void apply_config_file(const std::string& path, const std::vector<setting>& settings) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw config_error(path + ": cannot read it: " + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw config_error(path + ": cannot read it");

  toml::table table;
  try {
    table = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    throw config_error(where(path, e.source()) + ": " + std::string(e.description()));
  }

  std::vector<std::string> keys;
  keys.reserve(settings.size());
  for (const auto& s : settings) keys.push_back(s.key);
  // The options the file set, with where (for a missing companion).
  std::vector<std::pair<const setting*, toml::source_region>> from_file;
  for (auto&& [key, node] : table) {
    const std::string name(key.str());
    auto found = std::find_if(settings.begin(), settings.end(),
                              [&](const setting& s) { return s.key == name; });
    if (found == settings.end()) {
      std::string message = where(path, key.source()) + ": unknown key " + toml_string(name);
      if (auto near = nearest(name, keys); !near.empty())
        message += " (did you mean " + toml_string(near) + "?)";
      throw config_error(message);
    }
    auto results = results_of(node, *found, path);  // its type is checked even if unused
    CLI::Option& opt = *found->option;
    if (opt.count() > 0 || results.empty()) continue;  // the command line wins
    opt.add_result(std::move(results));
    try {
      opt.run_callback();
    } catch (const CLI::ValidationError& e) {
      throw config_error(where(path, node.source()) + ": " + name + ": " +
                         without_option_name(e.what(), opt));
    } catch (const CLI::ParseError&) {
      std::string got;
      for (const auto& r : opt.results()) got += (got.empty() ? "" : ", ") + r;
      std::string message = where(path, node.source()) + ": " + name + ": ";
      if (node.is_integer())
        message += got + " is out of range (" + opt.get_type_name() + ")";
      else
        message += "expected " + opt.get_type_name() + ", got " + got;
      throw config_error(message);
    }
    from_file.emplace_back(&*found, node.source());
  }
  for (const auto& [s, source] : from_file)
    for (const CLI::Option* needed : s->option->get_needs())
      if (needed->count() == 0)
        throw config_error(where(path, source) + ": " + s->key + " needs " +
                           needed->get_lnames().front() + " too");
}

std::vector<setting_value> current_values(const std::vector<setting>& settings) {
  std::vector<setting_value> out;
  out.reserve(settings.size());
  for (const auto& s : settings)
    out.push_back({s.key, toml_of(s), s.option->get_description(), s.option->get_group()});
  return out;
}

std::string to_toml(const std::vector<setting_value>& values) {
  std::string out;
  std::string group = values.empty() ? "" : values.front().group;
  for (const auto& v : values) {
    if (v.group != group) {
      out += "\n# " + v.group + "\n";
      group = v.group;
    }
    out += '\n' + comment(v.description) + v.key + " = " + v.toml + '\n';
  }
  return out;
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace rapidrpcd
