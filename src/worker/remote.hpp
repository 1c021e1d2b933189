// Private: the worker-host protocol, between a front (server_options::
// worker_hosts.listen: a ROUTER socket bound there) and worker hosts
// (server_options::worker_hosts.connect: a DEALER socket connected to it), over
// ZeroMQ. Every message is a command frame, then its fields:
//
//   host -> front   READY  version capacity   connected, or connected again
//   front -> host   CALL   id methodCall      run this call
//   host -> front   REPLY  id methodResponse  its answer
//   both ways       HB                        a heartbeat
//   host -> front   BYE                       no more calls, please: draining
//   front -> host   BYE                       heard: no call follows
//   front -> host   WHO                       unknown here: say READY again
//
// `id` is 8 bytes the front chose; the calls' documents are XML-RPC, as
// between a server and its worker processes (rapidrpc/worker.hpp). Each
// side sends a heartbeat every heartbeat_interval and takes a peer it has
// heard nothing from for peer_timeout as gone (the ZeroMQ guide's
// "Paranoid Pirate" pattern): the front fails the calls that host was
// running, the host connects again (docs/design.md, "Worker hosts").
//
// A front may send a CALL before it reads the host's BYE: a draining host
// reads on and runs such calls until the front's BYE (or a WHO: it does not
// know the host) says none follows, or until peer_timeout has passed
// without one. A front it has heard nothing from for peer_timeout sends no
// call: the host does not wait for its BYE.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

namespace rapidrpc::detail::remote {

inline constexpr std::string_view ready = "READY";
inline constexpr std::string_view call = "CALL";
inline constexpr std::string_view reply = "REPLY";
inline constexpr std::string_view heartbeat = "HB";
inline constexpr std::string_view leaving = "BYE";
inline constexpr std::string_view who = "WHO";
inline constexpr std::string_view version = "1";

inline constexpr std::chrono::milliseconds heartbeat_interval{500};
/// Silence for this long, four heartbeats, means the peer is gone: a dead
/// host stops getting calls within peer_timeout plus one interval.
inline constexpr std::chrono::milliseconds peer_timeout{2000};
/// The most calls at once a host may announce.
inline constexpr std::uint32_t max_capacity = 4096;

/// A message as read, its fields checked. Its views point into the frames.
struct message {
  enum class kind : std::uint8_t {
    ready_message,      ///< `capacity`: 1 to max_capacity, of this version
    call_message,       ///< `id` (8 bytes) and `document`
    reply_message,      ///< `id` (8 bytes) and `document`
    heartbeat_message,  ///< no field
    leaving_message,    ///< no field
    who_message,        ///< no field
    unknown,            ///< anything else: a command not of the protocol, a field
                        ///< missing, extra or malformed, another version
  };
  kind what = kind::unknown;
  std::uint32_t capacity = 0;
  std::string_view id;
  std::string_view document;
};

/// Reads a message's frames, the command first (a front reads what follows
/// the routing identity). Never throws; a message that is not one of the
/// protocol's, in every field, is kind::unknown.
message read(std::span<const std::string_view> frames) noexcept;

}  // namespace rapidrpc::detail::remote
