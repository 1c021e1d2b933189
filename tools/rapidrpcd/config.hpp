// rapidrpcd's config file (--config FILE, docs/operations.md): a TOML file
// whose keys are the long names of the command line's options. The command
// line's option table (CLI11) is the one list of settings: this file walks
// it, so a new option is a new key without a second list to keep in step.
#pragma once

#include <CLI/CLI.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rapidrpcd {

/// The TOML type a setting takes.
enum class value_kind {
  boolean,  ///< a flag: true or false
  integer,  ///< an option of type INT, UINT or FD
  number,   ///< FLOAT: an integer or a float
  string,   ///< anything else
};

/// One option of the command line that is also a key of the config file.
struct setting {
  std::string key;  ///< the long name without "--": "max-body-bytes"
  CLI::Option* option;
  value_kind kind;
  bool repeatable;  ///< an array in the file, repeated on the command line
};

/// The settings of `app`: every option with a long name, option groups
/// included, except the hidden ones (group "") and those named in
/// `not_settings` (long names without "--": actions such as "help" and
/// "config" itself). In the order of `--help`.
std::vector<setting> settings_of(CLI::App& app, const std::set<std::string>& not_settings);

/// A config file that cannot be used. what() is "FILE:LINE:COLUMN: KEY:
/// what was expected, got what" (or "FILE: ..." when there is no line).
class config_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads the TOML file `path` and gives the value of each of its keys to
/// the option of that name unless the command line set it (count() > 0),
/// then runs those options' callbacks: CLI11 converts and checks them and
/// stores them where the options point. Then checks that every option
/// set needs only options set (Option::needs). An empty string or array
/// leaves the option unset (its default). Throws config_error: for a file
/// that cannot be read, a TOML syntax error, an unknown key (with the
/// nearest key, if one is near), a value of the wrong TOML type, and a
/// value CLI11 refuses.
void apply_config_file(const std::string& path, const std::vector<setting>& settings);

/// A setting's value as the daemon runs with it, spelled as TOML.
struct setting_value {
  std::string key;
  std::string toml;         ///< "6677", "\"async-pool\"", "[\"/RPC2\", \"/\"]", "false"
  std::string description;  ///< the option's help text
  std::string group;        ///< the option group's name ("Limits"), or empty
};

/// Every setting's value: the command line's or the file's, else the
/// option's default (as spelled before the daemon resolves it: threads 0
/// stays 0).
std::vector<setting_value> current_values(const std::vector<setting>& settings);

/// `values` as a config file: each key with its help text as a comment
/// above it, the option groups as headings.
std::string to_toml(const std::vector<setting_value>& values);

/// The nearest of `candidates` to `word` (a typo's likely meaning), or
/// empty if none is near.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace rapidrpcd
