// rapidrpc in one include: the value model and its literals, both codecs, the registry, the
// server, both clients, access control and the worker side. Including the
// header a program needs (rapidrpc/server.hpp, rapidrpc/client.hpp, ...)
// compiles faster; this one is for trying things out and for programs that
// use most of it. Library target: rapidrpc::rapidrpc (pkg-config: rapidrpc).
//
// The demo service (rapidrpc/demo.hpp) is not included: it is a library of
// its own, rapidrpc::demo (pkg-config: rapidrpc-demo).
#pragma once

#include <rapidrpc/access.hpp>
#include <rapidrpc/client.hpp>
#include <rapidrpc/client_base.hpp>
#include <rapidrpc/convert.hpp>
#include <rapidrpc/fault.hpp>
#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/limits.hpp>
#include <rapidrpc/literals.hpp>
#include <rapidrpc/localhost.hpp>
#include <rapidrpc/outcome.hpp>
#include <rapidrpc/registry.hpp>
#include <rapidrpc/server.hpp>
#include <rapidrpc/server_options.hpp>
#include <rapidrpc/serving_mode.hpp>
#include <rapidrpc/tls_client.hpp>
#include <rapidrpc/tls_options.hpp>
#include <rapidrpc/value.hpp>
#include <rapidrpc/worker.hpp>
#include <rapidrpc/xmlrpc.hpp>
#include <rapidrpc/zmq_client.hpp>
