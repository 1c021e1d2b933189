// Private: what a method is, in words and in a document, from its
// registration: the help text with the shape of its parameters and result
// (system.methodHelp, the API page), and the OpenRPC document of a
// registry (rpc.discover).
#pragma once

#include <rapidrpc/registry.hpp>

#include <string>

namespace rapidrpc::detail {

/// A JSON Schema (as convert.hpp writes them) in a line of text:
/// "{x: double, y?: int}", "[string]", "\"red\" | \"green\"", "int or nil".
std::string schema_text(const value& schema);

/// The method's help, and, where a parameter or the result has a shape its
/// type name does not say (members, elements, names), a paragraph that
/// shows it: "Parameters: r: {x: double, y: double}\nResult: double".
std::string help_with_types(const method& m);

/// The OpenRPC 1.2 document of every method `methods` has but rpc.discover
/// itself (what rpc.discover answers): each method's name, its help as the
/// description, its parameters (named as set_param_names() named them, else
/// param1, param2, ...; those a call may leave out not required) with their
/// JSON Schemas, its result's, and its examples (registry::add_example()).
/// A method that declares no signature has
/// its parameters undescribed: none listed, and a description saying so.
value openrpc_document(const registry& methods);

}  // namespace rapidrpc::detail
