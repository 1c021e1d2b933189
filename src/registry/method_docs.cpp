#include "registry/method_docs.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc::detail {

namespace {

const value* member(const value& v, std::string_view name) {
  const auto* s = v.get_if<structure>();
  if (s == nullptr) return nullptr;
  auto it = s->find(name);
  return it == s->end() ? nullptr : &it->second;
}

std::string_view text_of(const value* v) {
  const auto* s = v != nullptr ? v->get_if<std::string>() : nullptr;
  return s != nullptr ? std::string_view(*s) : std::string_view();
}

bool listed(const value* names, std::string_view name) {
  const auto* a = names != nullptr ? names->get_if<array>() : nullptr;
  if (a == nullptr) return false;
  for (const auto& n : *a)
    if (text_of(&n) == name) return true;
  return false;
}

void append_text(std::string& out, const value& schema, int depth);

void append_object(std::string& out, const value& schema, int depth) {
  const value* properties = member(schema, "properties");
  if (const auto* tag = properties != nullptr ? properties->get_if<structure>() : nullptr;
      tag != nullptr && tag->size() == 1) {
    if (tag->contains("$datetime")) {
      out += "dateTime.iso8601";
      return;
    }
    if (tag->contains("$base64")) {
      out += "base64";
      return;
    }
  }
  if (const auto* members = properties != nullptr ? properties->get_if<structure>() : nullptr) {
    const value* required = member(schema, "required");
    out += '{';
    bool first = true;
    for (const auto& [name, s] : *members) {
      if (!first) out += ", ";
      first = false;
      out += name;
      const bool optional = !listed(required, name);
      out += optional ? "?: " : ": ";
      // An optional member's "or nil" is its '?'.
      const value* one_of = optional ? member(s, "oneOf") : nullptr;
      const auto* choices = one_of != nullptr ? one_of->get_if<array>() : nullptr;
      if (choices != nullptr && choices->size() == 2 &&
          text_of(member((*choices)[1], "type")) == "null")
        append_text(out, (*choices)[0], depth + 1);
      else
        append_text(out, s, depth + 1);
    }
    out += '}';
    return;
  }
  if (const value* each = member(schema, "additionalProperties");
      each != nullptr && each->is<structure>()) {
    out += "{string: ";
    append_text(out, *each, depth + 1);
    out += '}';
    return;
  }
  out += "struct";
}

void append_array(std::string& out, const value& schema, int depth) {
  const value* items = member(schema, "items");
  if (items == nullptr) {
    out += "array";
    return;
  }
  out += '[';
  if (const auto* each = items->get_if<array>()) {  // a tuple: each element its own
    for (std::size_t i = 0; i < each->size(); ++i) {
      if (i != 0) out += ", ";
      append_text(out, (*each)[i], depth + 1);
    }
    out += ']';
    return;
  }
  append_text(out, *items, depth + 1);
  const value* n = member(schema, "minItems");
  const auto* count = n != nullptr ? n->get_if<std::int64_t>() : nullptr;
  if (count != nullptr) out += " x " + std::to_string(*count);
  out += ']';
}

void append_text(std::string& out, const value& schema, int depth) {
  if (depth > 16) {
    out += "...";
    return;
  }
  if (const value* one_of = member(schema, "oneOf")) {
    const auto* choices = one_of->get_if<array>();
    for (std::size_t i = 0; choices != nullptr && i < choices->size(); ++i) {
      if (i != 0) out += " or ";
      append_text(out, (*choices)[i], depth + 1);
    }
    return;
  }
  const std::string_view type = text_of(member(schema, "type"));
  if (type == "integer") {
    const value* most = member(schema, "maximum");
    out += most != nullptr && most->is<std::int32_t>() ? "int" : "i8";
  } else if (type == "number") {
    out += "double";
  } else if (type == "boolean") {
    out += "boolean";
  } else if (type == "null") {
    out += "nil";
  } else if (type == "string") {
    const auto* names = member(schema, "enum");
    const auto* list = names != nullptr ? names->get_if<array>() : nullptr;
    if (list == nullptr) {
      out += "string";
      return;
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (i != 0) out += " | ";
      out += '"';
      out += text_of(&(*list)[i]);
      out += '"';
    }
  } else if (type == "object") {
    append_object(out, schema, depth);
  } else if (type == "array") {
    append_array(out, schema, depth);
  } else {
    out += "any";
  }
}

}  // namespace

std::string schema_text(const value& schema) {
  std::string out;
  append_text(out, schema, 0);
  return out;
}

std::string help_with_types(const method& m) {
  if (m.param_schemas.empty() && m.result_schema.is<nil_t>()) return m.help;
  // Worth saying only where the text says more than the signature's names.
  bool more = false;
  std::vector<std::string> params;
  for (std::size_t i = 0; i < m.param_schemas.size(); ++i) {
    params.push_back(schema_text(m.param_schemas[i]));
    if (i + 1 >= m.signature.size() || params.back() != m.signature[i + 1]) more = true;
  }
  std::string result = schema_text(m.result_schema);
  if (m.signature.empty() || result != m.signature[0]) more = true;
  if (!more) return m.help;
  std::string out = m.help;
  if (!out.empty()) out += "\n\n";
  out += "Parameters: ";
  if (params.empty()) out += "none";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i != 0) out += ", ";
    if (i < m.param_names.size()) out += m.param_names[i] + ": ";
    out += params[i];
  }
  out += "\nResult: " + result;
  return out;
}

namespace {

value described_method(const std::string& name, const method& m) {
  structure out{{"name", name}};
  // The first line of the help is the summary; all of it the description.
  if (!m.help.empty()) {
    out.try_emplace("summary", m.help.substr(0, m.help.find('\n')));
    out.try_emplace("description", m.help);
  }
  array params;
  const bool declared = !m.signature.empty();
  const std::size_t count = declared ? m.signature.size() - 1 : 0;
  const std::size_t least = m.param_count ? m.param_count->first : count;
  const auto param_name = [&m](std::size_t i) {
    return i < m.param_names.size() ? m.param_names[i] : "param" + std::to_string(i + 1);
  };
  for (std::size_t i = 0; i < count; ++i) {
    value schema =
        i < m.param_schemas.size() ? m.param_schemas[i] : schema_of_type_name(m.signature[i + 1]);
    params.emplace_back(
        structure{{"name", param_name(i)}, {"required", i < least}, {"schema", std::move(schema)}});
  }
  if (!m.examples.empty()) {
    array examples;
    for (const auto& e : m.examples) {
      array example_params;
      for (std::size_t i = 0; i < e.params.size(); ++i)
        example_params.emplace_back(structure{{"name", param_name(i)}, {"value", e.params[i]}});
      examples.emplace_back(
          structure{{"name", e.name},
                    {"params", std::move(example_params)},
                    {"result", structure{{"name", "result"}, {"value", e.result}}}});
    }
    out.try_emplace("examples", std::move(examples));
  }
  out.try_emplace("params", std::move(params));
  value result = !m.result_schema.is<nil_t>() ? m.result_schema
                 : declared                   ? schema_of_type_name(m.signature[0])
                                              : structure{};
  out.try_emplace("result", structure{{"name", "result"}, {"schema", std::move(result)}});
  out.try_emplace("paramStructure", m.param_names.empty() ? "by-position" : "either");
  if (!declared) {
    std::string note = "Its parameters are not declared: the method checks them itself.";
    auto it = out.find("description");
    if (it == out.end())
      out.try_emplace("description", std::move(note));
    else
      it->second = it->second.as<std::string>() + "\n\n" + note;
  }
  return out;
}

}  // namespace

value openrpc_document(const registry& methods) {
  array described;
  for (const auto& name : methods.names()) {
    if (name == "rpc.discover") continue;
    found_method m = methods.lookup(name);
    if (m) described.push_back(described_method(name, *m.m));
  }
  return structure{{"openrpc", "1.2.6"},
                   {"info", structure{{"title", "rapidrpc"}, {"version", "1.0.0"}}},
                   {"methods", std::move(described)}};
}

}  // namespace rapidrpc::detail
