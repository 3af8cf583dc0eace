// Where a listener binds: an address or a host name, and a port.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>

namespace kumo::net {

// `host` (an IPv4 or IPv6 address, or a name resolved to its first address) and `port`.
// Throws boost::system::system_error when the name does not resolve.
boost::asio::ip::tcp::endpoint resolve_endpoint(const std::string& host, std::uint16_t port);

}  // namespace kumo::net
