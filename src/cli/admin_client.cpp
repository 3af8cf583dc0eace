#include "cli/admin_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace kumo::cli {
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

AdminAddress parse_admin_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size())
    throw std::invalid_argument("expected HOST:PORT, got \"" + std::string(text) + "\"");
  std::string_view host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string_view port = text.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string_view::npos || port.size() > 5)
    throw std::invalid_argument("bad port in \"" + std::string(text) + "\"");
  return AdminAddress{std::string(host), std::string(port)};
}

AdminAnswer admin_get(const AdminAddress& address, const std::string& target,
                      std::chrono::seconds timeout) {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  http::request<http::empty_body> request(http::verb::get, target, 11);
  request.set(http::field::host, address.host + ":" + address.port);
  request.set(http::field::connection, "close");
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::uint64_t{1} << 30);
  beast::error_code failure;
  const char* step = "resolve";

  // Each step's handler starts the next; the first error (a timeout included) ends it.
  auto fail = [&](const char* where, beast::error_code ec) {
    step = where;
    failure = ec;
  };
  tcp::resolver resolver(io);
  resolver.async_resolve(
      address.host, address.port,
      [&](beast::error_code ec, const tcp::resolver::results_type& results) {
        if (ec) return fail("resolve", ec);
        stream.expires_after(timeout);
        stream.async_connect(results, [&](beast::error_code ec, const tcp::endpoint&) {
          if (ec) return fail("connect to", ec);
          http::async_write(stream, request, [&](beast::error_code ec, std::size_t) {
            if (ec) return fail("send to", ec);
            http::async_read(stream, buffer, parser, [&](beast::error_code ec, std::size_t) {
              if (ec) return fail("read from", ec);
            });
          });
        });
      });
  io.run();
  if (failure)
    throw AdminUnreachable(std::string("cannot ") + step + " " + address.host + ":" + address.port +
                           ": " + failure.message());
  auto response = parser.release();
  return AdminAnswer{response.result_int(), std::move(response.body())};
}

}  // namespace kumo::cli
