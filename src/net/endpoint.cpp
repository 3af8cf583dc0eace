#include "net/endpoint.h"

#include <boost/asio/io_context.hpp>

namespace kumo::net {

boost::asio::ip::tcp::endpoint resolve_endpoint(const std::string& host, std::uint16_t port) {
  namespace asio = boost::asio;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) return {address, port};
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  const auto results = resolver.resolve(host, std::to_string(port));  // throws if unknown
  return results.begin()->endpoint();
}

}  // namespace kumo::net
